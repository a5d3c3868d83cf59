#pragma once
// The safetensors format (8-byte little-endian header length N, N bytes of JSON header, then the data
// section). Read through TensorFile::open (core/io/tensor_file.h), which tells it from PyTorch checkpoints.
// The whole header is validated when the file is opened: header length within the file and below a sane
// bound, well-formed JSON, known dtypes, shape × dtype size equal to each byte range, every range inside the
// data section, no overlaps. Every error names the file, the tensor, what was expected and what was found.

#include "core/io/tensor_file.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnlens {

class MappedFile;

// Largest header accepted (the format's own reference implementation uses 100 MB).
inline constexpr uint64_t kMaxSafeTensorsHeaderBytes = 100ull * 1024 * 1024;

// The tensors of a mapped safetensors file (TensorFile::open calls this).
TensorFile readSafeTensors(const std::filesystem::path& path, std::shared_ptr<MappedFile> mapping);

// Writes a safetensors file (F32, F16 or BF16 per tensor). Used by tools, tests and exports.
struct TensorToWrite {
    std::string name;
    Tensor tensor;
    DType dtype = DType::F32;
};
void writeSafeTensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

} // namespace attnlens
