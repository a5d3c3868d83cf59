// A Stable Diffusion pipeline's text side (issue 41) against transformers v4.33.3's own CLIPTokenizer and
// CLIPTextModel (tests/data/t2i/tiny-pipe, tools/golden/make_clip_fixtures.py): ids identical (special tokens
// typed in the text, SD 2.x's "!" pad, capitals, contractions, digits, accents, CJK, emoji, control
// characters, a prompt past 77 tokens), the pipeline's padded ids, last hidden state and every attention
// within 1e-4 (fp16 weights too), the attention on demand equal to the captured one, and the CLI's tokenize /
// text.

#include "core/io/json_file.h"
#include "core/io/tensor_file.h"
#include "core/models/clip_text_model.h"
#include "core/models/text_folder.h"
#include "core/text/clip_tokenizer.h"
#include "core/text/unicode_text.h"
#include "core/util/error.h"
#include "support/cli_run.h"
#include "support/on_demand_check.h"
#include "support/text_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using namespace attnlens;

namespace {

const std::filesystem::path kPipe = std::filesystem::path(ATTNLENS_TEST_DATA) / "t2i" / "tiny-pipe";

std::vector<std::string> pieces(const std::u32string& text) {
    std::vector<std::string> out;
    for (const auto& p : clipPretokenize(text))
        out.push_back(unicode::encodeUtf8(p));
    return out;
}

} // namespace

class TestClip : public QObject {
    Q_OBJECT
private slots:
    void pattern() {
        QCOMPARE(pieces(U"it's 123 ab!!c <|endoftext|>x 'll"),
                 (std::vector<std::string>{"it", "'s", "1", "2", "3", "ab", "!!", "c", "<|endoftext|>", "x",
                                           "'ll"}));
        QCOMPARE(pieces(U"!<|endoftext|>"), (std::vector<std::string>{"!<|", "endoftext", "|>"}));
    }

    void tokenizerMatchesTransformers_data() {
        QTest::addColumn<QString>("folder");
        QTest::newRow("SD 1.x: pad <|endoftext|>") << "tokenizer";
        QTest::newRow("SD 2.x: pad !") << "tokenizer-pad-bang";
    }
    void tokenizerMatchesTransformers() {
        QFETCH(QString, folder);
        const auto dir = kPipe / folder.toStdString();
        QVERIFY(ClipTokenizer::present(dir));
        const auto tok = ClipTokenizer::load(dir);
        const Json cases = readJsonFile(dir / "golden.json")["cases"];
        QVERIFY(cases.size() >= 9);
        for (const Json& c : cases) {
            const std::string prompt = c["prompt"].get<std::string>();
            const TextEncoding e = tok->encode(prompt);
            QCOMPARE(e.tokens, c["tokens"].get<std::vector<std::string>>());
            QCOMPARE(e.ids, c["ids"].get<std::vector<int>>());
            QCOMPARE(tok->encodePadded(prompt).ids, c["pipeline_ids"].get<std::vector<int>>());
        }
        QCOMPARE(loadTextTokenizer(dir)->encode("a cat").ids, tok->encode("a cat").ids);
        QCOMPARE(tok->tokenText(tok->encode("a cat").ids[2]), std::string("cat "));
    }

    void textEncoderMatchesTransformers_data() {
        QTest::addColumn<QString>("folder");
        QTest::newRow("quick_gelu, float32 (SD 1.x)") << "text_encoder";
        QTest::newRow("gelu, stored float16 (SD 2.x)") << "text_encoder-gelu-fp16";
    }
    void textEncoderMatchesTransformers() {
        QFETCH(QString, folder);
        const auto dir = kPipe / folder.toStdString();
        const TextFolder f = loadTextFolder(dir); // its tokenizer: ../tokenizer
        QCOMPARE(f.modelType, std::string("clip_text_model"));
        QCOMPARE(f.padTo, 77);
        const auto golden = TensorFile::open(dir / "golden.safetensors");
        const Json cases = readJsonFile(dir / "golden.json")["cases"];
        for (size_t i = 0; i < cases.size(); ++i) {
            const TextEncoding e = f.encode(cases[i]["prompt"].get<std::string>());
            QCOMPARE(e.ids, cases[i]["ids"].get<std::vector<int>>());
            const TextForward out = f.forward(e.ids);
            const std::string p = "t" + std::to_string(i) + ".";
            const Tensor hidden = golden.load(p + "last_hidden_state"), att = golden.load(p + "attentions");
            QCOMPARE(out.hidden.size(), hidden.numel());
            QVERIFY2(
                texttest::maxDiff(out.hidden.data(), hidden.data(), hidden.numel()) < texttest::kTol,
                qPrintable(QString("case %1 hidden: %2")
                               .arg(i)
                               .arg(texttest::maxDiff(out.hidden.data(), hidden.data(), hidden.numel()))));
            QCOMPARE(shapeToString(out.attentions.shape()), shapeToString(att.shape()));
            QVERIFY2(texttest::maxDiff(out.attentions.data(), att.data(), att.numel()) < texttest::kTol,
                     qPrintable(QString("case %1 attention").arg(i)));
        }
        texttest::checkOnDemand(*f.model, f.encode("a photo of a cat").ids, {{1, 2}});
    }

    void cliTokenizeAndText() {
        QTemporaryDir tmp;
        const QString ids = tmp.filePath("ids.json"), hidden = tmp.filePath("hidden.json");
        const QString prompt = QStringLiteral("A Sneaker ABOVE a bag, a dress on the right.");
        const auto tokenize =
            clitest::run({"tokenize", "--model", QString::fromStdString((kPipe / "tokenizer").string()),
                          "--json", ids, prompt});
        QCOMPARE(tokenize.exitCode, 0);
        const Json tokGolden = readJsonFile(kPipe / "tokenizer" / "golden.json")["cases"][1];
        QCOMPARE(readJsonFile(ids.toStdString())["ids"].get<std::vector<int>>(),
                 tokGolden["ids"].get<std::vector<int>>());
        const auto text =
            clitest::run({"text", "--model", QString::fromStdString((kPipe / "text_encoder").string()),
                          "--json", hidden, prompt});
        QVERIFY2(text.exitCode == 0, qPrintable(text.err));
        const Json out = readJsonFile(hidden.toStdString());
        QCOMPARE(out["ids"].get<std::vector<int>>(), tokGolden["pipeline_ids"].get<std::vector<int>>());
        const auto golden =
            TensorFile::open(kPipe / "text_encoder" / "golden.safetensors").load("t0.last_hidden_state");
        std::vector<float> got;
        for (const Json& row : out["last_hidden_state"])
            for (const Json& v : row)
                got.push_back(v.get<float>());
        QCOMPARE(int64_t(got.size()), golden.numel());
        QVERIFY(texttest::maxDiff(got.data(), golden.data(), golden.numel()) < texttest::kTol);
    }

    // A tokenizer folder without merges.txt, or whose special token is not in the vocabulary: one message.
    void badFolders() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        std::filesystem::copy_file(kPipe / "tokenizer" / "vocab.json", dir / "vocab.json");
        std::filesystem::copy_file(kPipe / "tokenizer" / "tokenizer_config.json",
                                   dir / "tokenizer_config.json");
        QVERIFY(!ClipTokenizer::present(dir));
        const auto missing = clitest::run({"tokenize", "--model", tmp.path(), "cat"});
        QCOMPARE(missing.exitCode, 2);
        std::filesystem::copy_file(kPipe / "tokenizer" / "merges.txt", dir / "merges.txt");
        QVERIFY(ClipTokenizer::present(dir));
        Json config = readJsonFile(dir / "tokenizer_config.json");
        config["pad_token"] = "<|nope|>";
        writeJsonFile(dir / "tokenizer_config.json", config);
        try {
            ClipTokenizer::load(dir);
            QFAIL("a pad token outside the vocabulary loaded");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("pad_token '<|nope|>' is not in the vocabulary") !=
                         std::string::npos,
                     e.what());
        }
        clitest::expectError(clitest::run({"tokenize", "--model", tmp.path(), "cat"}), "<|nope|>");
    }
};

QTEST_MAIN(TestClip)
#include "test_clip.moc"
