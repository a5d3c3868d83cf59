#pragma once
// A whole file memory-mapped private and copy-on-write (tensors viewing it may be written without touching
// the file). Shared by the readers of checkpoints; tensors that view the mapping keep it alive.

#include <cstdint>
#include <filesystem>
#include <memory>

namespace attnlens {

class MappedFile {
public:
    // Throws attnlens::Error naming the file if it cannot be opened, is not a regular file or cannot be
    // mapped.
    static std::shared_ptr<MappedFile> map(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const unsigned char* bytes() const { return m_bytes; }
    uint64_t size() const { return m_size; }

private:
    MappedFile() = default;
    unsigned char* m_bytes = nullptr;
    uint64_t m_size = 0;
};

} // namespace attnlens
