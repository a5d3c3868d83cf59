#pragma once
// The BERT and GPT-2 fixtures of tests/data/text (tools/golden/make_text_fixtures.py) and what the text
// suites compare them with.

#include "core/io/json_file.h"

#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace texttest {

inline const std::filesystem::path kData = std::filesystem::path(ATTNLENS_TEST_DATA) / "text";
constexpr double kTol = 1e-4;

inline double maxDiff(const float* a, const float* b, int64_t n) {
    double worst = 0;
    for (int64_t i = 0; i < n; ++i)
        worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    return worst;
}

inline int argmax(const float* row, int64_t n) {
    return static_cast<int>(std::max_element(row, row + n) - row);
}

// A copy of the folder `source` in `tmp` with config.json's `key` set to `value` (null: removed).
inline std::filesystem::path withConfig(const QTemporaryDir& tmp, const std::filesystem::path& source,
                                        const std::string& key, const attnlens::Json& value) {
    const auto dir =
        std::filesystem::path(tmp.path().toStdString()) / (source.filename().string() + "-" + key);
    std::filesystem::create_directories(dir);
    for (const auto& e : std::filesystem::directory_iterator(source))
        std::filesystem::copy(e.path(), dir / e.path().filename(),
                              std::filesystem::copy_options::overwrite_existing);
    attnlens::Json config = attnlens::readJsonFile(dir / "config.json");
    if (value.is_null())
        config.erase(key);
    else
        config[key] = value;
    std::ofstream(dir / "config.json") << config.dump(1);
    return dir;
}

// The ids of a fixture's first golden case.
inline std::vector<int> firstIds(const std::filesystem::path& dir) {
    return attnlens::readJsonFile(dir / "golden.json")["cases"][0]["ids"].get<std::vector<int>>();
}

} // namespace texttest
