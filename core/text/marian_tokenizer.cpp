#include "core/text/marian_tokenizer.h"

#include "core/io/json_file.h"
#include "core/util/error.h"

#include <sentencepiece_processor.h>

#include <cstdint>
#include <fstream>
#include <sstream>

namespace attnlens {

struct MarianTokenizer::Spm {
    sentencepiece::SentencePieceProcessor processor;
};

MarianTokenizer::~MarianTokenizer() = default;

bool isValidUtf8(std::string_view text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t i = 0;
    while (i < n) {
        const unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        int len = 0;
        uint32_t cp = 0;
        if ((c & 0xE0) == 0xC0)
            len = 2, cp = c & 0x1F;
        else if ((c & 0xF0) == 0xE0)
            len = 3, cp = c & 0x0F;
        else if ((c & 0xF8) == 0xF0)
            len = 4, cp = c & 0x07;
        else
            return false;
        if (i + len > n) return false;
        for (int k = 1; k < len; ++k) {
            if ((s[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

namespace {

void loadSpm(sentencepiece::SentencePieceProcessor& sp, const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw Error("'" + path.string() +
                    "': tokenizer file is missing (a Marian folder needs source.spm, "
                    "target.spm and vocab.json)");
    const auto status = sp.Load(path.string());
    if (!status.ok())
        throw Error("'" + path.string() + "': not a SentencePiece model (" + status.ToString() + ")");
}

// Removes every match of the regex `>>.+<<` (`.` = any character but '\n', greedy) like Python's
// re.sub; returns the match at position 0, if any, through `leading`.
std::string removeLanguageCodes(std::string_view text, std::string* leading) {
    std::string out;
    size_t pos = 0;
    bool first = true;
    while (pos < text.size()) {
        const size_t open = text.find(">>", pos);
        if (open == std::string_view::npos) break;
        size_t lineEnd = text.find('\n', open);
        if (lineEnd == std::string_view::npos) lineEnd = text.size();
        // greedy `.+<<`: the last "<<" on this line that leaves at least one character after ">>"
        size_t close = std::string_view::npos;
        if (lineEnd >= open + 5) {
            const size_t found = text.substr(0, lineEnd).rfind("<<");
            if (found != std::string_view::npos && found >= open + 3) close = found;
        }
        if (close == std::string_view::npos) {
            out.append(text.substr(pos, open + 1 - pos)); // no match starting here; retry one further
            pos = open + 1;
            first = false;
            continue;
        }
        if (first && open == 0 && leading) *leading = std::string(text.substr(0, close + 2));
        out.append(text.substr(pos, open - pos));
        pos = close + 2;
        first = false;
    }
    out.append(text.substr(std::min(pos, text.size())));
    return out;
}

// vocab.json is a flat object {piece: id}; opus-mt's has 58101 entries. A SAX pass fills the
// list directly (several times faster than building nlohmann's DOM, which dominated load time).
class VocabReader : public nlohmann::json_sax<Json> {
public:
    std::vector<std::pair<std::string, int64_t>> entries;
    std::string error;

    bool null() override { return fail("null"); }
    bool boolean(bool) override { return fail("a boolean"); }
    bool number_integer(number_integer_t v) override { return value(v); }
    bool number_unsigned(number_unsigned_t v) override {
        return value(static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX)));
    }
    bool number_float(number_float_t, const string_t&) override { return fail("a fractional number"); }
    bool string(string_t&) override { return fail("a string"); }
    bool binary(binary_t&) override { return fail("binary data"); }
    bool start_object(std::size_t) override { return ++m_depth == 1 || fail("an object"); }
    bool key(string_t& k) override {
        m_key = std::move(k);
        return true;
    }
    bool end_object() override {
        --m_depth;
        return true;
    }
    bool start_array(std::size_t) override { return fail("an array"); }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& e) override {
        error = "malformed JSON at byte " + std::to_string(position) + ": " + e.what();
        return false;
    }

private:
    bool value(int64_t v) {
        if (m_depth != 1) return fail("a number");
        entries.emplace_back(std::move(m_key), v);
        return true;
    }
    bool fail(const char* what) {
        if (error.empty())
            error = m_depth == 0
                        ? "expected a JSON object mapping pieces to ids"
                        : "the value of piece '" + m_key + "' is " + what + ", expected an integer id";
        return false;
    }
    int m_depth = 0;
    std::string m_key;
};

std::vector<std::pair<std::string, int64_t>> readVocab(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("'" + path.string() + "': cannot open for reading");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    VocabReader reader;
    const bool ok = Json::sax_parse(buffer.str(), &reader);
    if (!ok || !reader.error.empty())
        throw Error("'" + path.string() +
                    "': " + (reader.error.empty() ? std::string("malformed JSON") : reader.error));
    if (reader.entries.empty())
        throw Error("'" + path.string() + "': expected a non-empty JSON object mapping pieces to ids");
    return std::move(reader.entries);
}

} // namespace

std::shared_ptr<const MarianTokenizer> MarianTokenizer::load(const std::filesystem::path& dir) {
    auto tok = std::make_shared<MarianTokenizer>();
    tok->m_dir = dir;
    tok->m_source = std::make_unique<Spm>();
    tok->m_target = std::make_unique<Spm>();
    loadSpm(tok->m_source->processor, dir / "source.spm");
    loadSpm(tok->m_target->processor, dir / "target.spm");

    std::error_code ec;
    if (const auto cfgPath = dir / "tokenizer_config.json"; std::filesystem::exists(cfgPath, ec)) {
        const Json cfg = readJsonFile(cfgPath);
        if (cfg.is_object() && cfg.value("separate_vocabs", false))
            throw Error("'" + cfgPath.string() +
                        "': separate_vocabs is true; separate source/target vocabularies "
                        "(target_vocab.json) are not supported");
    }
    const auto vocabPath = dir / "vocab.json";
    if (!std::filesystem::exists(vocabPath, ec))
        throw Error("'" + vocabPath.string() +
                    "': tokenizer file is missing (a Marian folder needs source.spm, "
                    "target.spm and vocab.json)");
    const std::vector<std::pair<std::string, int64_t>> entries = readVocab(vocabPath);
    int64_t maxId = -1;
    for (const auto& [piece, id] : entries) {
        if (id < 0 || id > 100'000'000)
            throw Error("'" + vocabPath.string() + "': the id of piece '" + piece +
                        "' is not a non-negative integer");
        maxId = std::max(maxId, id);
    }
    tok->m_idToPiece.assign(static_cast<size_t>(maxId) + 1, std::string());
    tok->m_pieceToId.reserve(entries.size());
    for (const auto& [piece, id] : entries) {
        if (!tok->m_idToPiece[id].empty())
            throw Error("'" + vocabPath.string() + "': id " + std::to_string(id) + " is used by both '" +
                        tok->m_idToPiece[id] + "' and '" + piece + "'");
        tok->m_idToPiece[id] = piece;
        if (!tok->m_pieceToId.emplace(piece, static_cast<int>(id)).second)
            throw Error("'" + vocabPath.string() + "': piece '" + piece + "' appears twice");
    }
    const auto need = [&](const char* piece) {
        const auto it = tok->m_pieceToId.find(piece);
        if (it == tok->m_pieceToId.end())
            throw Error("'" + vocabPath.string() + "': the special token '" + piece + "' is missing");
        return it->second;
    };
    tok->m_eos = need("</s>");
    tok->m_unk = need("<unk>");
    if (const auto it = tok->m_pieceToId.find("<pad>"); it != tok->m_pieceToId.end()) tok->m_pad = it->second;
    return tok;
}

MarianEncoding MarianTokenizer::encode(std::string_view text) const {
    if (!isValidUtf8(text)) throw Error("input text is not valid UTF-8");
    MarianEncoding enc;
    std::string code;
    const std::string rest = removeLanguageCodes(text, &code);
    if (!code.empty()) enc.pieces.push_back(code);
    std::vector<std::string> pieces;
    const auto status = m_source->processor.Encode(rest, &pieces);
    if (!status.ok()) throw Error("source.spm: cannot encode the input (" + status.ToString() + ")");
    enc.pieces.insert(enc.pieces.end(), pieces.begin(), pieces.end());
    enc.ids.reserve(enc.pieces.size() + 1);
    for (const auto& p : enc.pieces) {
        const auto it = m_pieceToId.find(p);
        enc.ids.push_back(it == m_pieceToId.end() ? m_unk : it->second);
    }
    enc.pieces.emplace_back("</s>");
    enc.ids.push_back(m_eos);
    return enc;
}

std::string MarianTokenizer::decode(std::span<const int> ids) const {
    std::vector<std::string> pieces;
    pieces.reserve(ids.size());
    for (const int id : ids) {
        if (isSpecial(id) || id < 0 || id >= idLimit() || m_idToPiece[id].empty()) continue;
        pieces.push_back(m_idToPiece[id]);
    }
    std::string text;
    const auto status = m_target->processor.Decode(pieces, &text);
    if (!status.ok()) throw Error("target.spm: cannot decode the pieces (" + status.ToString() + ")");
    // "▁" (U+2581) -> " ", then strip like Python's str.strip() (ASCII whitespace suffices here)
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 3, "\xE2\x96\x81") == 0) {
            out.push_back(' ');
            i += 2;
        } else {
            out.push_back(text[i]);
        }
    }
    const auto isSpace = [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    };
    size_t b = 0, e = out.size();
    while (b < e && isSpace(out[b]))
        ++b;
    while (e > b && isSpace(out[e - 1]))
        --e;
    out = out.substr(b, e - b);
    // PreTrainedTokenizerBase.clean_up_tokenization (HF's decode default), replacements in this order
    static const std::pair<std::string_view, std::string_view> kCleanUp[] = {
        {" .", "."},     {" ?", "?"},   {" !", "!"},   {" ,", ","},     {" ' ", "'"},
        {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& [from, to] : kCleanUp) {
        std::string next;
        size_t pos = 0;
        for (size_t hit; (hit = out.find(from, pos)) != std::string::npos; pos = hit + from.size())
            next.append(out, pos, hit - pos).append(to);
        next.append(out, pos, std::string::npos);
        out.swap(next);
    }
    return out;
}

std::string MarianTokenizer::idToPiece(int id) const {
    if (id < 0 || id >= idLimit()) return {};
    return m_idToPiece[id];
}

std::optional<int> MarianTokenizer::pieceToId(std::string_view piece) const {
    const auto it = m_pieceToId.find(std::string(piece));
    if (it == m_pieceToId.end()) return std::nullopt;
    return it->second;
}

} // namespace attnlens
