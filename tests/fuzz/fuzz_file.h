#pragma once
// The fuzz input as a file (the readers take paths, as users give them): one per process and name,
// rewritten for every input.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace fuzz {

class TempFile {
public:
    TempFile(const uint8_t* data, size_t size, const std::string& name)
        : m_path(std::filesystem::temp_directory_path() / ("attnlens-fuzz-" + std::to_string(::getpid()) + "-" + name)) {
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

} // namespace fuzz
