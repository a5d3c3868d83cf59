#pragma once
// The strongest links of an attention map, for the Lines views (issue 40): each query's `most` largest
// weights at or above `minWeight`, strongest first. A 4 096-token map holds 16 M weights; its Lines view
// draws a few per query, and keeps only these (a few hundred kB per head) instead of the map.
//
//   AttentionLinks l = topLinks(weights, 32, 0.02f);
//   for (int q = 0; q < l.queries(); ++q)
//       for (int i = l.start[q]; i < l.end(q, 8); ++i)   // its 8 strongest
//           draw(q, l.key[i], l.weight[i]);

#include "core/tensor/tensor.h"

#include <vector>

namespace attnlens {

struct AttentionLinks {
    std::vector<int> start;    // [queries + 1]: query q's links are [start[q], start[q + 1])
    std::vector<int> key;      // per link, the key column
    std::vector<float> weight; // per link, the weight; within a query, largest first (ties: lower key first)
    int queries() const { return start.empty() ? 0 : static_cast<int>(start.size()) - 1; }
    // The end of query q's `most` strongest links (`most` ≤ 0: all of them).
    int end(int q, int most = 0) const;
};

// weights [n, m]. `most` ≤ 0 keeps every weight ≥ minWeight. NaN weights are never links.
AttentionLinks topLinks(const RowMatrix& weights, int most, float minWeight);

} // namespace attnlens
