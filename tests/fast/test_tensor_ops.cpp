// Tensor views and the stateless ops every model shares.

#include "core/ops/nn.h"
#include "core/tensor/tensor.h"
#include "core/util/error.h"
#include "core/util/huge_pages.h"

#include <QTest>

#if defined(__linux__) && defined(__GLIBC__)
#include <sys/resource.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

using namespace attnlens;

class TestTensorOps : public QObject {
    Q_OBJECT
private slots:
    // ATTNLENS_CPU_ISA=avx2 (test_tensor_ops_avx2 and the other *_avx2 suites): nothing runs AVX-512 code —
    // neither the Eigen kernels nor oneDNN's — as on a CPU without it.
    void avx2OnlyDispatch() {
        if (!limitedToAvx2()) QSKIP("ATTNLENS_CPU_ISA is not avx2 (the *_avx2 suites set it)");
        QVERIFY(!cpuSupportsAvx512());
        QVERIFY(activeGemmKernel() != GemmKernel::Avx512);
        QVERIFY_THROWS_EXCEPTION(Error, setGemmKernel(GemmKernel::Avx512));
        if (onednnBuilt()) { // limiting its ISA must not switch it off (set_max_cpu_isa failing would)
            QVERIFY(onednnAvailable());
            QCOMPARE(onednnIsa(), std::string("avx2"));
            QVERIFY(!bf16Available());
        }
    }
    void shapesAndViews();
    void boundsAreChecked();
    void sinusoidalIsSinThenCos();
    void layerNorm();
    void activations();
    void linearMatchesDefinition();
    void packedLinearMatchesPlain();
    void bf16PackedLinear();
    void bf16WeightUsedAsStored();
    void bf16PackedWeights();
    void onednnPackedWeightsStrided();
    void linearGemmMatchesGemm();
    void reservedHeapServesTheNextBuffer();
};

void TestTensorOps::shapesAndViews() {
    Tensor t({2, 3, 4});
    for (int64_t i = 0; i < t.numel(); ++i)
        t.data()[i] = static_cast<float>(i);
    QCOMPARE(t.rank(), 3);
    QCOMPARE(t.dim(-1), int64_t(4));
    QCOMPARE(t.at({1, 2, 3}), 23.0f);
    QCOMPARE(t.slice2d({1})(2, 3), 23.0f); // [query, key] of "head" 1
    QCOMPARE(t.matrix().rows(), Eigen::Index(6));
    const Tensor s = t.sub({1});
    QCOMPARE(s.shape(), (Shape{3, 4}));
    QCOMPARE(s.at({0, 0}), 12.0f);
    t.at({1, 0, 0}) = -1.0f; // views share the buffer
    QCOMPARE(s.at({0, 0}), -1.0f);
    const Tensor c = t.clone();
    t.at({0, 0, 0}) = 99.0f;
    QCOMPARE(c.at({0, 0, 0}), 0.0f); // clones do not
    QCOMPARE(t.reshaped({6, 4}).at({5, 3}), 23.0f);
    QCOMPARE(Tensor(Shape{}).numel(), int64_t(1)); // rank 0 holds one value
    QCOMPARE(shapeToString({2, 3}), std::string("[2, 3]"));
}

void TestTensorOps::boundsAreChecked() {
    Tensor t({2, 3});
    QVERIFY_THROWS_EXCEPTION(Error, t.at({2, 0}));
    QVERIFY_THROWS_EXCEPTION(Error, t.at({0}));
    QVERIFY_THROWS_EXCEPTION(Error, t.reshaped({4, 2}));
    QVERIFY_THROWS_EXCEPTION(Error, t.slice2d({0}));
    QVERIFY_THROWS_EXCEPTION(Error, Tensor({2}, std::vector<float>{1, 2, 3}));
    QVERIFY_THROWS_EXCEPTION(Error, Tensor({-1}));
}

void TestTensorOps::sinusoidalIsSinThenCos() {
    const Tensor pe = sinusoidalPositions(10, 6); // half = 3
    for (int64_t pos = 0; pos < 10; ++pos)
        for (int64_t i = 0; i < 3; ++i) {
            const double angle = pos / std::pow(10000.0, 2.0 * i / 6.0);
            QCOMPARE(pe.at({pos, i}), static_cast<float>(std::sin(angle)));
            QCOMPARE(pe.at({pos, 3 + i}), static_cast<float>(std::cos(angle)));
        }
    QCOMPARE(pe.at({0, 0}), 0.0f);
    QCOMPARE(pe.at({0, 3}), 1.0f);
    const Tensor odd = sinusoidalPositions(4, 5); // 3 sin columns, 2 cos columns
    QCOMPARE(odd.at({2, 2}), static_cast<float>(std::sin(2.0 / std::pow(10000.0, 4.0 / 5.0))));
    QCOMPARE(odd.at({2, 4}), static_cast<float>(std::cos(2.0 / std::pow(10000.0, 2.0 / 5.0))));
}

void TestTensorOps::layerNorm() {
    RowMatrix x(2, 4);
    x << 1, 2, 3, 4, -1, -1, -1, -1;
    Tensor g({4}, std::vector<float>{1, 1, 2, 1}), b({4}, std::vector<float>{0, 0, 0, 0.5f});
    layerNormInPlace(x, g, b, 1e-5f);
    const float var = 1.25f; // biased variance of 1..4
    QVERIFY(std::abs(x(0, 0) - (-1.5f / std::sqrt(var + 1e-5f))) < 1e-6f);
    QVERIFY(std::abs(x(0, 2) - 2.0f * 0.5f / std::sqrt(var + 1e-5f)) < 1e-6f);
    QCOMPARE(x(1, 3), 0.5f); // constant row → 0, plus bias
}

void TestTensorOps::activations() {
    RowMatrix x(1, 3);
    x << -1.0f, 0.0f, 2.0f;
    RowMatrix g = x;
    applyActivationInPlace(g, parseActivation("gelu"));
    QVERIFY(std::abs(g(0, 0) - (-0.15865525f)) < 1e-6f); // exact erf GELU
    QVERIFY(std::abs(g(0, 2) - 1.9544997f) < 1e-6f);
    RowMatrix s = x;
    applyActivationInPlace(s, parseActivation("swish"));
    QVERIFY(std::abs(s(0, 2) - 2.0f / (1.0f + std::exp(-2.0f))) < 1e-6f);
    RowMatrix r = x;
    applyActivationInPlace(r, parseActivation("relu"));
    QCOMPARE(r(0, 0), 0.0f);
    QVERIFY_THROWS_EXCEPTION(Error, parseActivation("tanhshrink"));
}

void TestTensorOps::linearMatchesDefinition() {
    RowMatrix x(2, 3);
    x << 1, 2, 3, 4, 5, 6;
    Tensor w({2, 3}, std::vector<float>{1, 0, -1, 0.5f, 0.5f, 0.5f}), b({2}, std::vector<float>{10, 20});
    const RowMatrix y = linear(x, w, b); // [2, 2]
    QCOMPARE(y(0, 0), 1.0f - 3.0f + 10.0f);
    QCOMPARE(y(1, 1), 7.5f + 20.0f);
    QVERIFY_THROWS_EXCEPTION(Error, linear(RowMatrix(2, 2), w, b));
}

// A weight packed once at load gives the product the plain path gives, on every kernel this CPU and build
// have (Eigen AVX2, Eigen AVX-512, oneDNN): many-row inputs (a ViT's tokens), few-row inputs (decoder and
// beam steps: oneDNN packs those too), shapes that leave partial panels and blocks, and an input that is a
// block of a wider matrix (row stride > its width).
void TestTensorOps::packedLinearMatchesPlain() {
    std::vector<GemmKernel> kernels{GemmKernel::Avx2};
    if (cpuSupportsAvx512()) kernels.push_back(GemmKernel::Avx512);
    if (onednnAvailable()) kernels.push_back(GemmKernel::Onednn);
    const GemmKernel before = activeGemmKernel();
    for (const GemmKernel kernel : kernels) {
        setGemmKernel(kernel);
        for (const auto [n, in, out] : {std::array<int64_t, 3>{197, 77, 53},
                                        {9, 300, 1000},
                                        {33, 8, 5},
                                        {3, 64, 64},
                                        {1, 512, 2048},
                                        {2, 96, 33},
                                        {4, 512, 3001},
                                        {8, 40, 17},
                                        {5, 1, 3}}) {
            LinearWeights layer;
            layer.weight = Tensor({out, in});
            layer.bias = Tensor({out});
            for (int64_t i = 0; i < layer.weight.numel(); ++i)
                layer.weight.data()[i] = std::sin(0.013f * float(i));
            for (int64_t i = 0; i < out; ++i)
                layer.bias.data()[i] = 0.1f * float(i % 7);
            RowMatrix wide(n, in + 3);
            for (Eigen::Index i = 0; i < wide.size(); ++i)
                wide.data()[i] = std::cos(0.029f * float(i));
            const auto x = wide.leftCols(in); // row stride in + 3
            RowMatrix plain, packed;
            linearInto(x, layer.weight, layer.bias, plain);
            layer.pack();
            QVERIFY(layer.packed.valid());
            linearInto(x, layer, packed);
            QCOMPARE(packed.rows(), n);
            QCOMPARE(packed.cols(), out);
            // Another kernel sums in another order: float32 rounding relative to the outputs' size (a wrong
            // layout or stride would be off by the outputs' size itself). Measured up to 1.03e-4 on values
            // of ~100 with oneDNN's AVX2 kernel (ONEDNN_MAX_CPU_ISA=AVX2).
            const float tolerance = 1e-5f * std::max(1.0f, plain.cwiseAbs().maxCoeff());
            const float worst = (packed - plain).cwiseAbs().maxCoeff();
            QVERIFY2(worst < tolerance, qPrintable(QString("%1: n=%2 in=%3 out=%4: %5 (tolerance %6)")
                                                       .arg(gemmKernelName(kernel))
                                                       .arg(n)
                                                       .arg(in)
                                                       .arg(out)
                                                       .arg(worst)
                                                       .arg(tolerance)));
            // the same weight, used again with another row count, reuses the packed form
            RowMatrix again;
            linearInto(wide.topRows(1).leftCols(in), layer, again);
            QVERIFY((again.row(0) - plain.row(0)).cwiseAbs().maxCoeff() < tolerance);
        }
    }
    setGemmKernel(before);
    if (!onednnAvailable()) QVERIFY_THROWS_EXCEPTION(Error, setGemmKernel(GemmKernel::Onednn));
}

// linearGemm (oneDNN's sgemm under GemmKernel::Onednn, gemm() otherwise) computes what gemm() does, with
// strides, Bᵀ or B, overwriting or accumulating.
void TestTensorOps::linearGemmMatchesGemm() {
    const GemmKernel before = activeGemmKernel();
    for (const GemmKernel kernel : {GemmKernel::Avx2, GemmKernel::Onednn}) {
        if (kernel == GemmKernel::Onednn && !onednnAvailable()) continue;
        setGemmKernel(kernel);
        for (const bool transB : {false, true})
            for (const bool accumulate : {false, true}) {
                const int64_t m = 37, n = 29, k = 53, lda = k + 2, ldb = (transB ? k : n) + 3, ldc = n + 1;
                std::vector<float> a(size_t(m * lda)), b(size_t((transB ? n : k) * ldb)),
                    c(size_t(m * ldc), 0.5f);
                for (size_t i = 0; i < a.size(); ++i)
                    a[i] = std::sin(0.37f * float(i));
                for (size_t i = 0; i < b.size(); ++i)
                    b[i] = std::cos(0.11f * float(i));
                std::vector<float> expected = c;
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < n; ++j) {
                        double s = accumulate ? expected[size_t(i * ldc + j)] : 0.0;
                        for (int64_t t = 0; t < k; ++t)
                            s += double(a[size_t(i * lda + t)]) *
                                 double(transB ? b[size_t(j * ldb + t)] : b[size_t(t * ldb + j)]);
                        expected[size_t(i * ldc + j)] = float(s);
                    }
                linearGemm(
                    GemmArgs{a.data(), lda, b.data(), ldb, c.data(), ldc, m, n, k, transB, accumulate});
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < n; ++j)
                        QVERIFY2(std::abs(c[size_t(i * ldc + j)] - expected[size_t(i * ldc + j)]) < 1e-4f,
                                 gemmKernelName(kernel));
                QCOMPARE(c[size_t(ldc - 1)], 0.5f); // the padding column is not written
            }
    }
    setGemmKernel(before);
}

// bfloat16 by round-to-nearest-even, as oneDNN converts.
float roundToBf16(float v) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    bits &= 0xFFFF0000u;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

// bf16 packing (where available): the product equals float32 arithmetic on the bfloat16-rounded weight
// and input (to float32 accumulation-order error), and differs from the plain product; an
// Fp32ReferenceScope gives the plain float32 product back from the same packed layer.
void TestTensorOps::bf16PackedLinear() {
    if (!bf16Available()) {
        QVERIFY_THROWS_EXCEPTION(Error, setLinearPrecision(LinearPrecision::Bf16));
        QCOMPARE(linearPrecision(), LinearPrecision::Fp32);
        return;
    }
    for (const int64_t n : {1, 4, 197}) {
        LinearWeights layer;
        layer.weight = Tensor({300, 256});
        layer.bias = Tensor({300});
        for (int64_t i = 0; i < layer.weight.numel(); ++i)
            layer.weight.data()[i] = std::sin(0.013f * float(i));
        for (int64_t i = 0; i < 300; ++i)
            layer.bias.data()[i] = 0.01f * float(i % 11);
        RowMatrix wide(n, 259);
        for (Eigen::Index i = 0; i < wide.size(); ++i)
            wide.data()[i] = std::cos(0.029f * float(i));
        const auto x = wide.leftCols(256);
        RowMatrix plain, fast, reference;
        linearInto(x, layer.weight, layer.bias, plain);
        setLinearPrecision(LinearPrecision::Bf16);
        layer.pack();
        setLinearPrecision(LinearPrecision::Fp32);
        QCOMPARE(layer.packed.precision(), LinearPrecision::Bf16);
        linearInto(x, layer, fast); // still bf16: the packed form keeps its precision
        // what bfloat16 operands give in float32 arithmetic
        RowMatrix xr = x, wr = layer.weight.matrix();
        xr = xr.unaryExpr(&roundToBf16);
        wr = wr.unaryExpr(&roundToBf16);
        RowMatrix emulated = xr * wr.transpose();
        emulated.rowwise() += ConstVectorMap(layer.bias.data(), 300).transpose();
        const float vsEmulated = (fast - emulated).cwiseAbs().maxCoeff();
        const float vsPlain = (fast - plain).cwiseAbs().maxCoeff();
        QVERIFY2(vsEmulated < 1e-4f, qPrintable(QString("n=%1: bf16 vs emulated %2").arg(n).arg(vsEmulated)));
        QVERIFY2(vsPlain > 1e-3f, qPrintable(QString("n=%1: bf16 vs fp32 only %2").arg(n).arg(vsPlain)));
        {
            const Fp32ReferenceScope exact;
            linearInto(x, layer, reference);
        }
        QVERIFY(reference == plain);
    }
}

// A weight stored in bfloat16, in bf16 mode: pack() views it (no copy); a prompt's rows (> 8) are rounded to
// bfloat16 and multiplied on oneDNN (float32 arithmetic on bf16 operands, to accumulation-order error), a
// decoding step's (≤ 8) stay on the exact float32 kernel, and Fp32ReferenceScope gives the exact product
// back. An IEEE-half weight is not packed.
void TestTensorOps::bf16WeightUsedAsStored() {
    if (!bf16Available()) QSKIP("no bf16 kernel on this CPU (oneDNN with AVX-512)");
    constexpr int64_t kOut = 96, kIn = 64;
    auto storage = std::make_shared<std::vector<uint16_t>>(kOut * kIn);
    RowMatrix w(kOut, kIn); // the stored values, widened
    for (int64_t i = 0; i < kOut * kIn; ++i) {
        const float v = roundToBf16(std::sin(0.017f * float(i)));
        uint32_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        (*storage)[size_t(i)] = uint16_t(bits >> 16);
        w.data()[i] = v;
    }
    LinearWeights layer;
    layer.half = HalfMatrix(HalfMatrix::Format::BF16, kOut, kIn, storage->data(), storage);
    setLinearPrecision(LinearPrecision::Bf16);
    layer.pack();
    setLinearPrecision(LinearPrecision::Fp32);
    QCOMPARE(layer.packed.precision(), LinearPrecision::Bf16);
    const auto input = [&](int64_t n) {
        RowMatrix x(n, kIn);
        for (Eigen::Index i = 0; i < x.size(); ++i)
            x.data()[i] = std::cos(0.031f * float(i));
        return x;
    };
    for (const int64_t n : {1, 8, 9, 40}) {
        const RowMatrix x = input(n);
        RowMatrix fast, reference;
        linearInto(x, layer, fast);
        {
            const Fp32ReferenceScope exact;
            linearInto(x, layer, reference);
        }
        const RowMatrix plain = x * w.transpose();
        const RowMatrix emulated = x.unaryExpr(&roundToBf16) * w.transpose();
        QVERIFY2((reference - plain).cwiseAbs().maxCoeff() < 1e-4f, qPrintable(QString("n=%1").arg(n)));
        const RowMatrix& expected = n > 8 ? emulated : plain;
        QVERIFY2((fast - expected).cwiseAbs().maxCoeff() < 1e-4f, qPrintable(QString("n=%1").arg(n)));
        if (n <= 8) QVERIFY(fast == reference); // the same float32 kernel
        if (n > 8) QVERIFY((fast - plain).cwiseAbs().maxCoeff() > 1e-4f);
    }
    LinearWeights half;
    half.half = HalfMatrix(HalfMatrix::Format::F16, kOut, kIn, storage->data(), storage);
    setLinearPrecision(LinearPrecision::Bf16);
    half.pack();
    setLinearPrecision(LinearPrecision::Fp32);
    QVERIFY(half.packed.empty());
    half = LinearWeights();

    // the packed layer reads the stored memory itself (no copy: a changed value shows) and keeps it alive
    const RowMatrix x = input(40);
    RowMatrix before, after;
    linearInto(x, layer, before);
    (*storage)[1] ^= 0x8000u; // weight (0, 1) negated (sin 0.017; (0, 0) is 0)
    linearInto(x, layer, after);
    QVERIFY(before.col(0) != after.col(0));
    QVERIFY(before.rightCols(kOut - 1) == after.rightCols(kOut - 1));
    (*storage)[1] ^= 0x8000u;
    const PackedLinear packed = layer.packed;
    layer = LinearWeights();
    const std::weak_ptr<std::vector<uint16_t>> watch = storage;
    storage.reset();
    QVERIFY(!watch.expired()); // held by the packed layer alone
    RowMatrix last(40, kOut);
    packed.multiply(x.data(), x.outerStride(), x.rows(), last.data(), last.outerStride());
    QVERIFY(last == before);
}

// PackedWeights under the oneDNN kernel in float32 (its matmul on W's copy and X where it lies): the product
// W · X to float32 rounding, with X's and C's row strides wider than n, nothing written beyond n.
void TestTensorOps::onednnPackedWeightsStrided() {
    if (!onednnAvailable()) QSKIP("no oneDNN kernel in this build");
    const GemmKernel before = activeGemmKernel();
    setGemmKernel(GemmKernel::Onednn);
    constexpr int64_t kM = 40, kK = 72;
    RowMatrix w(kM, kK);
    for (Eigen::Index i = 0; i < w.size(); ++i)
        w.data()[i] = std::sin(0.019f * float(i));
    const PackedWeights packed(w.data(), kM, kK);
    QCOMPARE(packed.precision(), LinearPrecision::Fp32);
    for (const int64_t n : {1, 33, 300}) {
        RowMatrix x(kK, n + 7);
        for (Eigen::Index i = 0; i < x.size(); ++i)
            x.data()[i] = std::cos(0.011f * float(i));
        RowMatrix c = RowMatrix::Constant(kM, n + 2, 0.5f);
        packed.multiply(x.data(), x.cols(), n, c.data(), c.cols());
        const RowMatrix expected = w * x.leftCols(n);
        QVERIFY2((c.leftCols(n) - expected).cwiseAbs().maxCoeff() < 1e-4f,
                 qPrintable(QString("n=%1").arg(n)));
        QVERIFY((c.rightCols(2).array() == 0.5f).all());
    }
    setGemmKernel(GemmKernel::Avx2);
    QVERIFY(!packed.valid()); // packed for oneDNN: the plain path takes over after a switch
    setGemmKernel(before);
}

// PackedWeights (a convolution's W in C = W · X) in bf16: W and X rounded to bfloat16, float32 accumulation,
// written with C's row stride; valid whichever float32 kernel is active.
void TestTensorOps::bf16PackedWeights() {
    if (!bf16Available()) QSKIP("no bf16 kernel on this CPU (oneDNN with AVX-512)");
    constexpr int64_t kM = 24, kK = 72;
    RowMatrix w(kM, kK);
    for (Eigen::Index i = 0; i < w.size(); ++i)
        w.data()[i] = std::sin(0.023f * float(i));
    setLinearPrecision(LinearPrecision::Bf16);
    const PackedWeights packed(w.data(), kM, kK);
    setLinearPrecision(LinearPrecision::Fp32);
    QCOMPARE(packed.precision(), LinearPrecision::Bf16);
    for (const int64_t n : {1, 17, 100}) {
        RowMatrix x(kK, n + 3); // row stride n + 3
        for (Eigen::Index i = 0; i < x.size(); ++i)
            x.data()[i] = std::cos(0.013f * float(i));
        RowMatrix c = RowMatrix::Constant(kM, n + 5, 0.5f); // row stride n + 5
        QVERIFY(packed.valid());
        packed.multiply(x.data(), x.cols(), n, c.data(), c.cols());
        const RowMatrix emulated = w.unaryExpr(&roundToBf16) * x.leftCols(n).unaryExpr(&roundToBf16);
        const RowMatrix plain = w * x.leftCols(n);
        QVERIFY2((c.leftCols(n) - emulated).cwiseAbs().maxCoeff() < 1e-4f,
                 qPrintable(QString("n=%1").arg(n)));
        QVERIFY((c.leftCols(n) - plain).cwiseAbs().maxCoeff() > 1e-4f);
        QCOMPARE(c(kM - 1, n + 4), 0.5f); // beyond n: not written
    }
}

// reserveHeap (the map lane's, before a long text's first head switch): with keepLargeBuffers, a 48 MB buffer
// after reserving 64 MB gets pages already mapped — almost no page faults where a fresh one takes 12 288 (4
// kB pages) or 24 (huge pages). glibc's malloc only (AddressSanitizer's allocator keeps its own pools).
void TestTensorOps::reservedHeapServesTheNextBuffer() {
#if defined(__linux__) && defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
    keepLargeBuffers();
    constexpr std::size_t kReserved = 64u << 20, kUsed = 48u << 20;
    reserveHeap(kReserved);
    const auto faults = [] {
        rusage u{};
        getrusage(RUSAGE_THREAD, &u);
        return u.ru_minflt;
    };
    const long before = faults();
    auto* buffer = static_cast<volatile char*>(std::malloc(kUsed));
    QVERIFY(buffer != nullptr);
    for (std::size_t i = 0; i < kUsed; i += 4096)
        buffer[i] = 1;
    const long taken = faults() - before;
    std::free(const_cast<char*>(buffer));
    QVERIFY2(taken < 8, qPrintable(QString("%1 page faults").arg(taken)));
#else
    QSKIP("glibc's malloc only");
#endif
}

QTEST_GUILESS_MAIN(TestTensorOps)
#include "test_tensor_ops.moc"
