#pragma once
// TensorFile: the tensors of one checkpoint file, whatever its format — safetensors, or a PyTorch
// `torch.save` state dict (pytorch_model.bin: the zip format of PyTorch >= 1.6 and the legacy format
// before it; core/io/torch_checkpoint.h). The format is told by the file's content, not its name.
// The file is memory-mapped; every tensor is validated against its storage at open(), so load() never
// reads outside the file. Tensors may share a storage (tied embeddings) and may be strided views.
//
//   auto file = TensorFile::open("model.safetensors");          // or pytorch_model.bin
//   if (const TensorInfo* info = file.find("model.shared.weight")) { ... info->shape ... }
//   Tensor w = file.load("model.shared.weight");   // float32; F16/BF16 converted
//
// Thread-safety: a TensorFile is immutable after open(); load() may be called from any thread.
// Tensors returned by load() may view the mapping (contiguous F32, aligned) and keep it alive.

#include "core/io/dtype.h"
#include "core/tensor/ggml_quants.h"
#include "core/tensor/half_matrix.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    GgmlType ggml = GgmlType::F32; // dtype Ggml: the block type (contiguous; rows of whole blocks)
    Shape shape;
    std::vector<int64_t> strides; // in elements, one per dimension; empty: contiguous, row-major
    size_t storage = 0;           // which of the file's storages holds the elements
    uint64_t begin = 0;           // byte offset of the first element in its storage
    uint64_t end = 0;             // one past the last byte any element occupies

    bool contiguous() const;
};

class TensorFile {
public:
    enum class Format { SafeTensors, TorchZip, TorchLegacy, Gguf }; // Gguf: GgufFile::toTensorFile

    // A run of bytes tensors point into (safetensors: the data section; PyTorch: one storage).
    struct Storage {
        const unsigned char* bytes = nullptr;
        uint64_t size = 0;
        std::shared_ptr<void> owner; // keeps `bytes` alive
    };

    // Opens a safetensors file or a PyTorch checkpoint, told apart by their first bytes (a file named
    // *.index.json: the sharded checkpoint it indexes, as openSharded). Throws
    // attnlens::Error naming the file and the problem for anything else, or a file that is malformed.
    static TensorFile open(const std::filesystem::path& path);
    // A checkpoint saved in shards (save_pretrained's `model.safetensors.index.json` or
    // `pytorch_model.bin.index.json`): every shard the index's weight_map names, opened and seen as one file
    // (tensors keep their shard's storage). Throws attnlens::Error naming the index and the problem: not an
    // index, a missing shard, a tensor the index places in a shard that does not hold it, a name twice.
    static TensorFile openSharded(const std::filesystem::path& indexPath);

    // For the format readers: validates every tensor against its storage (dtype, shape × strides inside the
    // storage, no overflow) and indexes them by name. Throws attnlens::Error naming `path` and the tensor.
    TensorFile(std::filesystem::path path, Format format, uint64_t fileSize, std::vector<Storage> storages,
               std::vector<TensorInfo> tensors, std::map<std::string, std::string> metadata = {});
    TensorFile() = default;

    const std::filesystem::path& path() const { return m_path; }
    Format format() const { return m_format; }
    static std::string_view formatName(Format format);
    const std::vector<TensorInfo>& tensors() const { return m_tensors; } // in file order
    const TensorInfo* find(std::string_view name) const;
    bool contains(std::string_view name) const { return find(name) != nullptr; }
    const std::map<std::string, std::string>& metadata() const { return m_metadata; }
    uint64_t fileSize() const { return m_fileSize; }

    // The tensor as a contiguous float32 tensor. Throws attnlens::Error if it is absent or its dtype is not
    // F32/F16/BF16.
    Tensor load(std::string_view name) const;
    Tensor load(const TensorInfo& info) const;
    // An F16 / BF16 tensor as stored, as a [numel / last axis, last axis] matrix: a view on the mapping when
    // it is contiguous (and 2-byte aligned), else a contiguous copy in 16 bits; a GGML block tensor as a view
    // on its blocks. Throws attnlens::Error for another dtype or a rank-0 tensor.
    HalfMatrix loadHalf(const TensorInfo& info) const;
    // Drops the resident pages of the file's mapping that lie wholly inside [data, data + bytes) (madvise
    // MADV_DONTNEED): for a weight the model has copied into another layout (packed convolutions), so that
    // the copy is not held twice. The pages come back from the file if the memory is read again. Does
    // nothing for memory outside the file's storages (a weight converted to float32 on the heap).
    void releasePages(const void* data, size_t bytes) const;
    // The same for every storage of the file, whole.
    void releasePages() const;

private:
    std::filesystem::path m_path;
    Format m_format = Format::SafeTensors;
    uint64_t m_fileSize = 0;
    std::vector<Storage> m_storages;
    std::vector<TensorInfo> m_tensors;
    std::map<std::string, size_t, std::less<>> m_index;
    std::map<std::string, std::string> m_metadata;
};

} // namespace attnlens
