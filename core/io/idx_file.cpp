#include "core/io/idx_file.h"

#include "core/util/error.h"

#include <zlib.h>

#include <algorithm>
#include <memory>

namespace attnlens {

IdxArray readIdxFile(const std::filesystem::path& path, uint64_t maxBytes) {
    const std::string name = path.string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error("'" + name + "': file not found");
    // gzopen reads plain files transparently as well.
    std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(name.c_str(), "rb"), &gzclose);
    if (!file) throw Error("'" + name + "': cannot open");
    auto readExactly = [&](void* dst, size_t n, const char* what) {
        auto* p = static_cast<uint8_t*>(dst);
        while (n > 0) {
            const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
            const int got = gzread(file.get(), p, chunk);
            if (got <= 0) throw Error("'" + name + "': truncated or corrupt IDX file (" + what + ")");
            p += got;
            n -= static_cast<size_t>(got);
        }
    };
    uint8_t magic[4];
    readExactly(magic, 4, "header");
    if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] < 1 || magic[3] > 4)
        throw Error("'" + name + "': not an unsigned-byte IDX file (bad magic number)");
    IdxArray out;
    uint64_t total = 1;
    for (int i = 0; i < magic[3]; ++i) {
        uint8_t b[4];
        readExactly(b, 4, "dimensions");
        const uint32_t d = (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | b[3];
        out.dims.push_back(d);
        total *= d;
        if (total > maxBytes) throw Error("'" + name + "': IDX array too large");
    }
    out.data.resize(total);
    readExactly(out.data.data(), out.data.size(), "data");
    return out;
}

ImageU8 idxImage(const IdxArray& images, size_t index) {
    if (images.dims.size() != 3) throw Error("IDX images: expected a [count, rows, cols] array");
    if (index >= images.dims[0]) throw Error("IDX images: index " + std::to_string(index) + " out of range");
    const int rows = static_cast<int>(images.dims[1]), cols = static_cast<int>(images.dims[2]);
    ImageU8 image(cols, rows, 1);
    const size_t n = static_cast<size_t>(rows) * cols;
    std::copy_n(images.data.begin() + static_cast<std::ptrdiff_t>(index * n), n, image.pixels.begin());
    return image;
}

} // namespace attnlens
