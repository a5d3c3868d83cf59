#pragma once
// Difference maps (issue 22, M12): two attention matrices — two sentences, two steps, two models, two layers
// — compared cell by cell. Their axes are matched first: by position when both carry the same tokens (or
// neither has labels and the sizes agree), else by token, as a longest common subsequence (order kept; "the"
// of A meets the first "the" of B still unmatched). Tokens without a partner are listed, never silently
// dropped.
//
//   AttentionDiff d = diffAttention({a, rowsA, colsA}, {b, rowsB, colsB});
//   d.diff = d.a − d.b over the matched rows × columns;  d.maxAbs;  d.rowJs[i], d.meanJs
//
// Jensen–Shannon divergence of a matched row: both rows renormalised over the matched columns, in bits (0 =
// the same distribution, 1 = disjoint); NaN for a row with no weight on the matched columns (left out of the
// mean). Thread-safety: pure functions.

#include "core/tensor/tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace attnlens {

struct LabelledMatrix {
    RowMatrix values;                       // [rows, cols]
    std::vector<std::string> rows, columns; // labels (may be empty: unlabelled axes)
};

enum class AxisMatch { Position, Token };
const char* axisMatchName(AxisMatch match); // "position", "token"

struct AxisAlignment {
    AxisMatch how = AxisMatch::Position;
    std::vector<std::pair<int, int>> pairs; // (index in A, index in B), increasing in both
    std::vector<int> onlyA, onlyB;          // indices without a partner
};
// Throws attnlens::Error when two unlabelled axes differ in size (nothing to match them by).
AxisAlignment alignAxis(const std::vector<std::string>& a, int sizeA, const std::vector<std::string>& b,
                        int sizeB);

struct AttentionDiff {
    AxisAlignment rows, columns;
    RowMatrix a, b, diff; // [matched rows, matched columns]; diff = a − b
    std::vector<std::string> rowLabels,
        columnLabels; // A's labels of the matched rows / columns (may be empty)
    // The labels of what could not be matched (indices as text for unlabelled axes).
    std::vector<std::string> rowsOnlyA, rowsOnlyB, columnsOnlyA, columnsOnlyB;
    double maxAbs = 0;
    std::vector<double> rowJs; // per matched row
    double meanJs = 0;         // over the rows where it is defined
};

// Throws attnlens::Error when the label counts do not match the matrices or nothing can be matched.
AttentionDiff diffAttention(const LabelledMatrix& a, const LabelledMatrix& b);

// Jensen–Shannon divergence in bits of two non-negative vectors, each normalised to sum 1 (NaN if either sums
// to 0).
double jensenShannon(const Eigen::Ref<const Eigen::RowVectorXd>& p,
                     const Eigen::Ref<const Eigen::RowVectorXd>& q);

} // namespace attnlens
