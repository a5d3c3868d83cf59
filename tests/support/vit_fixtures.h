#pragma once
// Helpers for the vision tests: fixture paths (tests/data/vit, made by tools/golden/make_vit_fixtures.py)
// and tensor comparison. Header-only; included by tests/fast and tests/model suites.

#include "core/io/safetensors.h"
#include "core/tensor/tensor.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

namespace vittest {

inline std::filesystem::path dataDir() {
    return std::filesystem::path(ATTNLENS_TEST_DATA) / "vit";
}
inline std::filesystem::path modelDir(const std::string& name) {
    return dataDir() / name;
}
inline std::filesystem::path imagePath(const std::string& name) {
    return dataDir() / "images" / name;
}

inline attnlens::Tensor golden(const std::string& model, const std::string& image,
                               const std::string& tensor) {
    return attnlens::TensorFile::open(modelDir(model) / ("golden_" + image + ".safetensors")).load(tensor);
}

// Largest |a − b|; shapes must agree (checked first, so a size bug is reported as such).
inline double maxAbsDiff(const float* a, const float* b, int64_t n) {
    double worst = 0;
    for (int64_t i = 0; i < n; ++i)
        worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    return worst;
}

} // namespace vittest

#define VIT_COMPARE_SHAPE(a, b)                                                                              \
    QCOMPARE(attnlens::shapeToString((a).shape()), attnlens::shapeToString((b).shape()))

namespace vittest {

// Shapes equal, then every value within `tol` (the largest difference logged under `what`).
inline void compareWithin(const attnlens::Tensor& got, const attnlens::Tensor& want, double tol,
                          const std::string& what) {
    VIT_COMPARE_SHAPE(got, want);
    const double diff = maxAbsDiff(got.data(), want.data(), want.numel());
    qInfo("%s: max abs diff %.3g", what.c_str(), diff);
    QVERIFY2(diff <= tol, what.c_str());
}

} // namespace vittest
