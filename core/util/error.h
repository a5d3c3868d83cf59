#pragma once
// Error reporting for the core library. Core never calls exit() or abort(): every failure becomes an
// attnlens::Error whose message names the file, tensor or key, what was expected and what was found.
// Front ends catch it in one place (CLI: "error: ...", exit 2; GUI: status line or dialog).

#include <filesystem>
#include <stdexcept>
#include <string>

namespace attnlens {

// A path as messages show it: 'p'.
inline std::string quoted(const std::filesystem::path& p) {
    return "'" + p.string() + "'";
}

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Thrown when a long operation observes its cancel callback returning true.
class Cancelled : public Error {
public:
    Cancelled() : Error("cancelled") {}
};

} // namespace attnlens
