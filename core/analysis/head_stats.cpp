#include "core/analysis/head_stats.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attnlens {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string shapeText(int64_t a, int64_t b) {
    return std::to_string(a) + " × " + std::to_string(b);
}

void checkPositions(const std::vector<std::array<float, 2>>& positions, int64_t expected, const char* what) {
    if (!positions.empty() && static_cast<int64_t>(positions.size()) != expected)
        throw Error(std::string("head statistics: ") + what + " positions: " +
                    std::to_string(positions.size()) + " given for " + std::to_string(expected));
}

float distanceBetween(const std::array<float, 2>& a, const std::array<float, 2>& b) {
    return std::hypot(a[0] - b[0], a[1] - b[1]);
}

} // namespace

std::string_view headStatisticId(HeadStatistic statistic) {
    switch (statistic) {
    case HeadStatistic::Entropy:
        return "entropy";
    case HeadStatistic::Distance:
        return "distance";
    case HeadStatistic::Sink:
        return "sink";
    case HeadStatistic::Delimiter:
        return "delimiter";
    case HeadStatistic::Local:
        return "local";
    case HeadStatistic::Diagonal:
        return "diagonal";
    case HeadStatistic::Previous:
        return "previous";
    case HeadStatistic::Alignment:
        return "alignment";
    }
    return "entropy";
}

std::optional<HeadStatistic> parseHeadStatistic(std::string_view name) {
    for (HeadStatistic s : kAllHeadStatistics)
        if (headStatisticId(s) == name) return s;
    return std::nullopt;
}

const RowMatrix& HeadStats::get(HeadStatistic statistic) const {
    switch (statistic) {
    case HeadStatistic::Entropy:
        return entropy;
    case HeadStatistic::Distance:
        return distance;
    case HeadStatistic::Sink:
        return sink;
    case HeadStatistic::Delimiter:
        return delimiter;
    case HeadStatistic::Local:
        return local;
    case HeadStatistic::Diagonal:
        return diagonal;
    case HeadStatistic::Previous:
        return previous;
    case HeadStatistic::Alignment:
        return alignment;
    }
    return entropy;
}

RowMatrix& HeadStats::get(HeadStatistic statistic) {
    return const_cast<RowMatrix&>(static_cast<const HeadStats*>(this)->get(statistic));
}

namespace {
HeadStats measureOnDemand(const AttentionBlock& b, int64_t Q, int64_t K, const HeadStatsOptions& o,
                          const std::function<void(int)>& done);
} // namespace

HeadStats captureHeadStats(const AttentionCapture& capture, AttentionKind kind,
                           const std::vector<std::vector<int>>& alignment, const Callbacks* callbacks) {
    const std::vector<const AttentionBlock*> blocks = capture.blocksOf(kind);
    if (blocks.empty())
        throw Error("the run kept no " + std::string(attentionKindId(kind)) + " attention to measure");
    int64_t heads = 0, total = 0, measured = 0;
    for (const AttentionBlock* b : blocks) {
        heads = std::max(heads, b->heads());
        total += b->heads();
    }
    HeadStats out;
    const auto L = static_cast<Eigen::Index>(blocks.size());
    for (HeadStatistic st : kAllHeadStatistics)
        out.get(st) = RowMatrix::Constant(L, static_cast<Eigen::Index>(heads), kNaN);
    for (Eigen::Index l = 0; l < L; ++l) {
        const AttentionBlock& b = *blocks[size_t(l)];
        const AttentionAxis& q = capture.axes.at(size_t(b.queryAxis));
        const AttentionAxis& k = capture.axes.at(size_t(b.keyAxis));
        HeadStatsOptions o;
        o.queryPositions = q.points;
        o.keyPositions = k.points;
        o.sinkKeys = k.sinks;
        o.delimiterKeys = k.delimiters;
        o.hasSinks = k.hasSinks;
        o.selfAttention = b.selfAttention();
        if (!o.selfAttention) o.alignment = alignment;
        HeadStats s;
        if (b.onDemand()) {
            s = measureOnDemand(b, q.size(), k.size(), o, [&](int) {
                if (!callbacks) return;
                callbacks->checkCancel();
                ++measured;
                callbacks->report(double(measured) / double(total),
                                  "measuring heads: " + std::to_string(measured) + " of " +
                                      std::to_string(total));
            });
        } else {
            const Tensor& w = b.weights;
            s = computeHeadStats(w.reshaped({1, w.dim(0), w.dim(1), w.dim(2)}), o);
        }
        for (HeadStatistic st : kAllHeadStatistics)
            out.get(st).row(l).head(b.heads()) = s.get(st).row(0);
        out.rows = std::max(out.rows, s.rows);
        out.alignedRows = std::max(out.alignedRows, s.alignedRows);
    }
    return out;
}

namespace {

// The rows measured, the sink keys and the query–key distances (NaN where either has no position), after the
// options are checked against a [Q, K] attention.
struct HeadStatsPlan {
    std::vector<int> rows, sinks, delimiters;
    RowMatrix dist;
    bool local = false; // the local share applies (self-attention over the index)
};

HeadStatsPlan planHeadStats(int64_t Q, int64_t K, const HeadStatsOptions& o) {
    if (Q == 0 || K == 0) throw Error("head statistics: empty attention (" + shapeText(Q, K) + ")");
    checkPositions(o.queryPositions, Q, "query");
    checkPositions(o.keyPositions, K, "key");
    if (o.queryPositions.empty() != o.keyPositions.empty())
        throw Error("head statistics: give both query and key positions, or neither");
    if (o.selfAttention && Q != K)
        throw Error("head statistics: self-attention needs a square matrix, got " + shapeText(Q, K));
    if (!o.alignment.empty() && static_cast<int64_t>(o.alignment.size()) != Q)
        throw Error("head statistics: alignment for " + std::to_string(o.alignment.size()) +
                    " rows, attention has " + std::to_string(Q));
    HeadStatsPlan plan;
    plan.sinks = !o.hasSinks ? std::vector<int>{} : o.sinkKeys.empty() ? std::vector<int>{0} : o.sinkKeys;
    for (int k : plan.sinks)
        if (k < 0 || k >= K)
            throw Error("head statistics: sink key " + std::to_string(k) + " out of 0.." +
                        std::to_string(K - 1));
    plan.delimiters = o.hasSinks ? o.delimiterKeys : std::vector<int>{};
    for (int k : plan.delimiters)
        if (k < 0 || k >= K)
            throw Error("head statistics: delimiter key " + std::to_string(k) + " out of 0.." +
                        std::to_string(K - 1));
    plan.local = o.selfAttention && o.queryPositions.empty() && o.localWindow >= 0;
    for (const auto& keys : o.alignment)
        for (int k : keys)
            if (k < 0 || k >= K)
                throw Error("head statistics: aligned key " + std::to_string(k) + " out of range");
    plan.rows = o.queryRows;
    if (plan.rows.empty())
        for (int q = 0; q < Q; ++q)
            plan.rows.push_back(q);
    for (int q : plan.rows)
        if (q < 0 || q >= Q) throw Error("head statistics: query row " + std::to_string(q) + " out of range");
    plan.dist.resize(Q, K);
    for (int64_t q = 0; q < Q; ++q)
        for (int64_t k = 0; k < K; ++k) {
            if (o.queryPositions.empty()) {
                plan.dist(q, k) = std::abs(static_cast<float>(q - k));
            } else {
                const auto& pq = o.queryPositions[static_cast<size_t>(q)];
                const auto& pk = o.keyPositions[static_cast<size_t>(k)];
                plan.dist(q, k) = std::isnan(pq[0]) || std::isnan(pk[0]) ? kNaN : distanceBetween(pq, pk);
            }
        }
    return plan;
}

// One head's [Q, K] weights → its statistics at (l, h) of `s`.
void measureHead(const ConstMatrixMap& a, const HeadStatsPlan& plan, const HeadStatsOptions& o, HeadStats& s,
                 int64_t l, int64_t h) {
    double entropy = 0, distance = 0, sink = 0, delimiter = 0, local = 0, diagonal = 0, previous = 0,
           aligned = 0;
    int distanceRows = 0, previousRows = 0;
    for (int q : plan.rows) {
        const auto row = a.row(q);
        double e = 0, dSum = 0, dWeight = 0;
        int valid = 0;
        for (int64_t k = 0; k < a.cols(); ++k) {
            const double p = row(k);
            if (p > 0) {
                e -= p * std::log(p);
                ++valid;
            }
            if (!std::isnan(plan.dist(q, k))) {
                dSum += p * plan.dist(q, k);
                dWeight += p;
            }
        }
        entropy += valid > 1 ? e / std::log(static_cast<double>(valid)) : 0.0;
        if (dWeight > 0) {
            distance += dSum / dWeight;
            ++distanceRows;
        }
        for (int k : plan.sinks)
            sink += row(k);
        for (int k : plan.delimiters)
            delimiter += row(k);
        if (plan.local)
            for (int64_t k = std::max<int64_t>(0, q - o.localWindow);
                 k <= std::min<int64_t>(a.cols() - 1, q + o.localWindow); ++k)
                local += row(k);
        if (o.selfAttention) {
            diagonal += row(q);
            if (q >= 1) {
                previous += row(q - 1);
                ++previousRows;
            }
        }
        if (!o.alignment.empty() && !o.alignment[static_cast<size_t>(q)].empty()) {
            Eigen::Index best = 0;
            row.maxCoeff(&best);
            const auto& keys = o.alignment[static_cast<size_t>(q)];
            if (std::find(keys.begin(), keys.end(), static_cast<int>(best)) != keys.end()) aligned += 1;
        }
    }
    const double n = static_cast<double>(plan.rows.size());
    s.entropy(l, h) = static_cast<float>(entropy / n);
    if (o.hasSinks) {
        s.sink(l, h) = static_cast<float>(sink / n);
        s.delimiter(l, h) = static_cast<float>(delimiter / n);
    }
    if (plan.local) s.local(l, h) = static_cast<float>(local / n);
    if (distanceRows > 0) s.distance(l, h) = static_cast<float>(distance / distanceRows);
    if (o.selfAttention) {
        s.diagonal(l, h) = static_cast<float>(diagonal / n);
        if (previousRows > 0) s.previous(l, h) = static_cast<float>(previous / previousRows);
    }
    if (s.alignedRows > 0) s.alignment(l, h) = static_cast<float>(aligned / s.alignedRows);
}

} // namespace

namespace {

// One block's statistics [1, H], its maps made one at a time into one scratch matrix.
HeadStats measureOnDemand(const AttentionBlock& b, int64_t Q, int64_t K, const HeadStatsOptions& o,
                          const std::function<void(int)>& done) {
    const HeadStatsPlan plan = planHeadStats(Q, K, o);
    HeadStats s;
    for (HeadStatistic st : kAllHeadStatistics)
        s.get(st) = RowMatrix::Constant(1, b.heads(), kNaN);
    s.rows = static_cast<int>(plan.rows.size());
    for (int q : plan.rows)
        if (!o.alignment.empty() && !o.alignment[static_cast<size_t>(q)].empty()) ++s.alignedRows;
    RowMatrix map(Q, K);
    for (int h = 0; h < b.heads(); ++h) {
        done(h);
        b.headInto(h, map.data());
        measureHead(ConstMatrixMap(map.data(), Q, K), plan, o, s, 0, h);
    }
    return s;
}

} // namespace

HeadStats computeHeadStats(const Tensor& attentions, const HeadStatsOptions& o) {
    if (attentions.rank() != 4)
        throw Error("head statistics: attentions must be [layers, heads, queries, keys], got rank " +
                    std::to_string(attentions.rank()));
    const int64_t L = attentions.dim(0), H = attentions.dim(1);
    const HeadStatsPlan plan = planHeadStats(attentions.dim(2), attentions.dim(3), o);
    HeadStats s;
    for (HeadStatistic st : kAllHeadStatistics)
        s.get(st) = RowMatrix::Constant(L, H, kNaN);
    s.rows = static_cast<int>(plan.rows.size());
    for (int q : plan.rows)
        if (!o.alignment.empty() && !o.alignment[static_cast<size_t>(q)].empty()) ++s.alignedRows;
    for (int64_t l = 0; l < L; ++l)
        for (int64_t h = 0; h < H; ++h)
            measureHead(attentions.slice2d({l, h}), plan, o, s, l, h);
    return s;
}

void HeadStatsBatch::add(const HeadStats& stats) {
    if (m_inputs == 0) {
        for (size_t i = 0; i < m_sum.size(); ++i) {
            m_sum[i] = RowMatrix::Zero(stats.layers(), stats.heads());
            m_weight[i] = RowMatrix::Zero(stats.layers(), stats.heads());
        }
    } else if (stats.layers() != m_sum[0].rows() || stats.heads() != m_sum[0].cols()) {
        throw Error("head statistics: an input with " + shapeText(stats.layers(), stats.heads()) +
                    " layers × heads in a batch of " + shapeText(m_sum[0].rows(), m_sum[0].cols()));
    }
    for (size_t i = 0; i < m_sum.size(); ++i) {
        const HeadStatistic st = kAllHeadStatistics[i];
        const float w = static_cast<float>(st == HeadStatistic::Alignment ? stats.alignedRows : stats.rows);
        const RowMatrix& v = stats.get(st);
        for (Eigen::Index r = 0; r < v.rows(); ++r)
            for (Eigen::Index c = 0; c < v.cols(); ++c)
                if (!std::isnan(v(r, c)) && w > 0) {
                    m_sum[i](r, c) += w * v(r, c);
                    m_weight[i](r, c) += w;
                }
    }
    m_rows += stats.rows;
    m_alignedRows += stats.alignedRows;
    ++m_inputs;
}

HeadStats HeadStatsBatch::mean() const {
    if (m_inputs == 0) throw Error("head statistics: an empty batch");
    HeadStats s;
    for (size_t i = 0; i < m_sum.size(); ++i)
        s.get(kAllHeadStatistics[i]) =
            (m_weight[i].array() > 0).select(m_sum[i].array() / m_weight[i].array(), kNaN).matrix();
    s.rows = m_rows;
    s.alignedRows = m_alignedRows;
    return s;
}

} // namespace attnlens
