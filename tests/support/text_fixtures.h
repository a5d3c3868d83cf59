#pragma once
// The BERT and GPT-2 fixtures of tests/data/text (tools/golden/make_text_fixtures.py) and what the text
// suites compare them with.

#include "core/io/json_file.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
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

// The ids of a fixture's first golden case.
inline std::vector<int> firstIds(const std::filesystem::path& dir) {
    return attnlens::readJsonFile(dir / "golden.json")["cases"][0]["ids"].get<std::vector<int>>();
}

} // namespace texttest
