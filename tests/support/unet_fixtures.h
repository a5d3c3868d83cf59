#pragma once
// Helpers for the diffusion tests: fixture paths (tests/data/unet, made by
// tools/golden/make_unet_fixtures.py from the independent PyTorch reference) and their goldens.
// Header-only.

#include "core/io/json_file.h"
#include "core/io/safetensors.h"
#include "core/tensor/tensor.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>

namespace unettest {

inline std::filesystem::path dataDir() {
    return std::filesystem::path(ATTNLENS_TEST_DATA) / "unet";
}
inline std::filesystem::path fixture(const std::string& name) {
    return dataDir() / name;
}

// The golden file of a fixture and its "golden" metadata (JSON).
struct Golden {
    attnlens::TensorFile file;
    attnlens::Json meta;
};
inline Golden golden(const std::filesystem::path& path) {
    auto file = attnlens::TensorFile::open(path);
    attnlens::Json meta = attnlens::Json::parse(file.metadata().at("golden"));
    return {std::move(file), std::move(meta)};
}

// A copy of the bare-head8 fixture in `dir`/`name` with its config.json changed by `edit` (bad folders).
inline std::filesystem::path editedCopy(const std::filesystem::path& dir, const std::string& name,
                                        const std::function<void(attnlens::Json&)>& edit) {
    const auto dst = dir / name;
    std::filesystem::copy(fixture("bare-head8"), dst, std::filesystem::copy_options::recursive);
    attnlens::Json cfg = attnlens::readJsonFile(dst / "config.json");
    edit(cfg);
    attnlens::writeJsonFile(dst / "config.json", cfg, 1);
    return dst;
}

inline double maxAbsDiff(const attnlens::Tensor& a, const attnlens::Tensor& b) {
    if (a.numel() != b.numel()) return INFINITY;
    double worst = 0;
    for (int64_t i = 0; i < a.numel(); ++i)
        worst = std::max(worst, std::abs(double(a.data()[i]) - double(b.data()[i])));
    return worst;
}

} // namespace unettest
