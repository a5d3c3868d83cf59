#pragma once
// Reader for the safetensors format (8-byte little-endian header length N, N bytes of JSON header,
// then the data section). The file is memory-mapped and the whole header validated at open():
// header length within the file and below a sane bound, well-formed JSON, known dtypes,
// shape × dtype size equal to each byte range, every range inside the data section, no overlaps.
// Every error names the file, the tensor, what was expected and what was found.
//
// Basic usage:
//   auto file = SafeTensorsFile::open("model.safetensors");
//   if (const TensorInfo* info = file.find("model.shared.weight")) { ... info->shape ... }
//   Tensor w = file.load("model.shared.weight");   // float32; F16/BF16 converted
//
// Thread-safety: a SafeTensorsFile is immutable after open(); load() may be called from any thread.
// Tensors returned by load() may view the mapping (F32, aligned) and keep it alive.

#include "core/tensor/tensor.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool, Other };

std::string_view dtypeName(DType dtype);
// Parses a safetensors dtype string; nullopt for a string the format does not define.
std::optional<DType> parseDType(std::string_view name);
int64_t dtypeSize(DType dtype);

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    Shape shape;
    uint64_t begin = 0; // byte offsets relative to the start of the data section
    uint64_t end = 0;
};

class SafeTensorsFile {
public:
    // Largest header accepted (the format's own reference implementation uses 100 MB).
    static constexpr uint64_t kMaxHeaderBytes = 100ull * 1024 * 1024;

    static SafeTensorsFile open(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return m_path; }
    const std::vector<TensorInfo>& tensors() const { return m_tensors; } // in file order
    const TensorInfo* find(std::string_view name) const;
    bool contains(std::string_view name) const { return find(name) != nullptr; }
    const std::map<std::string, std::string>& metadata() const { return m_metadata; }
    uint64_t fileSize() const;

    // The tensor as float32. Throws attnlens::Error if it is absent or its dtype is not F32/F16/BF16.
    Tensor load(std::string_view name) const;
    Tensor load(const TensorInfo& info) const;

private:
    struct Mapping;
    // The whole file, memory-mapped copy-on-write (the descriptor is closed before returning).
    static std::shared_ptr<Mapping> mapFile(const std::filesystem::path& path);
    std::filesystem::path m_path;
    std::shared_ptr<Mapping> m_mapping;
    const unsigned char* m_dataSection = nullptr;
    std::vector<TensorInfo> m_tensors;
    std::map<std::string, size_t, std::less<>> m_index;
    std::map<std::string, std::string> m_metadata;
};

// IEEE half and bfloat16 to float (exact; subnormals, infinities and NaN preserved).
float halfToFloat(uint16_t h);
float bfloat16ToFloat(uint16_t b);
uint16_t floatToHalf(float f); // round-to-nearest-even; used by writers and tests

// Writes a safetensors file (F32, F16 or BF16 per tensor). Used by tools, tests and exports.
struct TensorToWrite {
    std::string name;
    Tensor tensor;
    DType dtype = DType::F32;
};
void writeSafeTensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

} // namespace attnlens
