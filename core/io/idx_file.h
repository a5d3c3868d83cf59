#pragma once
// Reader for the IDX format of (Fashion-)MNIST (optionally gzip-compressed, as Debian's
// dataset-fashion-mnist ships it): big-endian magic 0x0000 0x08 <rank>, rank × uint32 dimensions,
// then unsigned bytes. Only the unsigned-byte type (0x08) is supported.

#include "core/tensor/image.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace attnlens {

struct IdxArray {
    std::vector<uint32_t> dims;
    std::vector<uint8_t> data; // row-major
};

// Reads a .idx or .idx.gz file; throws attnlens::Error naming the file for anything malformed.
// maxBytes bounds the decoded size (the dims are checked before the data is read).
IdxArray readIdxFile(const std::filesystem::path& path, uint64_t maxBytes = 1ull << 30);

// Image i of a rank-3 IDX array [count, rows, cols] as a 1-channel ImageU8.
ImageU8 idxImage(const IdxArray& images, size_t index);

} // namespace attnlens
