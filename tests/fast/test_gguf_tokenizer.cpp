// The tokenizer of a GGUF file's metadata (core/text/gguf_tokenizer.h) on the real vocabularies of Llama 3
// and Qwen3: their tokenizer.json turned into tokenizer.ggml.* here as llama.cpp's converter writes them
// (tokens in id order; type 3 for special added tokens, 4 for the others, 1 for the rest; merges as "left
// right"; the pre-tokenizer's name; bos/eos ids; add_bos_token as the file's template says), then ids
// compared with what Hugging Face's Rust library gives on the 25 edge cases
// (tests/data/tokenizers/*/golden.json). A SentencePiece vocabulary (Mistral's tokenizer.model: pieces,
// scores, types, add_space_prefix) is held to the same goldens; other vocabularies and an unknown
// pre-tokenizer are refused by name.

#include "core/io/gguf.h"
#include "core/io/json_file.h"
#include "core/text/gguf_tokenizer.h"
#include "support/error_of.h"

#include <QTemporaryDir>
#include <QTest>

#include <sentencepiece_processor.h>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

const std::filesystem::path kGoldens = std::filesystem::path(ATTNLENS_TEST_DATA) / "tokenizers";
const std::filesystem::path kFiles = ATTNLENS_TOKENIZERS_DIR;

// A metadata-only GGUF file (no tensors), written from the format's specification.
class GgufWriter {
public:
    void string(const std::string& key, const std::string& v) { kv(key, 8), text(v); }
    void u32(const std::string& key, uint32_t v) { kv(key, 4), raw(v); }
    void boolean(const std::string& key, bool v) { kv(key, 7), raw(uint8_t(v)); }
    void strings(const std::string& key, const std::vector<std::string>& v) {
        kv(key, 9), raw(uint32_t(8)), raw(uint64_t(v.size()));
        for (const std::string& s : v)
            text(s);
    }
    void ints(const std::string& key, const std::vector<int32_t>& v) {
        kv(key, 9), raw(uint32_t(5)), raw(uint64_t(v.size()));
        for (int32_t i : v)
            raw(i);
    }
    void floats(const std::string& key, const std::vector<float>& v) {
        kv(key, 9), raw(uint32_t(6)), raw(uint64_t(v.size()));
        for (float x : v)
            raw(x);
    }
    void save(const std::filesystem::path& path) const {
        std::string header = "GGUF";
        const uint32_t version = 3;
        const uint64_t tensors = 0;
        header.append(reinterpret_cast<const char*>(&version), 4);
        header.append(reinterpret_cast<const char*>(&tensors), 8);
        header.append(reinterpret_cast<const char*>(&m_count), 8);
        std::ofstream(path, std::ios::binary) << header << m_body;
    }

private:
    template <typename T> void raw(T v) { m_body.append(reinterpret_cast<const char*>(&v), sizeof v); }
    void text(const std::string& s) { raw(uint64_t(s.size())), m_body += s; }
    void kv(const std::string& key, uint32_t type) { text(key), raw(type), ++m_count; }
    std::string m_body;
    uint64_t m_count = 0;
};

// tokenizer.json (+ tokenizer_config.json's eos) → tokenizer.ggml.* as llama.cpp's converter writes them.
std::filesystem::path convert(const std::string& name, const std::string& pre, const QTemporaryDir& tmp) {
    const Json j = readJsonFile(kFiles / name / "tokenizer.json");
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    auto put = [&](int id, const std::string& t, int type) {
        if (id >= int(tokens.size())) tokens.resize(size_t(id) + 1), types.resize(size_t(id) + 1, 1);
        tokens[size_t(id)] = t, types[size_t(id)] = type;
    };
    for (const auto& [t, id] : j["model"]["vocab"].items())
        put(id.get<int>(), t, 1);
    for (const Json& a : j["added_tokens"])
        put(a["id"].get<int>(), a["content"].get<std::string>(), a.value("special", false) ? 3 : 4);
    std::vector<std::string> merges;
    for (const Json& m : j["model"]["merges"])
        merges.push_back(m.is_string() ? m.get<std::string>()
                                       : m[0].get<std::string>() + " " + m[1].get<std::string>());
    GgufWriter w;
    w.string("general.architecture", "llama");
    w.string("tokenizer.ggml.model", "gpt2");
    w.string("tokenizer.ggml.pre", pre);
    w.strings("tokenizer.ggml.tokens", tokens);
    w.ints("tokenizer.ggml.token_type", types);
    w.strings("tokenizer.ggml.merges", merges);
    // BOS where the file's template adds one (this Llama 3 revision adds none; Qwen never)
    const Json& post = j["post_processor"];
    bool bos = false;
    if (post.is_object() && post.value("type", "") == "TemplateProcessing" &&
        post["single"][0].contains("SpecialToken")) {
        const std::string t = post["single"][0]["SpecialToken"]["id"].get<std::string>();
        for (size_t i = 0; i < tokens.size(); ++i)
            if (tokens[i] == t) w.u32("tokenizer.ggml.bos_token_id", uint32_t(i)), bos = true;
    }
    w.boolean("tokenizer.ggml.add_bos_token", bos);
    const Json config = readJsonFile(kFiles / name / "tokenizer_config.json");
    const std::string eos = config["eos_token"].is_string()
                                ? config["eos_token"].get<std::string>()
                                : config["eos_token"]["content"].get<std::string>();
    for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] == eos) w.u32("tokenizer.ggml.eos_token_id", uint32_t(i));
    const std::filesystem::path path = tmp.filePath(QString::fromStdString(name + ".gguf")).toStdString();
    w.save(path);
    return path;
}

// tokenizer.model (+ tokenizer_config.json's add_bos_token) → tokenizer.ggml.* as llama.cpp's converter
// writes a SentencePiece vocabulary (_set_vocab_sentencepiece): every piece with its score and type.
std::filesystem::path convertSentencePiece(const std::string& name, const QTemporaryDir& tmp) {
    sentencepiece::SentencePieceProcessor sp;
    if (!sp.Load((kFiles / name / "tokenizer.model").string()).ok()) return {};
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;
    for (int id = 0; id < sp.GetPieceSize(); ++id) {
        tokens.push_back(sp.IdToPiece(id));
        scores.push_back(sp.GetScore(id));
        types.push_back(sp.IsUnknown(id)   ? 2
                        : sp.IsControl(id) ? 3
                        : sp.IsUnused(id)  ? 5
                        : sp.IsByte(id)    ? 6
                                           : 1);
    }
    GgufWriter w;
    w.string("general.architecture", "llama");
    w.string("tokenizer.ggml.model", "llama");
    w.strings("tokenizer.ggml.tokens", tokens);
    w.floats("tokenizer.ggml.scores", scores);
    w.ints("tokenizer.ggml.token_type", types);
    w.u32("tokenizer.ggml.bos_token_id", uint32_t(sp.bos_id()));
    w.u32("tokenizer.ggml.eos_token_id", uint32_t(sp.eos_id()));
    w.u32("tokenizer.ggml.unknown_token_id", uint32_t(sp.unk_id()));
    const Json config = readJsonFile(kFiles / name / "tokenizer_config.json");
    w.boolean("tokenizer.ggml.add_bos_token", config.value("add_bos_token", true));
    w.boolean("tokenizer.ggml.add_eos_token", config.value("add_eos_token", false));
    w.boolean("tokenizer.ggml.add_space_prefix", true); // Llama 2's and Mistral's normalizer_spec
    const std::filesystem::path path = tmp.filePath(QString::fromStdString(name + ".gguf")).toStdString();
    w.save(path);
    return path;
}

void compareWithGoldens(const TextTokenizer& tok, const std::string& goldens) {
    const Json golden = readJsonFile(kGoldens / goldens / "golden.json");
    int checked = 0;
    for (const Json& c : golden["cases"]) {
        const std::string text = c["text"].get<std::string>();
        QCOMPARE(tok.encode(text).ids, c["ids"].get<std::vector<int>>());
        QCOMPARE(tok.encodePlain(text).ids, c["ids_no_special"].get<std::vector<int>>());
        ++checked;
    }
    QVERIFY(checked >= 20);
    QVERIFY(tok.endOfTextId() >= 0);
    std::string text; // the pieces' text: a dummy prefix's space in front at most
    for (int id : tok.encodePlain("Hello, world!").ids)
        text += tok.tokenText(id);
    QCOMPARE(text.substr(text.find_first_not_of(' ')), std::string("Hello, world!"));
}

} // namespace

class TestGgufTokenizer : public QObject {
    Q_OBJECT
private slots:
    void idsEqualTheRustLibrary_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("pre");
        QTest::newRow("Llama 3 (llama-bpe)") << "llama3"
                                             << "llama-bpe";
        QTest::newRow("Qwen3 (qwen2)") << "qwen3"
                                       << "qwen2";
    }
    void idsEqualTheRustLibrary() {
        QFETCH(QString, name);
        QFETCH(QString, pre);
        QTemporaryDir tmp;
        const auto tok = ggufTokenizer(GgufFile::open(convert(name.toStdString(), pre.toStdString(), tmp)));
        compareWithGoldens(*tok, name.toStdString());
    }

    // Mistral-7B's SentencePiece vocabulary as a GGUF file carries it: the ids of Hugging Face's library on
    // Mistral's tokenizer.json (the file converted from the same tokenizer.model).
    void sentencePieceIdsEqualTheRustLibrary() {
        QTemporaryDir tmp;
        const std::filesystem::path path = convertSentencePiece("mistral-spm", tmp);
        QVERIFY(!path.empty());
        const auto tok = ggufTokenizer(GgufFile::open(path));
        QCOMPARE(tok->vocabSize(), 32000);
        QCOMPARE(tok->token(tok->encode("").ids.at(0)), std::string("<s>"));
        compareWithGoldens(*tok, "mistral");
    }

    void otherVocabulariesAreRefusedByName() {
        QTemporaryDir tmp;
        GgufWriter bert;
        bert.string("tokenizer.ggml.model", "bert");
        bert.save(tmp.filePath("bert.gguf").toStdString());
        QVERIFY(errorOf([&] {
                    ggufTokenizer(GgufFile::open(tmp.filePath("bert.gguf").toStdString()));
                }).contains("'bert' is not read by this version"));
        GgufWriter spm; // SentencePiece pieces without their scores
        spm.string("tokenizer.ggml.model", "llama");
        spm.strings("tokenizer.ggml.tokens", {"<unk>", "a"});
        spm.save(tmp.filePath("spm.gguf").toStdString());
        QVERIFY(errorOf([&] {
                    ggufTokenizer(GgufFile::open(tmp.filePath("spm.gguf").toStdString()));
                }).contains("tokenizer.ggml.scores is missing"));
        GgufWriter odd;
        odd.string("tokenizer.ggml.model", "gpt2");
        odd.string("tokenizer.ggml.pre", "mystery");
        odd.save(tmp.filePath("odd.gguf").toStdString());
        QVERIFY(errorOf([&] {
                    ggufTokenizer(GgufFile::open(tmp.filePath("odd.gguf").toStdString()));
                }).contains("pre-tokenizer 'mystery'"));
    }
};

QTEST_GUILESS_MAIN(TestGgufTokenizer)
#include "test_gguf_tokenizer.moc"
