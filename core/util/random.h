#pragma once
// A seeded standard-normal generator whose sequence is the same on every platform and compiler
// (std::normal_distribution is not specified bit-for-bit): mt19937_64 bits → two uniforms in
// (0, 1] with 53-bit resolution → Box–Muller in double → float.

#include "core/tensor/tensor.h"

#include <cstdint>
#include <random>

namespace attnlens {

class NormalRng {
public:
    explicit NormalRng(uint64_t seed) : m_engine(seed) {}
    float next();
    Tensor tensor(const Shape& shape); // filled in row-major order

private:
    std::mt19937_64 m_engine;
    bool m_haveSpare = false;
    double m_spare = 0.0;
};

} // namespace attnlens
