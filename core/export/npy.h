#pragma once
// NumPy .npy (format 1.0, little-endian float32, C order) and CSV writers for exporting maps and
// attention tensors. Both throw attnlens::Error naming the path when the file cannot be written.

#include "core/tensor/tensor.h"

#include <filesystem>
#include <string>
#include <vector>

namespace attnlens {

// Any shape, including rank 0 and rank 1; np.load(path) gives dtype float32 and tensor.shape().
void writeNpy(const std::filesystem::path& path, const Tensor& tensor);
void writeNpy(const std::filesystem::path& path, const float* data, const Shape& shape);

// One line per row, values separated by commas, 9 significant digits (float32 round-trips).
void writeCsv(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values);

// A labelled table: a header line `corner,col0,col1,…` and each row led by its name (quoted where needed).
// Row and column names must match the shape.
void writeLabelledCsv(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values,
                      const std::string& corner, const std::vector<std::string>& rowNames,
                      const std::vector<std::string>& columnNames);

// A map as the pages export it: .npy [rows, cols], or for a path ending in .csv (any case) a labelled CSV
// whose header names the columns by index and whose rows start with their index ("row\col,0,1,…").
void writeMatrix(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values);

} // namespace attnlens
