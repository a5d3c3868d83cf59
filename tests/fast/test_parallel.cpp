// Intra-op threads (core/util/parallel.h): parallelFor covers every index once in contiguous chunks, runs
// serially inside another region and rethrows a chunk's exception; the thread setting clamps and reads
// $ATTNLENS_THREADS. Every kernel that shares its work out gives at 2 and 3 threads what it gives at one —
// general products split either way (strided, Bᵀ, accumulating), packed weights, a linear layer in 16
// bits (the streaming rows and the widened blocks), attention over heads with its capture (ablated heads,
// a mask, the causal rule, grouped key/value heads), value norms, Winograd and im2col convolutions, group
// norm, layer and RMS norms and activations. Eigen may block a split product differently, so "the same"
// is within float32 rounding (1e-5 relative), not bit for bit.

#include "core/io/dtype.h"
#include "core/layers/multi_head_attention.h"
#include "core/layers/transformer_block.h"
#include "core/ops/conv.h"
#include "core/ops/gemm.h"
#include "core/ops/half_linear.h"
#include "core/ops/nn.h"
#include "core/util/parallel.h"

#include <QTest>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <random>
#include <stdexcept>
#include <vector>

using namespace attnlens;

namespace {

RowMatrix randomMatrix(int64_t rows, int64_t cols, unsigned seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    RowMatrix m(rows, cols);
    for (int64_t i = 0; i < m.size(); ++i)
        m.data()[i] = normal(rng);
    return m;
}

Tensor randomTensor(Shape shape, unsigned seed, float scale = 1.0f) {
    Tensor t(shape);
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    for (int64_t i = 0; i < t.numel(); ++i)
        t.data()[i] = normal(rng);
    return t;
}

// max |a − b| / (1 + max |a|)
double relativeGap(const float* a, const float* b, int64_t n) {
    double gap = 0.0, top = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        gap = std::max(gap, double(std::abs(a[i] - b[i])));
        top = std::max(top, double(std::abs(a[i])));
    }
    return gap / (1.0 + top);
}

// f() at one thread against f() at 2 and 3 threads, where it must share its work out (a team region runs);
// f returns the values to compare.
void sameOnThreads(const char* what, const std::function<std::vector<float>()>& f) {
    setComputeThreads(1);
    const int64_t regions = teamRegionsRun();
    const std::vector<float> one = f();
    QVERIFY2(teamRegionsRun() == regions, what); // one thread: no team
    QVERIFY2(!one.empty(), what);
    for (int threads : {2, 3}) {
        setComputeThreads(threads);
        const int64_t before = teamRegionsRun();
        const std::vector<float> many = f();
        setComputeThreads(1);
        if (parallelBuild())
            QVERIFY2(teamRegionsRun() > before,
                     qPrintable(QStringLiteral("%1 stayed on one thread").arg(what)));
        QCOMPARE(many.size(), one.size());
        const double gap = relativeGap(one.data(), many.data(), int64_t(one.size()));
        QVERIFY2(
            gap <= 1e-5,
            qPrintable(QStringLiteral("%1 at %2 threads: relative gap %3").arg(what).arg(threads).arg(gap)));
    }
}

std::vector<float> values(const RowMatrix& m) {
    return {m.data(), m.data() + m.size()};
}

LinearWeights linearLayer(int64_t out, int64_t in, unsigned seed) {
    LinearWeights l;
    l.weight = randomTensor({out, in}, seed, 0.05f);
    l.bias = randomTensor({out}, seed + 1, 0.05f);
    return l;
}

} // namespace

class TestParallel : public QObject {
    Q_OBJECT

private slots:
    void cleanup() { setComputeThreads(1); }

    void settingClampsAndDefaults() {
        QVERIFY(physicalCores() >= 1);
        setComputeThreads(0);
        QCOMPARE(computeThreads(), 1);
        setComputeThreads(100000);
        QCOMPARE(computeThreads(), kMaxComputeThreads);
        setComputeThreads(3);
        QCOMPARE(computeThreads(), 3);
        if (!parallelBuild()) QSKIP("this build computes on one thread");
        qputenv("ATTNLENS_THREADS", "3");
        QCOMPARE(defaultComputeThreads(), 3);
        for (const char* bad : {"0", "x", "2x", "-1", "100000", ""}) {
            qputenv("ATTNLENS_THREADS", bad);
            QCOMPARE(defaultComputeThreads(), std::min(physicalCores(), 16));
        }
        qunsetenv("ATTNLENS_THREADS");
        QCOMPARE(defaultComputeThreads(), std::min(physicalCores(), 16));
    }

    void parallelForCoversEachIndexOnce() {
        for (int threads : {1, 2, 3, 5}) {
            setComputeThreads(threads);
            for (int64_t n : {0, 1, 2, 7, 64, 1000}) {
                for (int64_t grain : {1, 3, 100}) {
                    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
                    std::atomic<int> chunks{0};
                    parallelFor(n, grain, [&](int64_t b, int64_t e) {
                        QVERIFY(0 <= b && b < e && e <= n);
                        ++chunks;
                        for (int64_t i = b; i < e; ++i)
                            ++seen[size_t(i)];
                    });
                    for (const auto& s : seen)
                        QCOMPARE(s.load(), 1);
                    const int64_t most = std::max<int64_t>(1, std::min<int64_t>(threads, n / grain));
                    QVERIFY(n == 0 || (chunks >= 1 && chunks <= most));
                    if (!parallelBuild()) QVERIFY(chunks <= 1);
                }
            }
        }
    }

    void nestedRegionsRunSerially() {
        setComputeThreads(2);
        std::atomic<int> inner{0};
        parallelFor(4, 1, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i)
                parallelFor(100, 1, [&](int64_t ib, int64_t ie) {
                    QCOMPARE(ib, int64_t{0}); // one call for the whole range: already inside a region
                    QCOMPARE(ie, int64_t{100});
                    ++inner;
                });
        });
        QCOMPARE(inner.load(), 4);
    }

    void exceptionsReachTheCaller() {
        setComputeThreads(3);
        std::atomic<int> finished{0};
        bool caught = false;
        try {
            parallelFor(9, 1, [&](int64_t b, int64_t) {
                if (b == 0) throw std::runtime_error("chunk 0 failed");
                ++finished;
            });
        } catch (const std::runtime_error& e) {
            caught = QByteArray(e.what()) == "chunk 0 failed";
        }
        QVERIFY(caught);
        if (parallelBuild()) QCOMPARE(finished.load(), 2); // the other chunks ran to their end
    }

    void generalProductsSplitEitherWay() {
        struct Shape3 {
            int64_t m, n, k;
        };
        // rows split (m > n), columns split, a matrix-vector product's columns
        for (const Shape3 s : {Shape3{300, 170, 190}, Shape3{40, 1517, 130}, Shape3{1, 6000, 800}}) {
            for (bool transB : {false, true}) {
                for (bool accumulate : {false, true}) {
                    const RowMatrix a = randomMatrix(s.m, s.k + 3, 1);
                    const RowMatrix b =
                        transB ? randomMatrix(s.n, s.k + 5, 2) : randomMatrix(s.k, s.n + 5, 2);
                    const RowMatrix c0 = randomMatrix(s.m, s.n + 7, 3);
                    sameOnThreads("gemm", [&] {
                        RowMatrix c = c0;
                        gemm(GemmArgs{a.data(), a.cols(), b.data(), b.cols(), c.data(), c.cols(), s.m, s.n,
                                      s.k, transB, accumulate});
                        return values(c);
                    });
                }
            }
        }
    }

    void packedWeightsAndLinears() {
        const RowMatrix w = randomMatrix(96, 200, 4);
        const RowMatrix x = randomMatrix(200, 700, 5);
        const GemmKernel active = activeGemmKernel();
        for (GemmKernel kernel : {GemmKernel::Avx2, GemmKernel::Avx512, GemmKernel::Onednn}) {
            if ((kernel == GemmKernel::Avx512 && !cpuSupportsAvx512()) ||
                (kernel == GemmKernel::Onednn && !onednnAvailable()))
                continue;
            // Eigen's packed products split their columns or rows; oneDNN runs on its own team
            setGemmKernel(kernel);
            const PackedWeights packed(w.data(), w.rows(), w.cols());
            const auto product = [&] {
                RowMatrix c(96, 700);
                packed.multiply(x.data(), x.cols(), x.cols(), c.data(), c.cols());
                return values(c);
            };
            if (kernel == GemmKernel::Onednn) { // not a team region of ours: the same values at 2 threads
                setComputeThreads(2);
                const std::vector<float> two = product();
                setComputeThreads(1);
                const std::vector<float> one = product();
                QVERIFY(relativeGap(one.data(), two.data(), int64_t(one.size())) <= 1e-5);
            } else {
                sameOnThreads("packed weights", product);
            }
            LinearWeights layer = linearLayer(384, 256, 6);
            layer.pack();
            const RowMatrix rows = randomMatrix(197, 256, 7);
            if (kernel == GemmKernel::Onednn) {
                setComputeThreads(2);
                RowMatrix out2, out1;
                linearInto(rows, layer, out2);
                setComputeThreads(1);
                linearInto(rows, layer, out1);
                QVERIFY(relativeGap(out1.data(), out2.data(), out1.size()) <= 1e-5);
                continue;
            }
            sameOnThreads("packed linear", [&] {
                RowMatrix out;
                linearInto(rows, layer, out);
                return values(out);
            });
        }
        setGemmKernel(active);
    }

    void sixteenBitLinear() {
        for (const auto format : {HalfMatrix::Format::BF16, HalfMatrix::Format::F16}) {
            const RowMatrix w = randomMatrix(1100, 300, 8);
            std::vector<uint16_t> bits(size_t(w.size()));
            for (size_t i = 0; i < bits.size(); ++i)
                bits[i] = format == HalfMatrix::Format::BF16 ? floatToBFloat16(w.data()[i])
                                                             : floatToHalf(w.data()[i]);
            const HalfMatrix half(format, w.rows(), w.cols(), bits.data(), nullptr);
            for (int64_t n : {1, 3, 8, 9, 130}) { // the streaming rows, then widened blocks
                const RowMatrix x = randomMatrix(n, 300, 9);
                sameOnThreads("16-bit linear", [&] {
                    RowMatrix out(n, w.rows());
                    halfLinear(x.data(), x.cols(), n, half, out.data(), out.cols());
                    return values(out);
                });
            }
        }
    }

    void attentionOverHeads() {
        const int heads = 6;
        const int64_t d = 96, n = 150;
        for (int kvHeads : {0, 2}) {
            const int64_t kvDim = kvHeads ? kvHeads * (d / heads) : d;
            MultiHeadAttention mha(linearLayer(d, d, 10), linearLayer(kvDim, d, 11),
                                   linearLayer(kvDim, d, 12), linearLayer(d, d, 13), heads, QueryScale::Query,
                                   std::nullopt, kvHeads);
            const RowMatrix x = randomMatrix(n, d, 14);
            RowMatrix q, k, v;
            mha.projectQuery(x, q);
            mha.projectKeyValue(x, k, v);
            const RowMatrix mask = causalMask(n, 0, 0);
            const std::vector<int> off{1, 4};
            for (int rule = 0; rule < 3; ++rule) {
                sameOnThreads("attention", [&] {
                    Tensor capture;
                    const RowMatrix context = rule == 0 ? mha.attendHeads(q, k, v, nullptr, &capture, off)
                                              : rule == 1
                                                  ? mha.attendHeads(q, k, v, &mask, &capture, {})
                                                  : mha.attendHeadsCausal(q, k, v, 0, 32, &capture, {});
                    std::vector<float> all = values(context);
                    all.insert(all.end(), capture.data(), capture.data() + capture.numel());
                    return all;
                });
            }
        }
        // value norms: heads of 128 (W_O's Gram matrices), on the team when a head's work is large enough
        MultiHeadAttention wide(linearLayer(256, 64, 23), linearLayer(256, 64, 24), linearLayer(256, 64, 25),
                                linearLayer(64, 256, 26), 2);
        const RowMatrix v = randomMatrix(150, 256, 27);
        sameOnThreads("value norms", [&] { return values(wide.valueNorms(v)); });
    }

    void convolutionsAndGroupNorm() {
        const FeatureMap x{randomMatrix(64, 40 * 36, 15), 40, 36};
        const Tensor weight = randomTensor({64, 64, 3, 3}, 16, 0.05f);
        const Tensor bias = randomTensor({64}, 17);
        const Tensor u = winogradWeights(weight);
        const std::vector<PackedWeights> packed = packWinogradWeights(u);
        sameOnThreads("winograd", [&] { return values(conv3x3Winograd(x, u, bias).data); });
        sameOnThreads("winograd, packed", [&] { return values(conv3x3Winograd(x, packed, bias).data); });
        sameOnThreads("im2col", [&] {
            return values(conv2d(x, weight, bias,
                                 {.stride = 2, .padTop = 1, .padLeft = 1, .padBottom = 1, .padRight = 1})
                              .data);
        });
        const Tensor g = randomTensor({64}, 18), b = randomTensor({64}, 19);
        for (bool silu : {false, true})
            sameOnThreads("group norm", [&] { return values(groupNorm(x, 8, g, b, 1e-5f, silu).data); });
    }

    void normsAndActivations() {
        const RowMatrix x0 = randomMatrix(300, 256, 20);
        const Tensor g = randomTensor({256}, 21), b = randomTensor({256}, 22);
        sameOnThreads("layer norm", [&] {
            RowMatrix x = x0;
            layerNormInPlace(x, g, b, 1e-5f);
            return values(x);
        });
        Norm rms;
        rms.kind = Norm::Kind::RmsNorm;
        rms.weight = g;
        rms.eps = 1e-6f;
        sameOnThreads("RMS norm", [&] {
            RowMatrix x = x0;
            rms.apply(x);
            return values(x);
        });
        for (Activation act : {Activation::Gelu, Activation::GeluTanh, Activation::Relu, Activation::Silu,
                               Activation::QuickGelu})
            sameOnThreads("activation", [&] {
                RowMatrix x = x0;
                applyActivationInPlace(x, act);
                return values(x);
            });
    }
};

QTEST_GUILESS_MAIN(TestParallel)
#include "test_parallel.moc"
