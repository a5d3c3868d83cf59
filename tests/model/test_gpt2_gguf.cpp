// GPT-2 from GGUF files (core/models/gpt2_gguf.h) against the Hugging Face folder they were converted from
// (tests/data/text/gpt2, held to transformers by test_text_models): tools/golden/make_gguf_fixtures.py lays
// it out as llama.cpp's converter does (Conv1D weights transposed to [out, in], output.weight repeating the
// token embeddings, the real byte-level vocabulary and merges). The F32 file gives the folder's logits and
// attention; the Q8_0 file stays within the error its rounding makes, measured here; its tokenizer gives the
// folder's ids; it opens as a text model; missing metadata is one clear error.

#include "core/io/gguf.h"
#include "core/models/gpt2_gguf.h"
#include "core/models/text_folder.h"
#include "support/cli_run.h"
#include "support/error_of.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

const std::filesystem::path kData = ATTNLENS_TEST_DATA;
const std::filesystem::path kFolder = kData / "text" / "gpt2";

float maxAbs(const float* a, const float* b, int64_t n) {
    float m = 0;
    for (int64_t i = 0; i < n; ++i)
        m = std::max(m, std::abs(a[i] - b[i]));
    return m;
}

} // namespace

class TestGpt2Gguf : public QObject {
    Q_OBJECT
private slots:
    void matchesTheFolder_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("logitBound");
        QTest::addColumn<double>("attentionBound");
        QTest::newRow("F32") << "gpt2.f32.gguf" << 1e-4 << 1e-5;
        // Q8_0's rounding (a 255-step grid per 32 weights): measured logits 0.051, attention 0.011 (max)
        QTest::newRow("Q8_0") << "gpt2.q8_0.gguf" << 0.08 << 0.02;
    }
    void matchesTheFolder() {
        QFETCH(QString, file);
        QFETCH(double, logitBound);
        QFETCH(double, attentionBound);
        const TextFolder gguf = loadTextFolder(kData / "gguf" / file.toStdString());
        const TextFolder hf = loadTextFolder(kFolder);
        QCOMPARE(gguf.modelType, std::string("gpt2"));
        QVERIFY(gguf.gpt2);
        const Gpt2Config &a = gguf.gpt2->config(), &b = hf.gpt2->config();
        QCOMPARE(a.embd, b.embd);
        QCOMPARE(a.layers, b.layers);
        QCOMPARE(a.heads, b.heads);
        QCOMPARE(a.inner, b.inner);
        QCOMPARE(a.positions, b.positions);
        QCOMPARE(a.vocabSize, b.vocabSize);
        QCOMPARE(a.eosTokenId, b.eosTokenId);
        for (const char* text : {"Hello world, the weather is nice today.", " leading  spaces\tand\ntabs 123",
                                 "<|endoftext|>the world"}) {
            const TextEncoding e = gguf.tokenizer->encode(text);
            QCOMPARE(e.ids, hf.tokenizer->encode(text).ids);
        }
        const std::vector<int> ids = hf.tokenizer->encode("Hello world, the weather is nice today.").ids;
        const TextForward x = gguf.model->forward(ids), y = hf.model->forward(ids);
        QCOMPARE(x.logits.rows(), y.logits.rows());
        QCOMPARE(x.attentions.shape(), y.attentions.shape());
        const float logits = (x.logits - y.logits).cwiseAbs().maxCoeff();
        const float attention = maxAbs(x.attentions.data(), y.attentions.data(), x.attentions.numel());
        qInfo("%s: logits %.3g, attention %.3g", qPrintable(file), logits, attention);
        QVERIFY2(logits <= logitBound, qPrintable(QString("logits differ by %1").arg(logits)));
        QVERIFY2(attention <= attentionBound, qPrintable(QString("attention differs by %1").arg(attention)));
    }

    // The CLI's tokenize and text take the file as they take the folder.
    void cliTakesTheFile() {
        const QString gguf = QString::fromStdString((kData / "gguf" / "gpt2.q8_0.gguf").string());
        const QString folder = QString::fromStdString(kFolder.string());
        const QString text = QStringLiteral("Hello world, the weather<|endoftext|> is nice");
        const clitest::Run a = clitest::run({"tokenize", "--model", gguf, text}),
                           b = clitest::run({"tokenize", "--model", folder, text});
        QVERIFY2(a.exitCode == 0 && !a.crashed, qPrintable(a.err));
        QCOMPARE(a.out, b.out);
        const clitest::Run t = clitest::run({"text", "--model", gguf, "--generate", "2", "Hello world"});
        QVERIFY2(t.exitCode == 0 && !t.crashed, qPrintable(t.err));
        QVERIFY(t.out.startsWith("Hello world"));
    }

    void tensorNames() {
        QCOMPARE(gpt2TensorName("blk.1.attn_qkv.weight"), std::string("h.1.attn.c_attn.weight"));
        QCOMPARE(gpt2TensorName("blk.0.ffn_down.bias"), std::string("h.0.mlp.c_proj.bias"));
        QCOMPARE(gpt2TensorName("position_embd.weight"), std::string("wpe.weight"));
        QVERIFY(gpt2TensorName("output.weight").empty()); // the tied head
        QVERIFY(gpt2TensorName("blk.x.attn_qkv.weight").empty());
    }

    // The file without gpt2.block_count: one error naming the key.
    void missingMetadataIsOneClearError() {
        const GgufFile f = GgufFile::open(kData / "gguf" / "gpt2.f32.gguf");
        std::ifstream in(f.path(), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        const std::string key = "gpt2.block_count";
        const size_t at = bytes.find(key);
        QVERIFY(at != std::string::npos);
        bytes[at + 5] = 'X'; // gpt2.Xlock_count
        QTemporaryDir tmp;
        const std::filesystem::path damaged = tmp.filePath("damaged.gguf").toStdString();
        std::ofstream(damaged, std::ios::binary) << bytes;
        const QString message = errorOf([&] { loadTextFolder(damaged); });
        QVERIFY2(message.contains("gpt2.block_count' is missing"), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestGpt2Gguf)
#include "test_gpt2_gguf.moc"
