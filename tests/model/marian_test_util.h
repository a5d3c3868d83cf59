#pragma once
// Shared helpers for the Marian model tests: fixture folders and golden files written by
// tools/golden/make_marian_fixtures.py (independent PyTorch reference).

#include "core/io/json_file.h"
#include "core/io/safetensors.h"
#include "core/tensor/tensor.h"

#include <QTest>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace marian_test {

inline std::filesystem::path dataDir() {
    return std::filesystem::path(ATTNLENS_TEST_DATA) / "marian";
}
inline std::filesystem::path variantDir(const std::string& v) {
    return dataDir() / v;
}
// A scratch folder under the temporary directory, named for this process: the suite and its *_avx2 twin run
// at once under `ctest -j` and must not remove each other's copies.
inline std::filesystem::path scratchDir(const std::string& name) {
    return std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
}
inline attnlens::Json golden(const std::string& v) {
    return attnlens::readJsonFile(dataDir() / "golden" / (v + ".json"));
}
inline attnlens::TensorFile goldenTensors(const std::string& v) {
    return attnlens::TensorFile::open(dataDir() / "golden" / (v + ".safetensors"));
}

inline std::vector<int> ids(const attnlens::Json& j) {
    return j.get<std::vector<int>>();
}

// Largest absolute difference; shapes must match exactly (checked first, so an empty tensor can't pass).
inline float maxAbsDiff(const attnlens::Tensor& a, const attnlens::Tensor& b) {
    if (a.shape() != b.shape()) {
        qWarning() << "shape" << attnlens::shapeToString(a.shape()).c_str() << "vs"
                   << attnlens::shapeToString(b.shape()).c_str();
        return INFINITY;
    }
    if (a.numel() == 0) return INFINITY;
    float m = 0.0f;
    for (int64_t i = 0; i < a.numel(); ++i)
        m = std::max(m, std::abs(a.data()[i] - b.data()[i]));
    return m;
}

} // namespace marian_test
