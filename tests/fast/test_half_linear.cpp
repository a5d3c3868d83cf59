// Weights kept in 16 bits (HalfMatrix, ops/half_linear.h): products computed in float32 from the exactly
// widened values for every row count (the streaming kernel ≤ 8 rows, widened blocks on the GEMM beyond,
// several blocks), strided inputs and outputs, sizes with tails; TensorFile::loadHalf and
// WeightBinder::requireStored keep F16 / BF16 as stored (a view on the file) and F32 as a float tensor.

#include "core/io/safetensors.h"
#include "core/io/tensor_file.h"
#include "core/io/weight_binder.h"
#include "core/ops/half_linear.h"
#include "core/ops/nn.h"
#include "core/util/error.h"

#include <QTest>

#include <cmath>
#include <random>

using namespace attnlens;

namespace {

struct Case {
    std::vector<uint16_t> bits;
    HalfMatrix w;
    std::vector<float> widened; // what every product must use
};

Case makeWeights(HalfMatrix::Format format, int64_t rows, int64_t cols, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Case c;
    c.bits.resize(static_cast<size_t>(rows * cols));
    c.widened.resize(c.bits.size());
    for (size_t i = 0; i < c.bits.size(); ++i) {
        const float v = normal(rng);
        c.bits[i] = format == HalfMatrix::Format::BF16 ? floatToBFloat16(v) : floatToHalf(v);
        c.widened[i] =
            format == HalfMatrix::Format::BF16 ? bfloat16ToFloat(c.bits[i]) : halfToFloat(c.bits[i]);
    }
    c.w = HalfMatrix(format, rows, cols, c.bits.data(), nullptr);
    return c;
}

} // namespace

class TestHalfLinear : public QObject {
    Q_OBJECT
private slots:
    void matchesFloat32_data();
    void matchesFloat32();
    void widenIsExact();
    void loadHalfKeepsStoredBits();
    void binderKeepsStoredFormat();
};

void TestHalfLinear::matchesFloat32_data() {
    QTest::addColumn<bool>("bf16");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    for (const bool bf16 : {true, false}) {
        const char* f = bf16 ? "bf16" : "f16";
        for (const int n : {1, 2, 3, 4, 5, 8, 9, 40})
            QTest::addRow("%s n=%d 37x67", f, n) << bf16 << n << 37 << 67;
        QTest::addRow("%s n=1 5x1024 (no tail)", f) << bf16 << 1 << 5 << 1024;
        QTest::addRow("%s n=12 9000x40 (several widened blocks)", f) << bf16 << 12 << 9000 << 40;
    }
}

void TestHalfLinear::matchesFloat32() {
    QFETCH(bool, bf16);
    QFETCH(int, n);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const auto c = makeWeights(bf16 ? HalfMatrix::Format::BF16 : HalfMatrix::Format::F16, rows, cols, 7);
    const int64_t ldx = cols + 3, ldo = rows + 5; // strided rows on both sides
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n * ldx)), out(static_cast<size_t>(n * ldo), -7.0f);
    for (float& v : x)
        v = uniform(rng);
    halfLinear(x.data(), ldx, n, c.w, out.data(), ldo);
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        for (int r = 0; r < rows; ++r) {
            double want = 0, scale = 0;
            for (int k = 0; k < cols; ++k) {
                const double p = double(x[size_t(i * ldx + k)]) * c.widened[size_t(r * cols + k)];
                want += p;
                scale += std::abs(p);
            }
            worst = std::max(worst, std::abs(out[size_t(i * ldo + r)] - want) / std::max(scale, 1e-30));
        }
        for (int64_t r = rows; r < ldo; ++r) // the stride's gap is not written
            QCOMPARE(out[size_t(i * ldo + r)], -7.0f);
    }
    QVERIFY2(worst < 1e-6, qPrintable(QString("relative error %1").arg(worst)));
}

void TestHalfLinear::widenIsExact() {
    // every 16-bit pattern, both formats, through the vector path and the tail
    std::vector<uint16_t> all(65536);
    for (size_t i = 0; i < all.size(); ++i)
        all[i] = static_cast<uint16_t>(i);
    std::vector<float> wide(all.size() - 3);
    for (const bool bf16 : {true, false}) {
        (bf16 ? widenBf16 : widenHalf)(all.data() + 3, int64_t(wide.size()), wide.data());
        for (size_t i = 0; i < wide.size(); ++i) {
            const float want = bf16 ? bfloat16ToFloat(all[i + 3]) : halfToFloat(all[i + 3]);
            if (std::isnan(want))
                QVERIFY(std::isnan(wide[i]));
            else
                QCOMPARE(std::bit_cast<uint32_t>(wide[i]), std::bit_cast<uint32_t>(want));
        }
    }
}

void TestHalfLinear::loadHalfKeepsStoredBits() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "w.safetensors";
    Tensor t({3, 5});
    for (int64_t i = 0; i < t.numel(); ++i)
        t.data()[i] = 0.1f * float(i) - 0.7f;
    writeSafeTensors(path, {{"b", t, DType::BF16}, {"h", t, DType::F16}, {"f", t, DType::F32}});
    const auto file = TensorFile::open(path);
    for (const char* name : {"b", "h"}) {
        const HalfMatrix m = file.loadHalf(*file.find(name));
        QCOMPARE(m.rows(), 3);
        QCOMPARE(m.cols(), 5);
        const bool bf16 = std::string(name) == "b";
        QCOMPARE(m.format(), bf16 ? HalfMatrix::Format::BF16 : HalfMatrix::Format::F16);
        for (int64_t i = 0; i < t.numel(); ++i)
            QCOMPARE(m.row(0)[i], bf16 ? floatToBFloat16(t.data()[i]) : floatToHalf(t.data()[i]));
        LinearWeights layer;
        layer.half = m;
        std::vector<float> row(5);
        layer.rowInto(2, row.data());
        const Tensor wide = file.load(name);
        for (int k = 0; k < 5; ++k)
            QCOMPARE(row[size_t(k)], wide.data()[10 + k]);
        QVERIFY_THROWS_EXCEPTION(Error, layer.rowInto(3, row.data()));
    }
    QVERIFY_THROWS_EXCEPTION(Error, (void)file.loadHalf(*file.find("f")));
}

void TestHalfLinear::binderKeepsStoredFormat() {
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "w.safetensors";
    const Tensor t({4, 2}, 0.5f);
    writeSafeTensors(path, {{"b", t, DType::BF16}, {"f", t, DType::F32}});
    const auto file = TensorFile::open(path);
    WeightBinder bind(file);
    const auto b = bind.requireStored("b", {4, 2});
    QVERIFY(b.f32.empty());
    QCOMPARE(b.half.rows(), 4);
    const auto f = bind.requireStored("f", {4, 2});
    QVERIFY(f.half.empty());
    QCOMPARE(f.f32.dim(0), 4);
    QVERIFY(bind.problems().empty());
    const auto wrong = bind.requireStored("b", {2, 4});
    QVERIFY(wrong.half.empty() && wrong.f32.empty());
    (void)bind.requireStored("missing", {4, 2});
    QCOMPARE(bind.problems().size(), size_t(2));
}

QTEST_APPLESS_MAIN(TestHalfLinear)
#include "test_half_linear.moc"
