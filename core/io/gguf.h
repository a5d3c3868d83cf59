#pragma once
// GGUF, llama.cpp's model file (versions 2 and 3): "GGUF", a version, the tensor and metadata counts, the
// metadata (typed key/values: integers, floats, booleans, strings and arrays of them — the architecture, its
// hyper-parameters, the tokenizer's vocabulary, merges and chat template), the tensor table (name, shape with
// the fastest axis first, GGML type, offset) and, aligned to general.alignment (32 by default), the data.
// The file is mapped; everything is validated when it is opened — counts, string and array lengths within
// the file, at most 4 axes, types ggml defines, each tensor's bytes (its type's blocks) inside the data and
// aligned, no two tensors overlapping — so reading a tensor never leaves the file. Errors name the file, the
// key or tensor, what was expected and what was found.
//
//   GgufFile f = GgufFile::open("qwen2.5-0.5b-instruct-q4_k_m.gguf");
//   f.string("general.architecture")                 // "qwen2"
//   f.integer("qwen2.block_count")                   // 24
//   const GgufTensor* t = f.find("blk.0.attn_q.weight");   // t->shape {896, 896} (rows, columns), t->type
//   f.dequantizeRows(*t, 0, 2, out);                 // rows 0 and 1 as float32
//
// Thread-safety: immutable after open(); reads may run on any thread.

#include "core/io/tensor_file.h"
#include "core/tensor/ggml_quants.h"
#include "core/tensor/tensor.h"

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

class MappedFile;

// GGUF's metadata value types (gguf.h's numbering).
enum class GgufValueType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};
std::string_view ggufValueTypeName(GgufValueType type);

// One metadata value. Scalars: integers in `integer` (unsigned 64-bit ones above INT64_MAX refused), floats
// in `number`, booleans as 0/1 in `integer`, strings in `text`. Arrays: `elementType` and the elements in
// `strings` (string arrays) or `numbers` (every numeric or boolean array, as double); arrays of arrays are
// counted (`count`) and skipped.
struct GgufValue {
    GgufValueType type = GgufValueType::U32;
    int64_t integer = 0;
    double number = 0;
    std::string text;
    GgufValueType elementType = GgufValueType::U32;
    uint64_t count = 0; // array elements
    std::vector<std::string> strings;
    std::vector<double> numbers;
    bool isInteger() const;
    bool isFloat() const { return type == GgufValueType::F32 || type == GgufValueType::F64; }
    std::string describe() const; // "u32 24", "string 'qwen2'", "array of 151936 strings", for inspect
};

struct GgufTensor {
    std::string name;
    GgmlType type = GgmlType::F32;
    Shape shape;          // row-major, slowest axis first (GGUF stores ne[0], the fastest, first)
    uint64_t offset = 0;  // of its first byte in the file
    uint64_t bytes = 0;   // its blocks' size
    int64_t rows() const; // every axis but the last
    int64_t columns() const { return shape.empty() ? 1 : shape.back(); }
};

class GgufFile {
public:
    // Maps and validates the file. Throws attnlens::Error naming the file and the problem (not GGUF, version
    // 1 or an unknown one, a count, length or offset that runs past the file, a type ggml does not define,
    // two tensors with one name).
    static GgufFile open(const std::filesystem::path& path);
    // Whether the file starts with GGUF's magic (never throws).
    static bool isGguf(const std::filesystem::path& path);
    // The string-valued metadata alone (general.architecture, tokenizer.ggml.model, …), arrays walked past
    // without keeping them and no tensor read: a quick look at a file for a listing. Throws as open().
    static std::map<std::string, std::string, std::less<>> peekStrings(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return m_path; }
    uint32_t version() const { return m_version; }
    uint64_t alignment() const { return m_alignment; }
    uint64_t fileSize() const;
    const std::map<std::string, GgufValue, std::less<>>& metadata() const { return m_metadata; }
    const GgufValue* value(std::string_view key) const;
    // Typed reads; nullopt when the key is absent. A key of another type throws attnlens::Error naming it.
    std::optional<int64_t> integer(std::string_view key) const;
    std::optional<double> number(std::string_view key) const; // integers too
    std::optional<std::string> string(std::string_view key) const;
    std::optional<bool> boolean(std::string_view key) const;
    // A model dimension: a positive integer up to 2^30. Throws attnlens::Error naming the key when it is
    // missing (no fallback given), an array (differs per layer), or anything else.
    int positive(std::string_view key, std::optional<int> fallback = std::nullopt) const;
    // A number of transformer blocks: positive and at most kMaxModelLayers (core/io/model_limits.h).
    int layerCount(std::string_view key) const;

    const std::vector<GgufTensor>& tensors() const { return m_tensors; }
    const GgufTensor* find(std::string_view name) const;
    const unsigned char* data(const GgufTensor& tensor) const;
    // Rows [row, row + count) of the tensor seen as [rows(), columns()], as float32 into out (count · columns
    // floats). Throws attnlens::Error for rows outside it or a type that does not dequantize (its name said).
    void dequantizeRows(const GgufTensor& tensor, int64_t row, int64_t count, float* out) const;
    // The whole tensor as float32 in its shape.
    Tensor load(const GgufTensor& tensor) const;
    // The tensors as a TensorFile (format Gguf, the mapping shared) under the names `rename` gives them (an
    // empty name leaves the tensor out): F32, F16 and BF16 as such, every block type as DType::Ggml
    // (TensorFile::load decodes it; loadHalf keeps it as stored, a weight computed row by row).
    TensorFile toTensorFile(const std::function<std::string(const std::string&)>& rename) const;

private:
    std::filesystem::path m_path;
    std::shared_ptr<MappedFile> m_file;
    uint32_t m_version = 3;
    uint64_t m_alignment = 32;
    std::map<std::string, GgufValue, std::less<>> m_metadata;
    std::vector<GgufTensor> m_tensors;
    std::map<std::string, size_t, std::less<>> m_index;
    friend class GgufParser;
};

} // namespace attnlens
