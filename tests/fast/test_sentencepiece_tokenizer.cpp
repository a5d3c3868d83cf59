// tokenizer.model folders (core/text/sentencepiece_tokenizer): Mistral-7B's vocabulary as a SentencePiece
// model (tests/data/tokenizers/mistral-spm, rebuilt from the real tokenizer.json by
// tools/golden/make_sentencepiece_fixture.py) gives the ids Hugging Face's Rust library gives on the real
// tokenizer.json on every edge case; tokenizer_config.json's switches (legacy, add_bos_token, add_eos_token,
// added tokens) are honoured; bad files refused naming the file.

#include "core/io/json_file.h"
#include "core/models/text_folder.h"
#include "core/text/sentencepiece_tokenizer.h"
#include "core/util/error.h"
#include "support/error_of.h"

#include <QTest>

#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

const std::filesystem::path kGoldens = std::filesystem::path(ATTNLENS_TEST_DATA) / "tokenizers";
const std::filesystem::path kSpm = std::filesystem::path(ATTNLENS_TOKENIZERS_DIR) / "mistral-spm";
using Ids = std::vector<int>;

// A copy of the fixture with its tokenizer_config.json changed by `edit`.
std::filesystem::path withConfig(const QTemporaryDir& tmp, const std::function<void(Json&)>& edit) {
    const std::filesystem::path dir = tmp.path().toStdString();
    std::filesystem::copy_file(kSpm / "tokenizer.model", dir / "tokenizer.model",
                               std::filesystem::copy_options::overwrite_existing);
    Json config = readJsonFile(kSpm / "tokenizer_config.json");
    edit(config);
    std::ofstream(dir / "tokenizer_config.json") << config.dump();
    return dir;
}

} // namespace

class TestSentencePieceTokenizer : public QObject {
    Q_OBJECT
private slots:
    void idsEqualTheRustLibraryOnTheSameVocabulary() {
        const auto tok = SentencePieceTokenizer::load(kSpm);
        QCOMPARE(tok->vocabSize(), 32000);
        const Json golden = readJsonFile(kGoldens / "mistral" / "golden.json");
        int checked = 0;
        for (const Json& c : golden["cases"]) {
            const std::string text = c["text"].get<std::string>();
            const TextEncoding e = tok->encode(text);
            QVERIFY2(e.ids == c["ids"].get<Ids>(), text.c_str());
            QCOMPARE(tok->encodePlain(text).ids, c["ids_no_special"].get<Ids>());
            QCOMPARE(e.tokens, c["tokens"].get<std::vector<std::string>>());
            ++checked;
        }
        QVERIFY(checked >= 20);
        QVERIFY(tok->framesText(1));
        QCOMPARE(tok->endOfTextId(), 2);
        QCOMPARE(tok->tokenText(tok->encodePlain("Hello").ids.at(0)), std::string(" Hello"));
        QCOMPARE(tok->tokenText(13), std::string("\n")); // <0x0A>
    }

    void configSwitches() {
        {
            // transformers' legacy=False: the "▁" prefix only where the text begins, not after <s>.
            QTemporaryDir tmp;
            const auto tok =
                SentencePieceTokenizer::load(withConfig(tmp, [](Json& c) { c["legacy"] = false; }));
            QCOMPARE(tok->encodePlain("<s>x").ids, (Ids{1, 28744}));        // "x"
            QCOMPARE(tok->encodePlain("x<s>x").ids, (Ids{1318, 1, 28744})); // "▁x", <s>, "x"
        }
        {
            QTemporaryDir tmp;
            const auto tok = SentencePieceTokenizer::load(withConfig(tmp, [](Json& c) {
                c["add_bos_token"] = false;
                c["add_eos_token"] = true;
            }));
            QCOMPARE(tok->encode("x").ids, (Ids{1318, 2}));
            QVERIFY(tok->framesText(2) && !tok->framesText(1));
        }
        {
            // No tokenizer_config.json: the model's control and unknown pieces are the special tokens.
            QTemporaryDir tmp;
            const std::filesystem::path dir = tmp.path().toStdString();
            std::filesystem::copy_file(kSpm / "tokenizer.model", dir / "tokenizer.model");
            const auto tok = SentencePieceTokenizer::load(dir);
            QCOMPARE(tok->encode("x</s>").ids, (Ids{1, 1318, 2}));
            QCOMPARE(loadTextTokenizer(dir)->encode("x").ids, (Ids{1, 1318}));
        }
    }

    void badFilesRefused() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        QVERIFY(errorOf([&] { SentencePieceTokenizer::load(dir); }).contains("tokenizer.model is missing"));
        std::ofstream(dir / "tokenizer.model") << "not a model";
        QVERIFY(errorOf([&] { SentencePieceTokenizer::load(dir); }).contains("not a SentencePiece model"));
        QTemporaryDir tmp2;
        const auto bad = withConfig(tmp2, [](Json& c) {
            c["added_tokens_decoder"]["40000"] = {{"content", "<x>"}};
        });
        QVERIFY(errorOf([&] { SentencePieceTokenizer::load(bad); }).contains("added token '40000'"));
        QTemporaryDir tmp3;
        const auto wrong = withConfig(tmp3, [](Json& c) { c["add_bos_token"] = "yes"; });
        QVERIFY(errorOf([&] {
                    SentencePieceTokenizer::load(wrong);
                }).contains("'add_bos_token' is not true or false"));
        QVERIFY(errorOf([&] {
                    SentencePieceTokenizer::load(kSpm)->encode("\xC0\x80");
                }).contains("not valid UTF-8"));
    }
};

QTEST_GUILESS_MAIN(TestSentencePieceTokenizer)
#include "test_sentencepiece_tokenizer.moc"
