// GGUF (core/io/gguf.h) and the GGML block decoders (core/ops/ggml_quants.h) against the fixture written from
// the format's specification by tools/golden/make_gguf_fixtures.py: every metadata type, the tensor table
// (shapes with the fastest axis last, alignment 64), every block type decoded as the independent numpy
// decoder decodes it, and close to the values that were quantised; then damaged copies — truncated anywhere,
// another magic, version 1, an unknown type, offsets that lie or are not aligned, a name twice — each one
// clear error; `attnlens-cli inspect --model FILE.gguf` describes the file (its types by parameters, its
// metadata).

#include "core/io/gguf.h"
#include "core/io/json_file.h"
#include "core/io/tensor_file.h"
#include "core/ops/half_linear.h"
#include "core/util/error.h"
#include "support/cli_run.h"
#include "support/error_of.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace attnlens;

namespace {

const std::filesystem::path kDir = std::filesystem::path(ATTNLENS_TEST_DATA) / "gguf";

std::string readAll(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::filesystem::path writeCopy(const QTemporaryDir& tmp, const std::string& name, const std::string& bytes) {
    const std::filesystem::path p = tmp.filePath(QString::fromStdString(name)).toStdString();
    std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return p;
}

// Where a tensor's table entry keeps its type (u32), found after its name in the table.
size_t typeFieldOf(const std::string& bytes, const std::string& name, int dims) {
    const size_t at = bytes.find(name);
    return at + name.size() + 4 + 8 * size_t(dims);
}

// What each format can hold of the fixture's rows (relative RMS error; the numpy quantiser measured 0.36,
// 0.18, 0.17, 0.10, 0.03, 0.012 and 0.0016 for 2, 3, 4, 5, 6, 8 bits and bfloat16).
double relativeErrorBound(const std::string& type) {
    if (type == "Q2_K") return 0.45;
    if (type == "Q3_K") return 0.25;
    if (type[1] == '4') return 0.2;
    if (type[1] == '5') return 0.1;
    if (type == "Q6_K") return 0.04;
    if (type == "Q8_0") return 0.015;
    return 0.002;
}

void putU32(std::string& bytes, size_t at, uint32_t v) {
    std::memcpy(bytes.data() + at, &v, 4);
}
void putU64(std::string& bytes, size_t at, uint64_t v) {
    std::memcpy(bytes.data() + at, &v, 8);
}

} // namespace

class TestGguf : public QObject {
    Q_OBJECT
private slots:
    void metadataOfEveryType() {
        const GgufFile f = GgufFile::open(kDir / "quants.gguf");
        QCOMPARE(f.version(), 3u);
        QCOMPARE(f.alignment(), uint64_t(64));
        QCOMPARE(*f.string("general.architecture"), std::string("llama"));
        QCOMPARE(*f.string("general.name"), std::string("quants fixture ✓"));
        QCOMPARE(*f.integer("test.u8"), int64_t(200));
        QCOMPARE(*f.integer("test.i8"), int64_t(-100));
        QCOMPARE(*f.integer("test.u16"), int64_t(60000));
        QCOMPARE(*f.integer("test.i16"), int64_t(-30000));
        QCOMPARE(*f.integer("test.u32"), int64_t(4000000000));
        QCOMPARE(*f.integer("test.i32"), int64_t(-2000000000));
        QCOMPARE(*f.integer("test.u64"), int64_t(1) << 40);
        QCOMPARE(*f.integer("test.i64"), -(int64_t(1) << 40));
        QCOMPARE(*f.number("test.f32"), 0.25);
        QCOMPARE(*f.number("test.f64"), 1e-300);
        QCOMPARE(*f.number("test.u8"), 200.0); // integers read as numbers too
        QCOMPARE(*f.boolean("test.bool"), true);
        const GgufValue* strings = f.value("test.strings");
        QVERIFY(strings && strings->type == GgufValueType::Array);
        QCOMPARE(strings->strings, (std::vector<std::string>{"a", "Ġb", "", "<|endoftext|>"}));
        QCOMPARE(f.value("test.floats")->numbers, (std::vector<double>{0.5, -1.0, 3.0}));
        QCOMPARE(f.value("test.ints")->numbers, (std::vector<double>{1, -2, 3, 4}));
        QCOMPARE(f.value("test.empty")->count, uint64_t(0));
        QCOMPARE(f.value("test.nested")->count, uint64_t(2)); // counted, skipped
        QVERIFY(!f.value("test.absent") && !f.integer("test.absent"));
        QVERIFY(errorOf([&] { (void)f.integer("general.architecture"); }).contains("general.architecture"));
        QVERIFY(errorOf([&] { (void)f.string("test.u8"); }).contains("should be a string, found u8 200"));
        QCOMPARE(QString::fromStdString(f.value("test.strings")->describe()),
                 QStringLiteral("array of 4 string"));
        QVERIFY(GgufFile::isGguf(kDir / "quants.gguf") &&
                !GgufFile::isGguf(kDir / "quants.golden.safetensors"));
    }

    // Every block type decodes as the numpy decoder decodes the same bytes, and close to what was quantised.
    void everyTypeDecodes() {
        const GgufFile f = GgufFile::open(kDir / "quants.gguf");
        const TensorFile golden = TensorFile::open(kDir / "quants.golden.safetensors");
        QCOMPARE(f.tensors().size(), size_t(15));
        for (const GgufTensor& t : f.tensors()) {
            const Tensor decoded = golden.load(t.name + ".decoded"),
                         original = golden.load(t.name + ".original");
            QCOMPARE(t.shape, decoded.shape());
            QCOMPARE(t.offset % 64, uint64_t(0));
            const Tensor got = f.load(t);
            double err = 0, norm = 0, worst = 0;
            for (int64_t i = 0; i < got.numel(); ++i) {
                const double want = decoded.data()[i];
                worst = std::max(worst, std::abs(got.data()[i] - want) / std::max(1.0, std::abs(want)));
                err += std::pow(double(got.data()[i]) - original.data()[i], 2);
                norm += std::pow(double(original.data()[i]), 2);
            }
            const std::string type(ggmlTypeInfo(t.type)->name);
            QVERIFY2(worst < 1e-6, qPrintable(QString("%1 (%2): %3 from numpy's decoding")
                                                  .arg(QString::fromStdString(t.name))
                                                  .arg(QString::fromStdString(type))
                                                  .arg(worst)));
            const double bound = relativeErrorBound(type);
            QVERIFY2(std::sqrt(err / norm) < bound, qPrintable(QString("%1: relative error %2")
                                                                   .arg(QString::fromStdString(type))
                                                                   .arg(std::sqrt(err / norm))));
        }
        const GgufTensor* cube = f.find("cube.q8_0");
        QVERIFY(cube);
        QCOMPARE(cube->shape, (Shape{2, 2, 64}));
        QCOMPARE(cube->rows(), int64_t(4));
        QCOMPARE(f.find("vector.f32")->shape, (Shape{7}));
        // rows on their own are the whole tensor's rows
        const GgufTensor* q4k = f.find("quant.q4_k");
        const Tensor all = f.load(*q4k);
        std::vector<float> row(512);
        f.dequantizeRows(*q4k, 2, 1, row.data());
        QVERIFY(std::memcmp(row.data(), all.data() + 2 * 512, 512 * sizeof(float)) == 0);
        QVERIFY(errorOf([&] { f.dequantizeRows(*q4k, 2, 2, row.data()); }).contains("outside"));
    }

    // As a TensorFile (what the model loaders bind): floats as such, block types kept as blocks — loaded
    // whole, or as a matrix multiplied row by row (few input rows) or block by block (many) by the 16-bit
    // kernels.
    void blocksThroughTheTensorFile() {
        const GgufFile f = GgufFile::open(kDir / "quants.gguf");
        const TensorFile t =
            f.toTensorFile([](const std::string& n) { return n == "vector.f32" ? "" : "w." + n; });
        QCOMPARE(t.format(), TensorFile::Format::Gguf);
        QCOMPARE(t.tensors().size(), size_t(14));
        QVERIFY(!t.find("w.vector.f32") && t.find("w.quant.f16")->dtype == DType::F16);
        for (const char* name : {"quant.q4_k", "quant.q6_k", "quant.q5_0", "quant.bf16"}) {
            const TensorInfo* info = t.find(std::string("w.") + name);
            const Tensor whole = t.load(*info), direct = f.load(*f.find(name));
            QCOMPARE(whole.shape(), (Shape{3, 512}));
            QVERIFY(std::memcmp(whole.data(), direct.data(), sizeof(float) * 3 * 512) == 0);
            const HalfMatrix m = t.loadHalf(*info);
            QCOMPARE(m.rows(), int64_t(3));
            RowMatrix x = RowMatrix::Random(20, 512);
            const RowMatrix want = x * whole.matrix().transpose();
            for (int n : {1, 3, 20}) { // the streaming path, then the widened GEMM blocks
                RowMatrix out(n, 3);
                halfLinear(x.data(), x.outerStride(), n, m, out.data(), out.outerStride());
                QVERIFY2((out - want.topRows(n)).cwiseAbs().maxCoeff() < 1e-4f, name);
            }
        }
    }

    void inspectDescribesTheFile() {
        QTemporaryDir tmp;
        const QString json = tmp.filePath("info.json");
        const QString path = QString::fromStdString((kDir / "quants.gguf").string());
        const auto r = clitest::run({"inspect", "--model", path, "--json", json});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("GGUF v3") && r.out.contains("Q4_K ×1") && r.out.contains("Q8_0 ×2"));
        QVERIFY(r.out.contains("test.strings") && r.out.contains("array of 4 string"));
        const Json j = readJsonFile(json.toStdString());
        QCOMPARE(j["format"].get<std::string>(), std::string("gguf"));
        QCOMPARE(j["types"]["Q8_0"]["tensors"].get<int>(), 2);
        QCOMPARE(j["types"]["Q8_0"]["parameters"].get<int>(), 3 * 512 + 256);
        QCOMPARE(j["metadata"]["test.strings"][1].get<std::string>(), std::string("Ġb"));
        QCOMPARE(j["tensors"].size(), size_t(15));
        QVERIFY2(r.out.contains("does not open: it carries no vocabulary"), qPrintable(r.out));
        QCOMPARE(j["opens"].get<bool>(), false);
        const auto gemma = clitest::run(
            {"inspect", "--model", QString::fromStdString((kDir / "gemma3-gguf.bf16.gguf").string())});
        QVERIFY2(gemma.out.contains("gemma3 (opens as a text model"), qPrintable(gemma.out));
        std::string bad = readAll(kDir / "quants.gguf");
        bad.resize(bad.size() / 2);
        const auto broken = clitest::run(
            {"inspect", "--model", QString::fromStdString(writeCopy(tmp, "half.gguf", bad).string())});
        QCOMPARE(broken.exitCode, 2);
        QVERIFY2(broken.err.startsWith("error: ") && broken.err.contains("truncated"),
                 qPrintable(broken.err));
        // a file without a vocabulary opens nowhere else: one line saying so
        const auto text = clitest::run({"text", "--model", path, "hello"});
        QCOMPARE(text.exitCode, 2);
        QVERIFY2(text.err.contains("tokenizer.ggml.model ''"), qPrintable(text.err));
    }

    void damagedFilesAreOneClearError() {
        QTemporaryDir tmp;
        const std::string good = readAll(kDir / "quants.gguf");
        auto opened = [&](const std::string& bytes) {
            return errorOf([&] { (void)GgufFile::open(writeCopy(tmp, "bad.gguf", bytes)); });
        };
        // truncated anywhere: in the header, the metadata, the tensor table, the data
        for (size_t n : {size_t(0), size_t(3), size_t(10), size_t(30), size_t(200), size_t(900),
                         good.size() / 2, good.size() - 60}) { // the file's last 48 bytes are padding
            const QString e = opened(good.substr(0, n));
            QVERIFY2(e.contains("truncated") || e.contains("not a GGUF") ||
                         e.contains("longer than the file"),
                     qPrintable(QString("%1 bytes: %2").arg(n).arg(e)));
        }
        std::string bad = good;
        bad[0] = 'X';
        QVERIFY(opened(bad).contains("not a GGUF file"));
        bad = good;
        putU32(bad, 4, 1);
        QVERIFY(opened(bad).contains("version 1"));
        bad = good;
        putU32(bad, typeFieldOf(bad, "quant.q4_k", 2), 99);
        QVERIFY(opened(bad).contains("GGML type 99"));
        bad = good;
        putU64(bad, typeFieldOf(bad, "quant.q4_k", 2) + 4, uint64_t(1) << 40); // its offset
        QVERIFY(opened(bad).contains("run past the end"));
        bad = good;
        putU64(bad, typeFieldOf(bad, "quant.q4_k", 2) + 4, 64 * 3 + 8);
        QVERIFY(opened(bad).contains("not aligned"));
        bad = good;
        putU64(bad, typeFieldOf(bad, "quant.q4_k", 2) + 4, 0); // onto the first tensor
        QVERIFY(opened(bad).contains("overlap"));
        bad = good;
        const size_t at = bad.find("quant.q4_1");
        bad.replace(at, 10, "quant.q4_0"); // a name twice
        QVERIFY(opened(bad).contains("appears twice"));
        QVERIFY(errorOf([&] {
                    (void)GgufFile::open(tmp.filePath("absent.gguf").toStdString());
                }).contains("absent.gguf"));
    }
};

QTEST_GUILESS_MAIN(TestGguf)
#include "test_gguf.moc"
