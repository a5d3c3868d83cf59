// tokenizer.json tokenizers (core/text/hf_tokenizer) on the real files of Llama 3, Qwen3, Gemma 3 and Mistral
// (tests/data/tokenizers, unpacked into the build tree) against Hugging Face's own Rust library
// (tools/golden/make_tokenizer_goldens.mjs): ids identical on every edge case, with and without the
// template's special tokens; bad files refused naming the field.

#include "core/io/json_file.h"
#include "core/text/hf_tokenizer.h"
#include "core/util/error.h"
#include "support/error_of.h"

#include <QTest>

#include <chrono>
#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

const std::filesystem::path kGoldens = std::filesystem::path(ATTNLENS_TEST_DATA) / "tokenizers";
const std::filesystem::path kFiles = ATTNLENS_TOKENIZERS_DIR;

QString ids(const std::vector<int>& v) {
    QStringList s;
    for (int i : v)
        s << QString::number(i);
    return s.join(',');
}

} // namespace

class TestHfTokenizer : public QObject {
    Q_OBJECT
private slots:
    void idsEqualTheRustLibrary_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("Llama 3: byte-level, \\p{N}{1,3}, ignore_merges") << "llama3";
        QTest::newRow("Qwen3: NFC, byte-level, merges as pairs") << "qwen3";
        QTest::newRow("Gemma 3: ▁, byte fallback, 6 415 added tokens, <bos>") << "gemma3";
        QTest::newRow("Mistral: Prepend ▁, byte fallback, <s>") << "mistral";
    }
    void idsEqualTheRustLibrary() {
        QFETCH(QString, name);
        const auto start = std::chrono::steady_clock::now();
        const auto tok = HfTokenizer::load(kFiles / name.toStdString());
        qInfo("%s loaded in %.2f s", qPrintable(name),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        const Json golden = readJsonFile(kGoldens / name.toStdString() / "golden.json");
        int checked = 0;
        for (const Json& c : golden["cases"]) {
            const std::string text = c["text"].get<std::string>();
            const auto expected = c["ids"].get<std::vector<int>>();
            const TextEncoding e = tok->encode(text);
            QVERIFY2(e.ids == expected,
                     qPrintable(QString("%1\n got      %2\n expected %3")
                                    .arg(QString::fromStdString(text).left(60), ids(e.ids), ids(expected))));
            QCOMPARE(tok->encodePlain(text).ids, c["ids_no_special"].get<std::vector<int>>());
            QCOMPARE(e.tokens, c["tokens"].get<std::vector<std::string>>());
            ++checked;
        }
        QVERIFY(checked >= 20);
    }

    void tokenTextsForDisplay() {
        const auto llama = HfTokenizer::load(kFiles / "llama3");
        const TextEncoding e = llama->encodePlain(" world\n");
        QCOMPARE(llama->tokenText(e.ids.at(0)), std::string(" world"));
        const auto mistral = HfTokenizer::load(kFiles / "mistral");
        const TextEncoding m = mistral->encode("Hello world");
        QVERIFY(mistral->framesText(m.ids.at(0)));
        QCOMPARE(mistral->decode(std::vector<int>(m.ids.begin() + 1, m.ids.end())),
                 std::string("Hello world"));
        QCOMPARE(mistral->tokenText(*mistral->id("<0x0A>")), std::string("\n"));
    }

    void badFilesRefused() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        auto write = [&](const Json& j) { std::ofstream(dir / "tokenizer.json") << j.dump(); };
        const Json base = {{"model",
                            {{"type", "BPE"},
                             {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}},
                             {"merges", Json::array({"a b"})}}}};
        write(base);
        QCOMPARE(HfTokenizer::load(dir)->encode("abab").ids, (std::vector<int>{2, 2}));
        QVERIFY(errorOf([&] { HfTokenizer::load(dir)->encode("ab\xF0"); }).contains("not valid UTF-8"));
        QVERIFY(errorOf([&] { HfTokenizer::load(dir)->encode("\xC0\x80"); }).contains("not valid UTF-8"));
        Json j = base;
        j["model"]["type"] = "Unigram";
        write(j);
        QVERIFY(errorOf([&] { HfTokenizer::load(dir); }).contains("model type 'Unigram' is not supported"));
        j = base;
        j["model"]["merges"] = Json::array({"a c"});
        write(j);
        QVERIFY(errorOf([&] { HfTokenizer::load(dir); }).contains("merge 0 ('a', 'c')"));
        j = base;
        j["pre_tokenizer"] = {
            {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
        write(j);
        QVERIFY(errorOf([&] { HfTokenizer::load(dir); }).contains("does not compile"));
        j = base;
        j["pre_tokenizer"] = {{"type", "Whitespace"}};
        write(j);
        QVERIFY(errorOf([&] { HfTokenizer::load(dir); }).contains("pre_tokenizer type 'Whitespace'"));
        std::ofstream(dir / "tokenizer.json") << "{\"model\": ";
        QVERIFY(errorOf([&] { HfTokenizer::load(dir); }).contains("tokenizer.json"));
    }

    // Added tokens as the library's AddedVocabulary treats them: lstrip / rstrip take the white space beside
    // the match with it, single_word matches only a token that no letter touches.
    void addedTokensStripAndSingleWord() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        auto load = [&](const Json& added) {
            const Json j = {{"model",
                             {{"type", "BPE"},
                              {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}, {" ", 3}, {"\u00a0", 6}}},
                              {"merges", Json::array({"a b"})}}},
                            {"added_tokens", added}};
            std::ofstream(dir / "tokenizer.json") << j.dump();
            return HfTokenizer::load(dir);
        };
        auto token = [](const char* content, int id, bool lstrip, bool rstrip, bool singleWord) {
            return Json{{"id", id},         {"content", content}, {"special", true},
                        {"lstrip", lstrip}, {"rstrip", rstrip},   {"single_word", singleWord}};
        };
        using Ids = std::vector<int>;
        QCOMPARE(load(Json::array({token("<m>", 4, false, false, false)}))->encode("a <m> b").ids,
                 (Ids{0, 3, 4, 3, 1}));
        QCOMPARE(load(Json::array({token("<m>", 4, true, false, false)}))->encode("a  <m> b").ids,
                 (Ids{0, 4, 3, 1}));
        QCOMPARE(load(Json::array({token("<m>", 4, false, true, false)}))->encode("a <m> \u00a0b").ids,
                 (Ids{0, 3, 4, 1})); // U+00A0 is white space too
        QCOMPARE(load(Json::array({token("ba", 5, false, false, false)}))->encode("aba").ids, (Ids{0, 5}));
        const auto single = load(Json::array({token("ba", 5, false, false, true)}));
        QCOMPARE(single->encode("aba").ids, (Ids{2, 0}));
        QCOMPARE(single->encode("a ba").ids, (Ids{0, 3, 5}));
    }
};

QTEST_GUILESS_MAIN(TestHfTokenizer)
#include "test_hf_tokenizer.moc"
