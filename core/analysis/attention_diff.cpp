#include "core/analysis/attention_diff.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlens {

const char* axisMatchName(AxisMatch match) {
    return match == AxisMatch::Position ? "position" : "token";
}

AxisAlignment alignAxis(const std::vector<std::string>& a, int sizeA, const std::vector<std::string>& b,
                        int sizeB) {
    AxisAlignment out;
    const bool labelled = !a.empty() && !b.empty();
    if (!labelled || a == b) {
        if (sizeA != sizeB)
            throw Error("difference: the axes have " + std::to_string(sizeA) + " and " +
                        std::to_string(sizeB) + " entries and no labels to match them by");
        for (int i = 0; i < sizeA; ++i)
            out.pairs.emplace_back(i, i);
        return out;
    }
    // Longest common subsequence of the labels.
    out.how = AxisMatch::Token;
    const size_t n = a.size(), m = b.size();
    std::vector<std::vector<int>> len(n + 1, std::vector<int>(m + 1, 0));
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            len[i][j] = a[i] == b[j] ? len[i + 1][j + 1] + 1 : std::max(len[i + 1][j], len[i][j + 1]);
    size_t i = 0, j = 0;
    while (i < n && j < m) {
        if (a[i] == b[j]) {
            out.pairs.emplace_back(static_cast<int>(i++), static_cast<int>(j++));
        } else if (len[i + 1][j] >= len[i][j + 1]) {
            out.onlyA.push_back(static_cast<int>(i++));
        } else {
            out.onlyB.push_back(static_cast<int>(j++));
        }
    }
    for (; i < n; ++i)
        out.onlyA.push_back(static_cast<int>(i));
    for (; j < m; ++j)
        out.onlyB.push_back(static_cast<int>(j));
    return out;
}

double jensenShannon(const Eigen::Ref<const Eigen::RowVectorXd>& p0,
                     const Eigen::Ref<const Eigen::RowVectorXd>& q0) {
    const double sp = p0.sum(), sq = q0.sum();
    if (!(sp > 0) || !(sq > 0)) return std::numeric_limits<double>::quiet_NaN();
    double js = 0;
    for (Eigen::Index k = 0; k < p0.size(); ++k) {
        const double p = p0(k) / sp, q = q0(k) / sq, m = 0.5 * (p + q);
        if (p > 0) js += 0.5 * p * std::log2(p / m);
        if (q > 0) js += 0.5 * q * std::log2(q / m);
    }
    return std::clamp(js, 0.0, 1.0);
}

AttentionDiff diffAttention(const LabelledMatrix& a, const LabelledMatrix& b) {
    const auto check = [](const LabelledMatrix& x, const char* which) {
        if ((!x.rows.empty() && static_cast<Eigen::Index>(x.rows.size()) != x.values.rows()) ||
            (!x.columns.empty() && static_cast<Eigen::Index>(x.columns.size()) != x.values.cols()))
            throw Error(std::string("difference: the labels of ") + which + " do not match its " +
                        std::to_string(x.values.rows()) + "×" + std::to_string(x.values.cols()) + " matrix");
        if (x.values.size() == 0) throw Error(std::string("difference: ") + which + " is empty");
    };
    check(a, "A");
    check(b, "B");
    AttentionDiff d;
    d.rows = alignAxis(a.rows, static_cast<int>(a.values.rows()), b.rows, static_cast<int>(b.values.rows()));
    d.columns =
        alignAxis(a.columns, static_cast<int>(a.values.cols()), b.columns, static_cast<int>(b.values.cols()));
    const Eigen::Index R = static_cast<Eigen::Index>(d.rows.pairs.size()),
                       C = static_cast<Eigen::Index>(d.columns.pairs.size());
    if (R == 0 || C == 0) throw Error("difference: no row or no column of A matches one of B");
    d.a.resize(R, C);
    d.b.resize(R, C);
    for (Eigen::Index r = 0; r < R; ++r)
        for (Eigen::Index c = 0; c < C; ++c) {
            d.a(r, c) = a.values(d.rows.pairs[size_t(r)].first, d.columns.pairs[size_t(c)].first);
            d.b(r, c) = b.values(d.rows.pairs[size_t(r)].second, d.columns.pairs[size_t(c)].second);
        }
    d.diff = d.a - d.b;
    d.maxAbs = d.diff.cwiseAbs().maxCoeff();
    for (const auto& [ia, ib] : d.rows.pairs)
        if (!a.rows.empty()) d.rowLabels.push_back(a.rows[size_t(ia)]);
    for (const auto& [ia, ib] : d.columns.pairs)
        if (!a.columns.empty()) d.columnLabels.push_back(a.columns[size_t(ia)]);
    const auto named = [](const std::vector<int>& idx, const std::vector<std::string>& labels) {
        std::vector<std::string> out;
        for (int i : idx)
            out.push_back(i < static_cast<int>(labels.size()) ? labels[size_t(i)] : std::to_string(i));
        return out;
    };
    d.rowsOnlyA = named(d.rows.onlyA, a.rows);
    d.rowsOnlyB = named(d.rows.onlyB, b.rows);
    d.columnsOnlyA = named(d.columns.onlyA, a.columns);
    d.columnsOnlyB = named(d.columns.onlyB, b.columns);
    double sum = 0;
    int defined = 0;
    for (Eigen::Index r = 0; r < R; ++r) {
        const double js = jensenShannon(d.a.row(r).cast<double>(), d.b.row(r).cast<double>());
        d.rowJs.push_back(js);
        if (!std::isnan(js)) {
            sum += js;
            ++defined;
        }
    }
    d.meanJs = defined > 0 ? sum / defined : std::numeric_limits<double>::quiet_NaN();
    return d;
}

} // namespace attnlens
