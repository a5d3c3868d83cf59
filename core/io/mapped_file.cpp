#include "core/io/mapped_file.h"

#include "core/util/error.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace attnlens {

namespace {

// A file descriptor closed when it goes out of scope.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : m_fd(fd) {}
    ~FileDescriptor() {
        if (m_fd >= 0) ::close(m_fd);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

} // namespace

std::shared_ptr<MappedFile> MappedFile::map(const std::filesystem::path& path) {
    const std::string where = "'" + path.string() + "'";
    const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) throw Error(where + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw Error(where + ": not a regular file");
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_size = static_cast<uint64_t>(st.st_size);
    if (file->m_size == 0) return file; // mmap refuses length 0; an empty file has no bytes to view
    void* address =
        mmap(nullptr, static_cast<size_t>(file->m_size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
    if (address == MAP_FAILED) throw Error(where + ": cannot memory-map (" + std::strerror(errno) + ")");
    file->m_bytes = static_cast<unsigned char*>(address);
    return file;
}

MappedFile::~MappedFile() {
    if (m_bytes) munmap(m_bytes, static_cast<size_t>(m_size));
}

} // namespace attnlens
