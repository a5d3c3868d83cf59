#pragma once
// The fuzz input as a file (the readers take paths, as users give them): one per process and name,
// rewritten for every input.
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace fuzz {

class TempFile {
public:
    TempFile(const uint8_t* data, size_t size, const std::string& name)
        : m_path(std::filesystem::temp_directory_path() /
                 ("attnlens-fuzz-" + std::to_string(::getpid()) + "-" + name)) {
        if (std::FILE* f = std::fopen(m_path.c_str(), "wb")) {
            if (size > 0) std::fwrite(data, 1, size, f);
            std::fclose(f);
        }
    }
    ~TempFile() { std::filesystem::remove(m_path); }
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

// A folder as a user's model folder: one per process, emptied and refilled for every input.
class TempDir {
public:
    explicit TempDir(const std::string& name)
        : m_path(std::filesystem::temp_directory_path() /
                 ("attnlens-fuzz-" + std::to_string(::getpid()) + "-" + name)) {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    const std::filesystem::path& path() const { return m_path; }
    void write(const std::string& name, const uint8_t* data, size_t size) const {
        if (std::FILE* f = std::fopen((m_path / name).c_str(), "wb")) {
            if (size > 0) std::fwrite(data, 1, size, f);
            std::fclose(f);
        }
    }
    // Through stdio, not std::filesystem::copy_file: libFuzzer's timer signal can interrupt the kernel copy
    // that copy_file uses (EINTR), which it reports as an error; fread/fwrite just continue.
    void copy(const std::filesystem::path& from, const std::string& name) const {
        std::FILE* in = std::fopen(from.c_str(), "rb");
        std::FILE* out = std::fopen((m_path / name).c_str(), "wb");
        char buffer[1 << 16];
        while (in && out && !std::feof(in)) {
            const size_t n = std::fread(buffer, 1, sizeof buffer, in);
            if (n > 0) std::fwrite(buffer, 1, n, out);
            if (n == 0 && std::ferror(in)) {
                if (errno != EINTR) break;
                std::clearerr(in); // interrupted: read on
            }
        }
        if (in) std::fclose(in);
        if (out) std::fclose(out);
    }

private:
    std::filesystem::path m_path;
};

} // namespace fuzz
