#pragma once
// PyTorch checkpoints (`torch.save(state_dict)`, as in pytorch_model.bin / diffusion_pytorch_model.bin), read
// without running their pickle (core/io/pickle.h) and without copying their tensors:
//   * the zip format (PyTorch >= 1.6): <archive>/data.pkl, the storages as <archive>/data/<key>, stored
//     uncompressed and so mapped in place (minizip finds where each entry's bytes begin);
//   * the legacy format (before 1.6, or _use_new_zipfile_serialization=False): pickled magic number,
//     protocol version and system info, the state dict, the list of storage keys, then each storage as an
//     8-byte element count and its bytes.
// Tensors keep their storage offsets and strides; tensors sharing one storage (tied embeddings) stay shared.
// The state dict must map names to tensors (a {"state_dict": {...}} or {"model": {...}} wrapper is opened).
// TensorFile::open (core/io/tensor_file.h) calls these after looking at the file's first bytes.

#include "core/io/tensor_file.h"

#include <filesystem>
#include <memory>

namespace attnlens {

class MappedFile;

TensorFile readTorchZip(const std::filesystem::path& path, std::shared_ptr<MappedFile> mapping);
TensorFile readTorchLegacy(const std::filesystem::path& path, std::shared_ptr<MappedFile> mapping);

} // namespace attnlens
