// BERT and GPT-2 tokenizers against transformers v4.33's slow tokenizers, reimplemented independently in
// tools/golden/text_reference.py (tests/data/text/*/golden.json): accents, CJK, punctuation, unknown words, a
// word over 100 characters, emoji and flags, repeated spaces, tabs and newlines, contractions, special tokens
// typed in the text, control and zero-width characters, Greek capitals, "İ". Plus GPT-2's pattern on its own
// and bad folders.

#include "core/io/json_file.h"
#include "core/text/sentence_split.h"
#include "core/text/text_tokenizers.h"
#include "core/text/unicode_text.h"
#include "core/util/error.h"

#include <QTest>

#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

const std::filesystem::path kData = std::filesystem::path(ATTNLENS_TEST_DATA) / "text";

QString show(const std::vector<std::string>& tokens) {
    QStringList out;
    for (const auto& t : tokens)
        out << QString::fromStdString(t);
    return out.join(" | ");
}

} // namespace

class TestTextTokenizers : public QObject {
    Q_OBJECT
private slots:
    void wordPieceMatchesReference_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("uncased (bert-mlm)") << "bert-mlm";
        QTest::newRow("cased (bert-cased)") << "bert-cased";
    }
    void wordPieceMatchesReference() {
        QFETCH(QString, model);
        const auto tok = WordPieceTokenizer::load(kData / model.toStdString());
        const Json golden = readJsonFile(kData / model.toStdString() / "golden.json");
        for (const Json& c : golden["cases"]) {
            const auto e = tok->encode(c["text"].get<std::string>());
            const auto tokens = c["tokens"].get<std::vector<std::string>>();
            QVERIFY2(e.tokens == tokens, qPrintable(show(e.tokens) + "\n   expected " + show(tokens)));
            QCOMPARE(e.ids, c["ids"].get<std::vector<int>>());
        }
    }
    void byteBpeMatchesReference_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("vocab.json + merges.txt") << "gpt2";
        QTest::newRow("tokenizer.json only") << "gpt2-bare";
    }
    void byteBpeMatchesReference() {
        QFETCH(QString, model);
        const auto tok = ByteBpeTokenizer::load(kData / model.toStdString());
        const Json golden = readJsonFile(kData / model.toStdString() / "golden.json");
        for (const Json& c : golden["cases"]) {
            const std::string text = c["text"].get<std::string>();
            const auto e = tok->encode(text);
            const auto tokens = c["tokens"].get<std::vector<std::string>>();
            QVERIFY2(e.tokens == tokens, qPrintable(show(e.tokens) + "\n   expected " + show(tokens)));
            QCOMPARE(e.ids, c["ids"].get<std::vector<int>>());
            QCOMPARE(tok->decode(e.ids), text); // byte-level: lossless
        }
    }
    void gpt2PatternPieces() {
        auto pieces = [](const char* text) {
            std::vector<std::string> out;
            for (const auto& p : gpt2Pretokenize(unicode::decodeUtf8(text)))
                out.push_back(unicode::encodeUtf8(p));
            return out;
        };
        QCOMPARE(pieces("I'm here, aren't we?"),
                 (std::vector<std::string>{"I", "'m", " here", ",", " aren", "'t", " we", "?"}));
        QCOMPARE(pieces("a  b\t\tc \n"), (std::vector<std::string>{"a", " ", " b", "\t", "\t", "c", " \n"}));
        QCOMPARE(pieces("x 42.5 €!"), (std::vector<std::string>{"x", " 42", ".", "5", " €!"}));
    }
    // Paragraphs into sentences for the translator (issue 38): ICU's rules plus German ordinals, initials and
    // abbreviations; spans exclude the white space around them.
    void sentenceSplitting_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("sentences");
        QTest::newRow("three") << "Wie geht es dir? Mir geht es gut.  Danke!"
                               << QStringList{"Wie geht es dir?", "Mir geht es gut.", "Danke!"};
        QTest::newRow("abbreviation")
            << "Das kostet ca. 5 Euro. Gut." << QStringList{"Das kostet ca. 5 Euro.", "Gut."};
        QTest::newRow("ordinal") << "Am 3. Oktober ist Feiertag. Wir feiern."
                                 << QStringList{"Am 3. Oktober ist Feiertag.", "Wir feiern."};
        QTest::newRow("z. B.") << "Er sagte z. B. nichts. Dann ging er."
                               << QStringList{"Er sagte z. B. nichts.", "Dann ging er."};
        QTest::newRow("z.B.") << "Obst, z.B. Äpfel, ist gesund. Ja."
                              << QStringList{"Obst, z.B. Äpfel, ist gesund.", "Ja."};
        QTest::newRow("title") << "Dr. Müller kommt um 8 Uhr. Er ist pünktlich."
                               << QStringList{"Dr. Müller kommt um 8 Uhr.", "Er ist pünktlich."};
        QTest::newRow("decimal") << "Das ist 3.5 mal so groß." << QStringList{"Das ist 3.5 mal so groß."};
        QTest::newRow("quotes") << "Er fragte: „Kommst du?“ Sie nickte."
                                << QStringList{"Er fragte: „Kommst du?“", "Sie nickte."};
        QTest::newRow("no full stop") << "  ein Satz ohne Punkt \n" << QStringList{"ein Satz ohne Punkt"};
        QTest::newRow("lines") << "Erste Zeile.\nZweite Zeile."
                               << QStringList{"Erste Zeile.", "Zweite Zeile."};
        QTest::newRow("empty") << " \n\t" << QStringList{};
    }

    void sentenceSplitting() {
        QFETCH(QString, text);
        QFETCH(QStringList, sentences);
        const std::string utf8 = text.toStdString();
        QStringList got;
        for (const SentenceSpan& s : splitSentences(utf8)) {
            QVERIFY(s.begin < s.end && s.end <= utf8.size());
            got << QString::fromStdString(utf8.substr(s.begin, s.end - s.begin));
        }
        QCOMPARE(got, sentences);
        QVERIFY_THROWS_EXCEPTION(Error, splitSentences("ab\xff cd."));
    }

    void badFolders() {
        const QTemporaryDir dir;
        const std::filesystem::path d = dir.path().toStdString();
        QVERIFY_THROWS_EXCEPTION(Error, WordPieceTokenizer::load(d)); // nothing there
        QVERIFY_THROWS_EXCEPTION(Error, ByteBpeTokenizer::load(d));
        std::ofstream(d / "vocab.txt") << "a\nb\n[CLS]\n[SEP]\n"; // no [UNK]
        try {
            WordPieceTokenizer::load(d);
            QFAIL("a vocabulary without [UNK] was accepted");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("[UNK]") && QString(e.what()).contains("vocab.txt"),
                     e.what());
        }
        std::ofstream(d / "vocab.json") << "{\"a\": \"one\"}";
        std::ofstream(d / "merges.txt") << "#version: 0.2\n";
        QVERIFY_THROWS_EXCEPTION(Error, ByteBpeTokenizer::load(d));
    }
};

QTEST_GUILESS_MAIN(TestTextTokenizers)
#include "test_text_tokenizers.moc"
