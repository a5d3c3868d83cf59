// The shared transformer block (issue 37) and the pieces Llama-style decoders need, against independent
// formulations: grouped key/value heads equal the same attention with each key/value head repeated
// (transformers' repeat_kv); the rotary embedding equals pairwise rotation by p·θ and makes q·k depend on the
// distance only; RMSNorm and the gated MLP by their formulas; a causal block through its KV cache one token
// at a time equals the full pass; the neuron view reproduces a grouped, rotated layer's weights; a long
// input's MLP in blocks of rows, and cancel polled inside a layer.

#include "core/analysis/neuron_view.h"
#include "core/layers/rotary.h"
#include "core/layers/transformer_block.h"
#include "core/util/error.h"

#include <QTest>

#include <atomic>
#include <cmath>
#include <tuple>

using namespace attnlens;

namespace {

Tensor randomTensor(Shape shape, float scale = 0.3f) {
    Tensor t(std::move(shape));
    t.matrix() = RowMatrix::Random(t.matrix().rows(), t.matrix().cols()) * scale;
    return t;
}

LinearWeights linear(int64_t out, int64_t in, bool bias = true) {
    return {randomTensor({out, in}), bias ? randomTensor({out}) : Tensor()};
}

// The k/v projection with each of the kvHeads heads repeated heads/kvHeads times, in order.
LinearWeights repeated(const LinearWeights& w, int heads, int kvHeads, int64_t hd) {
    const int64_t in = w.weight.dim(1);
    Tensor weight({heads * hd, in}), bias({heads * hd});
    for (int h = 0; h < heads; ++h) {
        const int g = h / (heads / kvHeads);
        weight.matrix().middleRows(h * hd, hd) = w.weight.matrix().middleRows(g * hd, hd);
        for (int64_t i = 0; i < hd; ++i)
            bias.data()[h * hd + i] = w.bias.data()[g * hd + i];
    }
    return {weight, bias};
}

double maxDiff(const RowMatrix& a, const RowMatrix& b) {
    return (a - b).cwiseAbs().maxCoeff();
}

} // namespace

class TestTransformerBlock : public QObject {
    Q_OBJECT
private slots:
    void groupedKeyValueHeadsRepeatKv() {
        const int heads = 4, kvHeads = 2, hd = 4, d = heads * hd;
        const LinearWeights q = linear(d, d), k = linear(kvHeads * hd, d), v = linear(kvHeads * hd, d),
                            o = linear(d, d);
        const MultiHeadAttention gqa(q, k, v, o, heads, QueryScale::Scores, std::nullopt, kvHeads);
        const MultiHeadAttention full(q, repeated(k, heads, kvHeads, hd), repeated(v, heads, kvHeads, hd), o,
                                      heads, QueryScale::Scores);
        QCOMPARE(gqa.kvHeads(), kvHeads);
        const RowMatrix x = RowMatrix::Random(7, d);
        Tensor pg, pf;
        const RowMatrix mask = causalMask(7, 0);
        const RowMatrix yg = gqa.forward(x, x, &mask, &pg), yf = full.forward(x, x, &mask, &pf);
        QVERIFY(maxDiff(yg, yf) < 1e-6);
        QVERIFY((pg.matrix() - pf.matrix()).cwiseAbs().maxCoeff() < 1e-6);
        QVERIFY_THROWS_EXCEPTION(Error,
                                 MultiHeadAttention(q, k, v, o, heads, QueryScale::Scores, std::nullopt, 3));
        QVERIFY_THROWS_EXCEPTION(Error,
                                 MultiHeadAttention(q, k, v, o, heads, QueryScale::Scores, std::nullopt, 4));
    }

    // The causal path scores only the keys a query sees, in blocks of 256 rows: it equals the masked
    // attention (causalMask: after a cached prefix, with a sliding window, grouped heads) over more than one
    // block.
    void causalBlocksEqualMaskedAttention() {
        const int heads = 4, kvHeads = 2, hd = 8, d = heads * hd;
        const MultiHeadAttention a(linear(d, d), linear(kvHeads * hd, d), linear(kvHeads * hd, d),
                                   linear(d, d), heads, QueryScale::Scores, std::nullopt, kvHeads);
        for (auto [n, past, window] : {std::tuple{600, 0, 0}, {300, 213, 0}, {530, 40, 97}, {1, 700, 0}}) {
            RowMatrix q, k, v;
            const RowMatrix x = RowMatrix::Random(past + n, d);
            a.projectQuery(x.bottomRows(n), q);
            a.projectKeyValue(x, k, v);
            const RowMatrix mask = causalMask(n, past, window);
            Tensor pc, pm;
            const RowMatrix yc = a.attendHeadsCausal(q, k, v, past, window, &pc);
            const RowMatrix ym = a.attendHeads(q, k, v, &mask, &pm);
            QVERIFY(maxDiff(yc, ym) < 1e-6);
            QVERIFY((pc.matrix() - pm.matrix()).cwiseAbs().maxCoeff() < 1e-6);
            for (int64_t i = 0; i < n; ++i) // what a query cannot see weighs exactly 0
                for (int64_t j = 0; j < past + n; ++j)
                    if (mask(i, j) != 0.0f) QCOMPARE(pc.data()[(1 * n + i) * (past + n) + j], 0.0f);
        }
    }

    void rotaryRotatesPairs() {
        const int heads = 2, hd = 8;
        const RotaryEmbedding rope{hd, hd, 10000.0f};
        const RowMatrix x = RowMatrix::Random(3, heads * hd);
        for (int64_t first : {0, 5, 4093}) {
            RowMatrix y = x;
            rope.apply(y, heads, first);
            for (int r = 0; r < 3; ++r)
                for (int h = 0; h < heads; ++h)
                    for (int i = 0; i < hd / 2; ++i) {
                        // (x_i, x_{i+d/2}) rotated by p·θ_i, θ_i = base^(−2i/d), the angle rounded to float32
                        // as transformers computes it.
                        const float theta = 1.0f / std::pow(10000.0f, float(2 * i) / float(hd));
                        const double angle = static_cast<float>(first + r) * theta;
                        const double a = x(r, h * hd + i), b = x(r, h * hd + i + hd / 2);
                        QVERIFY(std::abs(y(r, h * hd + i) - (a * std::cos(angle) - b * std::sin(angle))) <
                                1e-5);
                        QVERIFY(std::abs(y(r, h * hd + i + hd / 2) -
                                         (b * std::cos(angle) + a * std::sin(angle))) < 1e-5);
                    }
        }
        // q·k depends on the distance only.
        const RowMatrix q = RowMatrix::Random(1, hd), k = RowMatrix::Random(1, hd);
        auto dot = [&](int64_t pq, int64_t pk) {
            RowMatrix a = q, b = k;
            rope.apply(a, 1, pq);
            rope.apply(b, 1, pk);
            return a.row(0).dot(b.row(0));
        };
        QVERIFY(std::abs(dot(7, 3) - dot(27, 23)) < 1e-4);
        QVERIFY(std::abs(dot(7, 3) - dot(7, 4)) > 1e-4);
        // Partial rotary: the dimensions past rotaryDim stay.
        const RotaryEmbedding partial{hd, 4, 10000.0f};
        RowMatrix y = x;
        partial.apply(y, heads, 9);
        QCOMPARE(y.block(0, 4, 3, 4), x.block(0, 4, 3, 4));
        QVERIFY_THROWS_EXCEPTION(Error, (RotaryEmbedding{hd, 3, 1e4f}.apply(y, heads, 0)));
        QVERIFY_THROWS_EXCEPTION(Error, rope.apply(y, 3, 0));
    }

    void rmsNormAndGatedMlp() {
        const int d = 6, f = 10;
        Norm rms{Norm::Kind::RmsNorm, randomTensor({d}), {}, 1e-6f};
        const RowMatrix x = RowMatrix::Random(4, d);
        RowMatrix y = x;
        rms.apply(y);
        for (int r = 0; r < 4; ++r) {
            const double ms = x.row(r).cast<double>().squaredNorm() / d;
            for (int c = 0; c < d; ++c)
                QVERIFY(std::abs(y(r, c) - x(r, c) / std::sqrt(ms + 1e-6) * rms.weight.data()[c]) < 1e-5);
        }
        rms.unitOffset = true; // Gemma: · (1 + w)
        y = x;
        rms.apply(y);
        const double ms0 = x.row(0).cast<double>().squaredNorm() / d;
        QVERIFY(std::abs(y(0, 2) - x(0, 2) / std::sqrt(ms0 + 1e-6) * (1.0 + rms.weight.data()[2])) < 1e-5);

        const Mlp gated{Mlp::Kind::Gated, linear(f, d, false), linear(f, d, false), linear(d, f, false),
                        Activation::Silu};
        const RowMatrix g = x * gated.in.weight.matrix().transpose(),
                        u = x * gated.up.weight.matrix().transpose();
        const RowMatrix h = (g.array() / (1.0f + (-g.array()).exp()) * u.array()).matrix();
        QVERIFY(maxDiff(gated.forward(x), h * gated.out.weight.matrix().transpose()) < 1e-5);
    }

    // A long input's MLP runs in blocks of rows (the same values as the formula over all rows at once), and a
    // cancel reaches inside a layer: between the MLP's blocks, before each attention head, between sublayers.
    void longInputsCancelInsideALayer() {
        const int heads = 4, hd = 4, d = heads * hd, f = 24;
        const int64_t n = 2 * Mlp::kRowsPerPiece + 37;
        const Mlp gated{Mlp::Kind::Gated, linear(f, d, false), linear(f, d, false), linear(d, f, false),
                        Activation::Silu};
        const RowMatrix x = RowMatrix::Random(n, d);
        const RowMatrix g = x * gated.in.weight.matrix().transpose(),
                        u = x * gated.up.weight.matrix().transpose();
        const RowMatrix h = (g.array() / (1.0f + (-g.array()).exp()) * u.array()).matrix();
        QVERIFY(maxDiff(gated.forward(x), h * gated.out.weight.matrix().transpose()) < 1e-5);

        std::atomic<int> polls{0};
        int stopAt = 1 << 30;
        Callbacks cb;
        cb.cancelled = [&] { return ++polls > stopAt; };
        QVERIFY(maxDiff(gated.forward(x, &cb), gated.forward(x)) == 0.0);
        QCOMPARE(polls.load(), 3); // before each of the 3 blocks
        polls = 0, stopAt = 1;
        QVERIFY_THROWS_EXCEPTION(Cancelled, gated.forward(x, &cb)); // stopped before its second block

        TransformerBlock block;
        block.placement = TransformerBlock::Placement::Pre;
        block.causal = true;
        block.attentionNorm = {Norm::Kind::RmsNorm, randomTensor({d}, 1.0f), {}, 1e-6f};
        block.mlpNorm = {Norm::Kind::RmsNorm, randomTensor({d}, 1.0f), {}, 1e-6f};
        block.attention = MultiHeadAttention(linear(d, d, false), linear(d, d, false), linear(d, d, false),
                                             linear(d, d, false), heads, QueryScale::Scores);
        block.mlp = gated;
        RowMatrix once = x;
        block.forward(once, {});
        polls = 0, stopAt = 1 << 30;
        BlockRun run;
        run.callbacks = &cb;
        RowMatrix watched = x;
        block.forward(watched, run);
        QVERIFY(maxDiff(watched, once) == 0.0);
        // after the projections, each head, after the attention sublayer, each MLP block
        QCOMPARE(polls.load(), 1 + heads + 1 + 3);
        for (int k : {0, 2, heads + 1, heads + 3}) { // in the projections, the heads, the sublayers, the MLP
            polls = 0, stopAt = k;
            RowMatrix y = x;
            QVERIFY_THROWS_EXCEPTION(Cancelled, block.forward(y, run));
        }
    }

    // A Llama-shaped block: pre-RMSNorm, grouped heads, rotary, SwiGLU, causal — one token at a time through
    // the cache equals the whole sequence at once; the neuron view reproduces its weights.
    void cachedDecodingEqualsTheFullPass() {
        const int heads = 4, kvHeads = 2, hd = 8, d = heads * hd, f = 24, n = 6;
        TransformerBlock block;
        block.placement = TransformerBlock::Placement::Pre;
        block.causal = true;
        block.attentionNorm = {Norm::Kind::RmsNorm, randomTensor({d}, 1.0f), {}, 1e-6f};
        block.mlpNorm = {Norm::Kind::RmsNorm, randomTensor({d}, 1.0f), {}, 1e-6f};
        block.attention = MultiHeadAttention(linear(d, d, false), linear(kvHeads * hd, d, false),
                                             linear(kvHeads * hd, d, false), linear(d, d, false), heads,
                                             QueryScale::Scores, std::nullopt, kvHeads);
        block.rotary = RotaryEmbedding{hd, hd, 10000.0f};
        block.mlp = {Mlp::Kind::Gated, linear(f, d, false), linear(f, d, false), linear(d, f, false),
                     Activation::Silu};
        const RowMatrix x = RowMatrix::Random(n, d);

        RowMatrix full = x;
        Tensor probs;
        AttentionInputs inputs;
        BlockRun all;
        all.probs = &probs;
        all.probe = &inputs;
        block.forward(full, all);

        KvCache cache;
        for (int i = 0; i < n; ++i) {
            RowMatrix one = x.row(i);
            Tensor p;
            BlockRun step;
            step.cache = &cache;
            step.probs = &p;
            block.forward(one, step);
            QVERIFY(maxDiff(one, full.row(i)) < 1e-5);
            for (int h = 0; h < heads; ++h)
                for (int j = 0; j <= i; ++j)
                    QVERIFY(std::abs(p.at({h, 0, j}) - probs.at({h, i, j})) < 1e-5);
        }
        for (int h = 0; h < heads; ++h) // causal: nothing above the diagonal
            QCOMPARE(probs.slice2d({h})
                         .triangularView<Eigen::StrictlyUpper>()
                         .toDenseMatrix()
                         .cwiseAbs()
                         .maxCoeff(),
                     0.0f);

        const ProjectedAttention projected = projectAttention(inputs);
        QCOMPARE(projected.kvHeads, kvHeads);
        for (int h = 0; h < heads; ++h)
            for (int q = 0; q < n; ++q)
                for (int k = 0; k < n; ++k) {
                    const NeuronTerms t = neuronTerms(projected, h, q, k);
                    QVERIFY(std::abs(t.weight - probs.at({h, q, k})) < 1e-5);
                    QVERIFY(std::abs(neuronTerms(inputs, h, q, k).weight - t.weight) < 1e-6);
                }
    }
};

QTEST_GUILESS_MAIN(TestTransformerBlock)
#include "test_transformer_block.moc"
