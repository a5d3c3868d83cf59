#include "core/analysis/top_links.h"

#include <algorithm>

namespace attnlens {

int AttentionLinks::end(int q, int most) const {
    const int last = start[static_cast<size_t>(q) + 1];
    return most > 0 ? std::min(last, start[static_cast<size_t>(q)] + most) : last;
}

AttentionLinks topLinks(const RowMatrix& weights, int most, float minWeight) {
    AttentionLinks out;
    const auto rows = static_cast<size_t>(weights.rows());
    out.start.reserve(rows + 1);
    out.start.push_back(0);
    std::vector<int> row;
    row.reserve(static_cast<size_t>(weights.cols()));
    for (Eigen::Index q = 0; q < weights.rows(); ++q) {
        row.clear();
        const float* w = weights.row(q).data();
        for (int k = 0; k < static_cast<int>(weights.cols()); ++k)
            if (w[k] >= minWeight) row.push_back(k); // false for NaN
        const auto stronger = [w](int a, int b) { return w[a] > w[b] || (w[a] == w[b] && a < b); };
        const size_t kept = most > 0 ? std::min(row.size(), static_cast<size_t>(most)) : row.size();
        std::partial_sort(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(kept), row.end(), stronger);
        for (size_t i = 0; i < kept; ++i) {
            out.key.push_back(row[i]);
            out.weight.push_back(w[row[i]]);
        }
        out.start.push_back(static_cast<int>(out.key.size()));
    }
    return out;
}

} // namespace attnlens
