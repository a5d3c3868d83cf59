#pragma once
// Sizes computed from the numbers in a user's file: a * b and a + b into `out`, or false on overflow.

#include <cstdint>

namespace attnlens {

inline bool mulSize(uint64_t a, uint64_t b, uint64_t& out) {
    return !__builtin_mul_overflow(a, b, &out);
}
inline bool addSize(uint64_t a, uint64_t b, uint64_t& out) {
    return !__builtin_add_overflow(a, b, &out);
}

} // namespace attnlens
