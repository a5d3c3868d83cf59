#pragma once
// Reader for NumPy .npy files (format versions 1.0 – 3.0) holding little-endian float32 ('<f4') in
// C order — what np.save writes for a float32 array. Anything else (another dtype, Fortran order,
// a truncated file, a header that does not parse) is an attnlens::Error naming the file.
// The writer is export/npy.h.

#include "core/tensor/tensor.h"

#include <filesystem>

namespace attnlens {

// Refuses arrays of more than maxElements values before allocating (default: 1 Gi floats).
Tensor readNpy(const std::filesystem::path& path, int64_t maxElements = int64_t{1} << 30);

} // namespace attnlens
