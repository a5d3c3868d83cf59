// safetensors reader: files from an independent writer in F32/F16/BF16
// (tools/golden/safetensors_fixtures.py), and corrupt files made here byte by byte — each must give one clear
// error naming the file, never a crash (CI runs this suite under ASan + UBSan).

#include "core/io/json_file.h"
#include "core/io/safetensors.h"
#include "core/util/error.h"

#include <QTest>

#include <bit>
#include <cmath>
#include <fstream>

using namespace attnlens;

namespace {

const std::string kData = std::string(ATTNLENS_TEST_DATA) + "/safetensors";

std::string headerFile(const std::string& header, const std::string& data,
                       uint64_t lengthOverride = UINT64_MAX) {
    const uint64_t n = lengthOverride == UINT64_MAX ? header.size() : lengthOverride;
    std::string bytes;
    for (int b = 0; b < 8; ++b)
        bytes.push_back(static_cast<char>((n >> (8 * b)) & 0xff));
    return bytes + header + data;
}

} // namespace

class TestSafeTensors : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void goodFiles_data();
    void goodFiles();
    void halfConversionIsExact();
    void writerRoundTrip();
    void corrupt_data();
    void corrupt();
    void missingFileAndTensor();

private:
    std::string write(const QString& name, const std::string& bytes) {
        const std::string path = m_dir.filePath(name).toStdString();
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    QTemporaryDir m_dir;
};

void TestSafeTensors::goodFiles_data() {
    QTest::addColumn<QString>("dtype");
    QTest::newRow("F32 (unaligned data section)") << "F32";
    QTest::newRow("F16") << "F16";
    QTest::newRow("BF16") << "BF16";
}

void TestSafeTensors::goodFiles() {
    QFETCH(QString, dtype);
    const Json expected = readJsonFile(kData + "/expected.json")[dtype.toStdString()];
    const auto file = TensorFile::open(kData + "/" + dtype.toLower().toStdString() + ".safetensors");
    QCOMPARE(file.tensors().size(), expected.size());
    QCOMPARE(file.metadata().at("format"), std::string("pt"));
    QCOMPARE(file.metadata().at("dtype"), dtype.toStdString());
    QCOMPARE(file.tensors().front().name, std::string("weight")); // file order kept
    for (const auto& [name, e] : expected.items()) {
        const TensorInfo* info = file.find(name);
        QVERIFY2(info, name.c_str());
        QCOMPARE(std::string(dtypeName(info->dtype)), dtype.toStdString());
        const Tensor t = file.load(name);
        QCOMPARE(t.shape(), e["shape"].get<Shape>());
        const auto values = e["values"].get<std::vector<float>>();
        QCOMPARE(static_cast<size_t>(t.numel()), values.size());
        for (size_t i = 0; i < values.size(); ++i) // exact: conversion to float32 is lossless
            QVERIFY2(
                std::bit_cast<uint32_t>(t.data()[i]) == std::bit_cast<uint32_t>(values[i]),
                qPrintable(
                    QString("%1[%2]: %3 vs %4").arg(name.c_str()).arg(i).arg(t.data()[i]).arg(values[i])));
    }
}

void TestSafeTensors::halfConversionIsExact() {
    // Every finite half round-trips through float and back; NaN stays NaN; infinities keep their sign.
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = halfToFloat(static_cast<uint16_t>(h));
        if (std::isnan(f)) {
            QVERIFY(((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff));
            QVERIFY(std::isnan(halfToFloat(floatToHalf(f))));
            continue;
        }
        QCOMPARE(floatToHalf(f), static_cast<uint16_t>(h));
    }
    QCOMPARE(halfToFloat(0x3c00), 1.0f);
    QCOMPARE(halfToFloat(0x0001), 5.9604645e-08f);                  // smallest subnormal
    QCOMPARE(floatToHalf(1.0f + 1.0f / 2048.0f), uint16_t(0x3c00)); // tie rounds to even
    QCOMPARE(floatToHalf(70000.0f), uint16_t(0x7c00));              // overflow to +inf
    QCOMPARE(bfloat16ToFloat(0x3f80), 1.0f);
}

void TestSafeTensors::writerRoundTrip() {
    Tensor a({2, 3}, std::vector<float>{1, -2, 3.5f, 0.1f, 1e-5f, 300});
    const std::string path = m_dir.filePath("rt.safetensors").toStdString();
    writeSafeTensors(path, {{"a32", a, DType::F32}, {"a16", a, DType::F16}, {"ab16", a, DType::BF16}},
                     {{"k", "v"}});
    const auto f = TensorFile::open(path);
    QCOMPARE(f.metadata().at("k"), std::string("v"));
    const Tensor r32 = f.load("a32"), r16 = f.load("a16"), rb16 = f.load("ab16");
    for (int64_t i = 0; i < a.numel(); ++i) {
        QCOMPARE(r32.data()[i], a.data()[i]);
        QVERIFY(std::abs(r16.data()[i] - a.data()[i]) <= std::abs(a.data()[i]) * 1e-3f + 1e-7f);
        QVERIFY(std::abs(rb16.data()[i] - a.data()[i]) <= std::abs(a.data()[i]) * 8e-3f);
    }
}

void TestSafeTensors::corrupt_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("needle"); // a phrase the error message must contain
    auto add = [](const char* name, const std::string& bytes, const char* needle) {
        QTest::newRow(name) << QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size()))
                            << QString(needle);
    };
    const std::string ok = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
    add("empty file", "", "truncated");
    add("five bytes", "\x10\0\0\0\0", "truncated");
    add("header length past the end", headerFile(ok, std::string(8, '\0'), 4096), "runs past the end");
    add("huge header length", headerFile(ok, std::string(8, '\0'), uint64_t(1) << 62), "exceeds the limit");
    add("header length just over the limit", headerFile(ok, "", kMaxSafeTensorsHeaderBytes + 1),
        "exceeds the limit");
    add("bad JSON", headerFile(R"({"t":{"dtype":"F32",)", std::string(8, '\0')), "not valid JSON");
    add("JSON not an object", headerFile("[1, 2, 3]", ""), "must be a JSON object");
    // Regression, found by tests/fuzz/fuzz_safetensors: a number too large for a double made nlohmann throw
    // out_of_range (not parse_error), which escaped as an unclear std::exception.
    add("number overflow in the header",
        headerFile(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,4833e888]}})", std::string(8, '\0')),
        "not valid JSON");
    add("unknown dtype",
        headerFile(R"({"t":{"dtype":"X99","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')),
        "unknown dtype 'X99'");
    add("shape/bytes mismatch",
        headerFile(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')),
        "needs 12 bytes");
    add("offsets out of range",
        headerFile(R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(8, '\0')),
        "run past the data section");
    add("overlapping tensors",
        headerFile(
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
            std::string(12, '\0')),
        "overlap");
    add("begin after end",
        headerFile(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", std::string(8, '\0')),
        "is after end");
    add("negative dimension",
        headerFile(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", std::string(8, '\0')),
        "non-negative integers");
    add("offsets of wrong arity",
        headerFile(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", std::string(8, '\0')),
        "data_offsets");
    add("truncated data section", headerFile(ok, std::string(5, '\0')), "run past the data section");
    add("metadata not strings", headerFile(R"({"__metadata__":{"a":1}})", ""), "__metadata__");
    add("shape overflows",
        headerFile(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})",
                   std::string(8, '\0')),
        "too large");
    add("entry not an object", headerFile(R"({"t":[1,2]})", ""), "must be an object");
    add("dtype missing", headerFile(R"({"t":{"shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')),
        "dtype");
    add("offsets not integers",
        headerFile(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0.5,8]}})", std::string(8, '\0')),
        "non-negative integers");
    add("header not UTF-8 JSON", headerFile("\xff\xfe\xfd\xfc", ""), "not valid JSON");
}

void TestSafeTensors::corrupt() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, needle);
    const std::string path = write(
        QString(QTest::currentDataTag()).replace(QRegularExpression("[^A-Za-z0-9]"), "_") + ".safetensors",
        std::string(bytes.constData(), static_cast<size_t>(bytes.size())));
    try {
        const auto f = TensorFile::open(path);
        QFAIL("no error for a corrupt file");
    } catch (const Error& e) {
        const QString message = e.what();
        QVERIFY2(message.contains(QString::fromStdString(path)),
                 qPrintable("message lacks the file name: " + message));
        QVERIFY2(message.contains(needle), qPrintable("message lacks '" + needle + "': " + message));
    }
}

void TestSafeTensors::missingFileAndTensor() {
    QVERIFY_THROWS_EXCEPTION(Error, TensorFile::open(m_dir.filePath("nope.safetensors").toStdString()));
    QVERIFY_THROWS_EXCEPTION(Error, TensorFile::open(m_dir.path().toStdString())); // a directory
    const auto f = TensorFile::open(kData + "/f32.safetensors");
    try {
        f.load("not_there");
        QFAIL("no error for a missing tensor");
    } catch (const Error& e) {
        QVERIFY(QString(e.what()).contains("'not_there' not found"));
    }
    // An unsupported but legal dtype is listed, and loading it says why it cannot be.
    const std::string path =
        write("i64.safetensors", headerFile(R"({"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})",
                                            std::string(8, '\0')));
    const auto g = TensorFile::open(path);
    QCOMPARE(g.tensors().size(), size_t(1));
    QVERIFY_THROWS_EXCEPTION(Error, g.load("ids"));
}

QTEST_GUILESS_MAIN(TestSafeTensors)
#include "test_safetensors.moc"
