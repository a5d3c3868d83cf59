#pragma once
// NumPy .npy (format 1.0, little-endian float32, C order) and CSV writers for exporting maps and
// attention tensors. Both throw attnlens::Error naming the path when the file cannot be written.

#include "core/tensor/tensor.h"

#include <filesystem>

namespace attnlens {

// Any shape, including rank 0 and rank 1; np.load(path) gives dtype float32 and tensor.shape().
void writeNpy(const std::filesystem::path& path, const Tensor& tensor);
void writeNpy(const std::filesystem::path& path, const float* data, const Shape& shape);

// One line per row, values separated by commas, 9 significant digits (float32 round-trips).
void writeCsv(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values);

// A map as the pages export it: CSV when the path ends in .csv (any case), else .npy [rows, cols].
void writeMatrix(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values);

} // namespace attnlens
