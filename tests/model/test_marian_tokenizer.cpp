// MarianTokenizer parity with Python SentencePiece + vocab.json (goldens from
// tools/golden/make_marian_fixtures.py) and clear errors for bad tokenizer files and input.

#include "core/models/marian_folder.h"
#include "core/text/marian_tokenizer.h"
#include "core/util/error.h"
#include "marian_test_util.h"

#include <QTest>

#include <fstream>

using namespace attnlens;
using namespace marian_test;

namespace {

std::filesystem::path scratchCopy(const char* name) {
    const auto dir = scratchDir(name);
    std::filesystem::remove_all(dir);
    std::filesystem::copy(variantDir("tiny-f32"), dir, std::filesystem::copy_options::recursive);
    return dir;
}

} // namespace

class TestMarianTokenizer : public QObject {
    Q_OBJECT
private slots:
    void parity_data();
    void parity();
    void specialIds();
    void unknownPiecesMapToUnk();
    void languageCodes();
    void utf8Validation();
    void nonUtf8InputIsAnError();
    void missingTokenizerFile_data();
    void missingTokenizerFile();
    void corruptSpm();
    void badVocabJson();
    void vocabNotMatchingCheckpoint();
};

void TestMarianTokenizer::parity_data() {
    QTest::addColumn<int>("row");
    const Json rows = readJsonFile(dataDir() / "golden" / "tokenizer.json");
    QVERIFY(rows.size() >= 10);
    for (size_t i = 0; i < rows.size(); ++i)
        QTest::newRow(("#" + std::to_string(i) + " " + rows[i]["text"].get<std::string>()).c_str()) << int(i);
}

void TestMarianTokenizer::parity() {
    QFETCH(int, row);
    const Json r = readJsonFile(dataDir() / "golden" / "tokenizer.json")[row];
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    const auto enc = tok->encode(r["text"].get<std::string>());
    QCOMPARE(enc.pieces, r["pieces"].get<std::vector<std::string>>());
    QCOMPARE(enc.ids, ids(r["ids"]));
    QCOMPARE(tok->decode(ids(r["target_ids"])), r["decoded"].get<std::string>());
}

void TestMarianTokenizer::specialIds() {
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    QCOMPARE(tok->eosId(), 0);
    QCOMPARE(tok->unkId(), 1);
    QCOMPARE(tok->padId().value_or(-1), tok->vocabEntries() - 1);
    QCOMPARE(tok->idToPiece(0), std::string("</s>"));
    QCOMPARE(tok->pieceToId(">>en<<").value_or(-1), 2);
    const auto empty = tok->encode("");
    QCOMPARE(empty.ids, std::vector<int>{0}); // only </s>, no BOS
    QCOMPARE(tok->decode(std::vector<int>{0, 1, tok->vocabEntries() - 1}), std::string()); // specials skipped
}

void TestMarianTokenizer::unknownPiecesMapToUnk() {
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    const auto enc = tok->encode("Ich liebe Kaffee ☕");
    const auto it = std::find(enc.pieces.begin(), enc.pieces.end(), "☕");
    QVERIFY(it != enc.pieces.end());
    QCOMPARE(enc.ids[it - enc.pieces.begin()], tok->unkId());
}

void TestMarianTokenizer::languageCodes() {
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    const auto a = tok->encode(">>en<< Hallo");
    QCOMPARE(a.pieces.front(), std::string(">>en<<"));
    QCOMPARE(a.ids.front(), 2);
    // a code that is not at the start is removed but not kept (HF's re.sub + re.match)
    const auto b = tok->encode("Hallo >>en<< Welt");
    QVERIFY(std::find(b.pieces.begin(), b.pieces.end(), ">>en<<") == b.pieces.end());
    QCOMPARE(b.ids, tok->encode("Hallo  Welt").ids);
    // an unknown code is still its own token, mapped to <unk>
    const auto c = tok->encode(">>xx<< Hallo");
    QCOMPARE(c.pieces.front(), std::string(">>xx<<"));
    QCOMPARE(c.ids.front(), tok->unkId());
}

void TestMarianTokenizer::utf8Validation() {
    QVERIFY(isValidUtf8("Straße 🍰"));
    QVERIFY(isValidUtf8(""));
    QVERIFY(!isValidUtf8("\xff"));
    QVERIFY(!isValidUtf8("abc\xc3"));          // truncated sequence
    QVERIFY(!isValidUtf8("\xc0\xaf"));         // overlong
    QVERIFY(!isValidUtf8("\xed\xa0\x80"));     // surrogate
    QVERIFY(!isValidUtf8("\xf4\x90\x80\x80")); // above U+10FFFF
}

void TestMarianTokenizer::nonUtf8InputIsAnError() {
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    try {
        tok->encode("Stra\xdf"
                    "e"); // Latin-1 ß
        QFAIL("expected an error");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("UTF-8"), e.what());
    }
}

void TestMarianTokenizer::missingTokenizerFile_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("source.spm") << "source.spm";
    QTest::newRow("target.spm") << "target.spm";
    QTest::newRow("vocab.json") << "vocab.json";
}

void TestMarianTokenizer::missingTokenizerFile() {
    QFETCH(QString, file);
    const auto dir = scratchCopy("attnlens_tok_missing");
    std::filesystem::remove(dir / file.toStdString());
    try {
        MarianTokenizer::load(dir);
        QFAIL("expected an error");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains(file) && QString(e.what()).contains("missing"), e.what());
    }
    std::filesystem::remove_all(dir);
}

void TestMarianTokenizer::corruptSpm() {
    const auto dir = scratchCopy("attnlens_tok_corrupt");
    std::ofstream(dir / "source.spm", std::ios::trunc) << "this is not a sentencepiece model";
    try {
        MarianTokenizer::load(dir);
        QFAIL("expected an error");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("source.spm"), e.what());
    }
    std::filesystem::remove_all(dir);
}

void TestMarianTokenizer::badVocabJson() {
    const auto dir = scratchCopy("attnlens_tok_vocab");
    std::ofstream(dir / "vocab.json", std::ios::trunc) << R"({"</s>": 0, "<unk>": 1, "a": 1})";
    QVERIFY_THROWS_EXCEPTION(Error, MarianTokenizer::load(dir)); // duplicate id
    std::ofstream(dir / "vocab.json", std::ios::trunc) << R"({"<unk>": 1, "a": 2})";
    QVERIFY_THROWS_EXCEPTION(Error, MarianTokenizer::load(dir)); // no </s>
    std::ofstream(dir / "vocab.json", std::ios::trunc) << "[1, 2";
    QVERIFY_THROWS_EXCEPTION(Error, MarianTokenizer::load(dir)); // malformed
    std::filesystem::remove_all(dir);
}

void TestMarianTokenizer::vocabNotMatchingCheckpoint() {
    const auto dir = scratchCopy("attnlens_tok_mismatch");
    QVERIFY(loadMarianFolder(dir).model); // the fixture itself is consistent
    Json vocab = readJsonFile(dir / "vocab.json");
    vocab.erase(">>de<<"); // one entry fewer than vocab_size
    writeJsonFile(dir / "vocab.json", vocab);
    try {
        loadMarianFolder(dir);
        QFAIL("expected an error");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("vocab.json") && QString(e.what()).contains("vocab_size is 242"),
                 e.what());
    }
    vocab[">>de<<"] = 500; // an id beyond the checkpoint's vocabulary
    writeJsonFile(dir / "vocab.json", vocab);
    try {
        loadMarianFolder(dir);
        QFAIL("expected an error");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("ids up to 500"), e.what());
    }
    std::filesystem::remove_all(dir);
}

QTEST_GUILESS_MAIN(TestMarianTokenizer)
#include "test_marian_tokenizer.moc"
