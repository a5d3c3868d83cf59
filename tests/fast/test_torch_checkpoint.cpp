// PyTorch checkpoint reader (core/io/torch_checkpoint, core/io/pickle): files written by Debian's real
// torch.save in both formats (tools/golden/make_torch_checkpoints.py), pickles written here byte by byte, and
// every truncation / single-byte change of the real files — each must load or give one clear error naming the
// file, never crash (CI runs this suite under ASan + UBSan), and a hostile pickle must be refused unrun.

#include "core/io/json_file.h"
#include "core/io/tensor_file.h"
#include "core/util/error.h"

#include <QTest>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace attnlens;

namespace {

const std::filesystem::path kData = std::filesystem::path(ATTNLENS_TEST_DATA) / "torch";

std::string readBytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::string u32(uint32_t v) {
    std::string s;
    for (int b = 0; b < 4; ++b)
        s.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
    return s;
}
std::string u64(uint64_t v) {
    std::string s;
    for (int b = 0; b < 8; ++b)
        s.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
    return s;
}
std::string str(const std::string& s) {
    return "X" + u32(static_cast<uint32_t>(s.size())) + s;
} // BINUNICODE

// A legacy-format checkpoint written by hand: {"w": tensor of `size` at `offset` with `stride`} over one
// float storage holding 0, 1, 2, 3. `statePickle` replaces the state dict's pickle when given.
std::string legacyFile(int offset, int size, int stride, const std::string& statePickle = {}) {
    const std::string magic("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15);
    const std::string protocol("\x80\x02M\xe9\x03.", 6);
    const std::string sysInfo = "\x80\x02}(" + str("little_endian") + "\x88u.";
    std::string state = statePickle;
    if (state.empty()) {
        state = "\x80\x02}(" + str("w") + "ctorch._utils\n_rebuild_tensor_v2\n((" + str("storage") +
                "ctorch\nFloatStorage\n" + str("k") + str("cpu") + "K\x04Nt" + "Q" + "K" + char(offset) +
                "K" + char(size) + "\x85" + "K" + char(stride) + "\x85" + "\x89" +
                "ccollections\nOrderedDict\n)R" + "tRu.";
    }
    const std::string keys = "\x80\x02](" + str("k") + "e.";
    std::string data = u64(4);
    for (float v : {0.0f, 1.0f, 2.0f, 3.0f})
        data += std::string(reinterpret_cast<const char*>(&v), 4);
    return magic + protocol + sysInfo + state + keys + data;
}

} // namespace

class TestTorchCheckpoint : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void layouts_data();
    void layouts();
    void wrappedStateDict();
    void hostilePickleIsRefusedUnrun_data();
    void hostilePickleIsRefusedUnrun();
    void handWrittenLegacy();
    void safetensorsThatStartLikeAPickle();
    void handWrittenPickles_data();
    void handWrittenPickles();
    void everyTruncation_data();
    void everyTruncation();
    void everyByteChanged_data();
    void everyByteChanged();

private:
    std::filesystem::path write(const QString& name, const std::string& bytes) {
        const std::filesystem::path path = m_dir.filePath(name).toStdString();
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    QTemporaryDir m_dir;
};

void TestTorchCheckpoint::layouts_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("format");
    QTest::newRow("zip (PyTorch >= 1.6)") << "layouts.zip.bin" << int(TensorFile::Format::TorchZip);
    QTest::newRow("legacy") << "layouts.legacy.bin" << int(TensorFile::Format::TorchLegacy);
}

void TestTorchCheckpoint::layouts() {
    QFETCH(QString, file);
    QFETCH(int, format);
    const auto f = TensorFile::open(kData / file.toStdString());
    QCOMPARE(int(f.format()), format);
    const Json expected = readJsonFile(kData / "layouts.json");
    QCOMPARE(f.tensors().size(), expected.size());
    QCOMPARE(f.tensors().front().name, std::string("w")); // the state dict's order
    for (const auto& [name, e] : expected.items()) {
        const TensorInfo* info = f.find(name);
        QVERIFY2(info, name.c_str());
        QCOMPARE(std::string(dtypeName(info->dtype)), e["dtype"].get<std::string>());
        QCOMPARE(shapeToString(info->shape), shapeToString(e["shape"].get<Shape>()));
        QCOMPARE(info->contiguous(), e["contiguous"].get<bool>());
        if (info->dtype ==
            DType::I64) { // listed (position ids in older checkpoints), never loaded as a weight
            QVERIFY_THROWS_EXCEPTION(Error, f.load(*info));
            continue;
        }
        const Tensor t = f.load(*info);
        const auto values = e["values"].get<std::vector<float>>();
        QCOMPARE(t.numel(), int64_t(values.size()));
        for (size_t i = 0; i < values.size(); ++i)
            QVERIFY2(
                t.data()[i] == values[i],
                qPrintable(
                    QString("%1[%2]: %3 vs %4").arg(name.c_str()).arg(i).arg(t.data()[i]).arg(values[i])));
    }
    // Tied tensors are one storage, as torch.save wrote them; views point into theirs.
    QCOMPARE(f.find("tied")->storage, f.find("w")->storage);
    QCOMPARE(f.find("tied")->begin, f.find("w")->begin);
    QCOMPARE(f.find("t")->storage, f.find("w")->storage);
    QCOMPARE(f.find("row")->begin, uint64_t(3 * 4));
    // In a zip (entries aligned to 64 bytes) a contiguous F32 tensor is a view on the mapped file, not a
    // copy: two loads share memory. The legacy format packs storages unaligned, so there they are copied.
    if (f.format() == TensorFile::Format::TorchZip) QCOMPARE(f.load("w").data(), f.load("tied").data());
}

void TestTorchCheckpoint::wrappedStateDict() {
    const auto f = TensorFile::open(kData / "wrapped.zip.bin");
    QCOMPARE(f.tensors().size(), size_t(8));
    QCOMPARE(f.load("row").toVector(), (std::vector<float>{3.0f, 4.5f, -6.0f}));
}

void TestTorchCheckpoint::hostilePickleIsRefusedUnrun_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("zip") << "hostile.zip.bin";
    QTest::newRow("legacy") << "hostile.legacy.bin";
}

void TestTorchCheckpoint::hostilePickleIsRefusedUnrun() {
    QFETCH(QString, file);
    const std::filesystem::path marker = "/tmp/attnlens-pickle-ran";
    std::filesystem::remove(marker);
    try {
        TensorFile::open(kData / file.toStdString());
        QFAIL("a pickle calling os.system was accepted");
    } catch (const Error& e) {
        const QString msg = e.what();
        QVERIFY2(msg.contains("posix.system") && msg.contains("nothing in the file was run") &&
                     msg.contains(file),
                 e.what());
    }
    QVERIFY(!std::filesystem::exists(marker));
}

void TestTorchCheckpoint::handWrittenLegacy() {
    // A valid view: [1, 3] from offset 1 with stride 2.
    const auto f = TensorFile::open(write("view.bin", legacyFile(1, 2, 2)));
    QCOMPARE(f.load("w").toVector(), (std::vector<float>{1.0f, 3.0f}));
    // Outside the storage: by offset, by size, by stride — an error naming the tensor, nothing read.
    for (const auto& [bytes, what] :
         {std::pair{legacyFile(3, 2, 1), "offset"}, std::pair{legacyFile(0, 5, 1), "size"},
          std::pair{legacyFile(0, 2, 9), "stride"}}) {
        try {
            TensorFile::open(write("outside.bin", bytes));
            QFAIL(what);
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("tensor 'w'") &&
                         QString(e.what()).contains("runs past its storage"),
                     e.what());
        }
    }
}

// Regression: a safetensors header of 0x280 bytes begins 0x80 0x02, as a pickle does; it is still
// safetensors.
void TestTorchCheckpoint::safetensorsThatStartLikeAPickle() {
    std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    header.resize(0x280, ' ');
    const float one = 1.0f;
    const auto f = TensorFile::open(
        write("pickle-like.safetensors",
              u64(header.size()) + header + std::string(reinterpret_cast<const char*>(&one), 4)));
    QCOMPARE(int(f.format()), int(TensorFile::Format::SafeTensors));
    QCOMPARE(f.load("w").toVector(), std::vector<float>{1.0f});
}

void TestTorchCheckpoint::handWrittenPickles_data() {
    QTest::addColumn<QByteArray>("state");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, const std::string& s, const char* message) {
        QTest::newRow(name) << QByteArray(s.data(), qsizetype(s.size())) << QString(message);
    };
    row("builtins.eval through GLOBAL",
        "\x80\x02"
        "cbuiltins\neval\n" +
            str("1") + "\x85R.",
        "'builtins.eval'");
    row("os.system through STACK_GLOBAL", "\x80\x04" + str("os") + str("system") + "\x93.", "'os.system'");
    row("INST (calls by name)", "\x80\x02(ios\nsystem\n.", "opcode 0x69 is not admitted");
    row("OBJ", "\x80\x02(o.", "opcode 0x6f is not admitted");
    row("NEWOBJ", "\x80\x02\x81.", "opcode 0x81 is not admitted");
    row("a string longer than the file", "\x80\x02X\xff\xff\xff\x7f", "runs past the data");
    row("memo never stored", "\x80\x02h\x07.", "memo entry 7 was never stored");
    row("pop from an empty stack",
        "\x80\x02"
        "0.",
        "pops an empty stack");
    row("STOP with leftovers", "\x80\x02NN.", "values left on the stack");
    row("calling a storage type",
        "\x80\x02"
        "ctorch\nFloatStorage\n)R.",
        "is a type");
    row("OrderedDict with arguments",
        "\x80\x02"
        "ccollections\nOrderedDict\n(N\x85tR.",
        "without arguments");
    row("not a dict", "\x80\x02].", "not a dict");
    row("no tensors", "\x80\x02}.", "holds no tensors");
    row("persistent id that is no storage", "\x80\x02" + str("x") + "Q.", "persistent id");
    row("unknown protocol", "\x80\x09.", "protocol 9");
    row("a number longer than the file", "\x80\x02\x8a\xff", "more bytes");
}

void TestTorchCheckpoint::handWrittenPickles() {
    QFETCH(QByteArray, state);
    QFETCH(QString, message);
    try {
        TensorFile::open(write("crafted.bin", legacyFile(0, 1, 1, state.toStdString())));
        QFAIL("accepted");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains(message) && QString(e.what()).contains("crafted.bin"), e.what());
    }
}

void TestTorchCheckpoint::everyTruncation_data() {
    QTest::addColumn<QString>("file");
    for (const char* f : {"layouts.zip.bin", "layouts.legacy.bin"})
        QTest::newRow(f) << f;
}

void TestTorchCheckpoint::everyTruncation() {
    QFETCH(QString, file);
    const std::string bytes = readBytes(kData / file.toStdString());
    const auto whole = TensorFile::open(kData / file.toStdString());
    size_t refused = 0;
    for (size_t n = 0; n < bytes.size(); ++n) {
        const auto path = write("cut.bin", bytes.substr(0, n));
        try { // only a cut that loses no tensor byte may load (a zip's last record repeats its zip64 one)
            const auto f = TensorFile::open(path);
            for (const auto& info : f.tensors())
                if (isFloatWeightType(info.dtype))
                    QCOMPARE(f.load(info).toVector(), whole.load(info.name).toVector());
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("cut.bin"), e.what());
            ++refused;
        }
    }
    QVERIFY2(refused + 24 >= bytes.size(),
             qPrintable(QString("%1 of %2 cuts refused").arg(refused).arg(bytes.size())));
}

void TestTorchCheckpoint::everyByteChanged_data() {
    everyTruncation_data();
}

void TestTorchCheckpoint::everyByteChanged() {
    QFETCH(QString, file);
    const std::string bytes = readBytes(kData / file.toStdString());
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::string changed = bytes;
        changed[i] = static_cast<char>(changed[i] ^ 0x5a);
        const auto path = write("changed.bin", changed);
        try { // loads (a changed value) or refuses with a message; never crashes or reads outside the file
            const auto f = TensorFile::open(path);
            for (const auto& info : f.tensors())
                if (isFloatWeightType(info.dtype)) (void)f.load(info);
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("changed.bin"), e.what());
        }
    }
}

QTEST_GUILESS_MAIN(TestTorchCheckpoint)
#include "test_torch_checkpoint.moc"
