// HfTokenizer::load: reads tokenizer.json's model, normalizer, pre-tokenizer, post-processor and decoder
// (core/text/hf_tokenizer.h), refusing by name what it does not implement.
#include "core/io/json_file.h"
#include "core/text/hf_tokenizer.h"
#include "core/text/unicode_text.h"
#include "core/util/error.h"

#include <algorithm>
#include <cstdio>

namespace attnlens {

namespace {

using Normalizer = HfTokenizer::Normalizer;
using PreTokenizer = HfTokenizer::PreTokenizer;

struct Reader {
    std::string where; // "'…/tokenizer.json'"

    [[noreturn]] void fail(const std::string& what) const { throw Error(where + ": " + what); }
    std::string type(const Json& j, const std::string& field) const {
        if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) fail(field + " has no type");
        return j["type"].get<std::string>();
    }
    std::string string(const Json& j, const std::string& key, const std::string& fallback) const {
        if (!j.contains(key) || j[key].is_null()) return fallback;
        if (!j[key].is_string()) fail("'" + key + "' is not a string");
        return j[key].get<std::string>();
    }
    bool flag(const Json& j, const std::string& key, bool fallback) const {
        if (!j.contains(key) || j[key].is_null()) return fallback;
        if (!j[key].is_boolean()) fail("'" + key + "' is not true or false");
        return j[key].get<bool>();
    }

    void normalizers(const Json& j, std::vector<Normalizer>& out, int depth = 0) const {
        if (j.is_null()) return;
        if (depth > 16) fail("normalizers nested deeper than 16");
        const std::string t = type(j, "normalizer");
        if (t == "Sequence") {
            if (!j.contains("normalizers") || !j["normalizers"].is_array())
                fail("normalizer Sequence without a list");
            for (const Json& n : j["normalizers"])
                normalizers(n, out, depth + 1);
        } else if (t == "NFC" || t == "NFKC" || t == "NFD" || t == "Lowercase") {
            out.push_back({t == "NFC"    ? Normalizer::Kind::Nfc
                           : t == "NFKC" ? Normalizer::Kind::Nfkc
                           : t == "NFD"  ? Normalizer::Kind::Nfd
                                         : Normalizer::Kind::Lowercase,
                           {},
                           {}});
        } else if (t == "Replace") {
            if (!j.contains("pattern") || !j["pattern"].is_object() || !j["pattern"].contains("String"))
                fail("normalizer Replace by a regex is not supported (only a string pattern)");
            out.push_back(
                {Normalizer::Kind::Replace, string(j["pattern"], "String", ""), string(j, "content", "")});
        } else if (t == "Prepend") {
            out.push_back({Normalizer::Kind::Prepend, "", string(j, "prepend", "")});
        } else {
            fail("normalizer type '" + t +
                 "' is not supported (NFC, NFKC, NFD, Lowercase, Replace, Prepend)");
        }
    }

    void preTokenizers(const Json& j, std::vector<PreTokenizer>& out, int depth = 0) const {
        if (j.is_null()) return;
        if (depth > 16) fail("pre-tokenizers nested deeper than 16");
        const std::string t = type(j, "pre_tokenizer");
        PreTokenizer p;
        if (t == "Sequence") {
            if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
                fail("pre_tokenizer Sequence without a list");
            for (const Json& n : j["pretokenizers"])
                preTokenizers(n, out, depth + 1);
            return;
        }
        if (t == "Split") {
            p.kind = PreTokenizer::Kind::Split;
            if (!j.contains("pattern") || !j["pattern"].is_object())
                fail("pre_tokenizer Split without a pattern");
            if (j["pattern"].contains("Regex"))
                p.regex = compile(string(j["pattern"], "Regex", ""));
            else
                p.literal = string(j["pattern"], "String", "");
            const std::string b = string(j, "behavior", "Isolated");
            if (b == "Isolated")
                p.behavior = PreTokenizer::Behavior::Isolated;
            else if (b == "Removed")
                p.behavior = PreTokenizer::Behavior::Removed;
            else if (b == "MergedWithPrevious")
                p.behavior = PreTokenizer::Behavior::MergedWithPrevious;
            else if (b == "MergedWithNext")
                p.behavior = PreTokenizer::Behavior::MergedWithNext;
            else
                fail("pre_tokenizer Split behavior '" + b + "' is not supported");
            p.invert = flag(j, "invert", false);
        } else if (t == "Digits") {
            p.kind = PreTokenizer::Kind::Split;
            p.regex = compile(flag(j, "individual_digits", false) ? "\\p{N}" : "\\p{N}+");
        } else if (t == "ByteLevel") {
            p.kind = PreTokenizer::Kind::ByteLevel;
            p.addPrefixSpace = flag(j, "add_prefix_space", true);
            if (flag(j, "use_regex", true))
                p.regex =
                    compile(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
        } else if (t == "Metaspace") {
            p.kind = PreTokenizer::Kind::Metaspace;
            p.replacement = string(j, "replacement", "\xE2\x96\x81");
            if (unicode::decodeUtf8(p.replacement).size() != 1)
                fail("Metaspace replacement must be one character");
            p.prependScheme = j.contains("prepend_scheme")
                                  ? string(j, "prepend_scheme", "always")
                                  : (flag(j, "add_prefix_space", true) ? "always" : "never");
            if (p.prependScheme != "always" && p.prependScheme != "first" && p.prependScheme != "never")
                fail("Metaspace prepend_scheme '" + p.prependScheme + "' is not known");
            p.split = flag(j, "split", true);
        } else {
            fail("pre_tokenizer type '" + t +
                 "' is not supported (Split, ByteLevel, Metaspace, Digits, Sequence)");
        }
        out.push_back(std::move(p));
    }

    std::shared_ptr<const HfRegex> compile(const std::string& pattern) const;
};

} // namespace

// The regex class is defined in hf_tokenizer.cpp; this file only needs to construct one.
std::shared_ptr<const HfRegex> makeHfRegex(const std::string& pattern);

std::shared_ptr<const HfRegex> Reader::compile(const std::string& pattern) const {
    try {
        return makeHfRegex(pattern);
    } catch (const Error& e) {
        fail(e.what());
    }
}

std::shared_ptr<const HfTokenizer> HfTokenizer::load(const std::filesystem::path& dir) {
    const auto path = dir / "tokenizer.json";
    const std::string where = "'" + path.string() + "'";
    if (!present(dir)) throw Error(where + ": missing (the folder has no tokenizer.json)");
    auto tok = build(readJsonFile(path), where);
    readEos(*tok, dir);
    return tok;
}

std::shared_ptr<const HfTokenizer> HfTokenizer::fromJson(const Json& j, const std::string& where, int eosId) {
    auto tok = build(j, where);
    if (eosId >= 0 && eosId < int(tok->m_tokens.size())) tok->m_eos = eosId;
    return tok;
}

std::shared_ptr<HfTokenizer> HfTokenizer::build(const Json& j, const std::string& where) {
    const Reader r{where};
    if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) r.fail("no model section");
    const Json& model = j["model"];
    if (r.string(model, "type", "BPE") != "BPE")
        r.fail("model type '" + r.string(model, "type", "") + "' is not supported (BPE)");
    if (!r.string(model, "continuing_subword_prefix", "").empty() ||
        !r.string(model, "end_of_word_suffix", "").empty())
        r.fail("BPE with continuing_subword_prefix / end_of_word_suffix is not supported");
    if (model.contains("dropout") && model["dropout"].is_number() && model["dropout"].get<double>() > 0)
        r.fail("BPE dropout is not supported");
    auto tok = std::make_shared<HfTokenizer>();
    if (!model.contains("vocab") || !model["vocab"].is_object()) r.fail("the BPE model has no vocab");
    int maxId = -1;
    for (const auto& [t, id] : model["vocab"].items()) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= (1 << 24))
            r.fail("vocab entry '" + t + "' has no valid id");
        tok->m_vocab[t] = id.get<int>();
        maxId = std::max(maxId, id.get<int>());
    }
    const int modelVocab = maxId + 1;
    std::vector<AddedToken> added;
    if (j.contains("added_tokens") && j["added_tokens"].is_array())
        for (const Json& a : j["added_tokens"]) {
            if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() ||
                a["id"].get<int64_t>() < 0 || a["id"].get<int64_t>() >= (1 << 24))
                r.fail("an added token without a valid id");
            const std::string content = r.string(a, "content", "");
            if (content.empty()) r.fail("an added token without content");
            added.push_back({content, a["id"].get<int>(), r.flag(a, "special", false),
                             r.flag(a, "lstrip", false), r.flag(a, "rstrip", false),
                             r.flag(a, "single_word", false)});
            maxId = std::max(maxId, a["id"].get<int>());
            tok->m_vocab.emplace(content, a["id"].get<int>());
        }
    tok->m_tokens.assign(size_t(maxId + 1), "");
    for (const auto& [t, id] : tok->m_vocab)
        tok->m_tokens[size_t(id)] = t;
    tok->m_special.assign(tok->m_tokens.size(), false);
    for (const AddedToken& a : added) {
        tok->m_tokens[size_t(a.id)] = a.content;
        tok->m_special[size_t(a.id)] = a.special;
    }
    tok->m_added = AddedTokens(std::move(added));
    tok->m_modelVocab = modelVocab;
    readMerges(*tok, model, r.where);
    tok->m_byteFallback = r.flag(model, "byte_fallback", false);
    tok->m_ignoreMerges = r.flag(model, "ignore_merges", false);
    tok->m_fuseUnk = r.flag(model, "fuse_unk", false);
    if (const std::string unk = r.string(model, "unk_token", ""); !unk.empty()) {
        const auto it = tok->m_vocab.find(unk);
        if (it == tok->m_vocab.end()) r.fail("unk_token '" + unk + "' is not in the vocabulary");
        tok->m_unk = it->second;
    }
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        const auto it = tok->m_vocab.find(name);
        tok->m_byteIds[size_t(b)] = it == tok->m_vocab.end() ? -1 : it->second;
    }
    r.normalizers(j.contains("normalizer") ? j["normalizer"] : Json(), tok->m_normalizers);
    r.preTokenizers(j.contains("pre_tokenizer") ? j["pre_tokenizer"] : Json(), tok->m_preTokenizers);
    readPostProcessor(*tok, j.contains("post_processor") ? j["post_processor"] : Json(), r.where);
    readDecoder(*tok, j.contains("decoder") ? j["decoder"] : Json());
    return tok;
}

} // namespace attnlens

namespace attnlens {

void HfTokenizer::readMerges(HfTokenizer& tok, const Json& model, const std::string& where) {
    if (!model.contains("merges") || !model["merges"].is_array())
        throw Error(where + ": the BPE model has no merges");
    int rank = 0;
    for (const Json& m : model["merges"]) {
        std::string a, b;
        if (m.is_string()) { // "a b"
            const std::string s = m.get<std::string>();
            const size_t space = s.find(' ');
            if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
                throw Error(where + ": merge '" + s + "' is not two tokens");
            a = s.substr(0, space), b = s.substr(space + 1);
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
            a = m[0].get<std::string>(), b = m[1].get<std::string>();
        } else {
            throw Error(where + ": merge " + std::to_string(rank) + " is neither \"a b\" nor [a, b]");
        }
        const auto ia = tok.m_vocab.find(a), ib = tok.m_vocab.find(b), ir = tok.m_vocab.find(a + b);
        if (ia == tok.m_vocab.end() || ib == tok.m_vocab.end() || ir == tok.m_vocab.end())
            throw Error(where + ": merge " + std::to_string(rank) + " ('" + a + "', '" + b +
                        "') is of tokens the vocabulary does not have");
        // a repeated pair keeps its last rank, as the Rust library's map does
        tok.m_merges[(uint64_t(uint32_t(ia->second)) << 32) | uint32_t(ib->second)] = {rank++, ir->second};
    }
}

void HfTokenizer::readPostProcessor(HfTokenizer& tok, const Json& post, const std::string& where, int depth) {
    if (post.is_null()) return;
    if (depth > 16) throw Error(where + ": post-processors nested deeper than 16");
    const std::string t = post.is_object() && post.contains("type") && post["type"].is_string()
                              ? post["type"].get<std::string>()
                              : "";
    if (t == "ByteLevel") return; // offsets only
    if (t == "Sequence" && post.contains("processors") && post["processors"].is_array()) {
        for (const Json& p : post["processors"])
            readPostProcessor(tok, p, where, depth + 1);
        return;
    }
    if (t != "TemplateProcessing")
        throw Error(where + ": post_processor type '" + t +
                    "' is not supported (TemplateProcessing, ByteLevel)");
    if (!post.contains("single") || !post["single"].is_array())
        throw Error(where + ": a template without 'single'");
    bool afterSequence = false;
    for (const Json& piece : post["single"]) {
        if (piece.is_object() && piece.contains("Sequence")) {
            afterSequence = true;
            continue;
        }
        if (!piece.is_object() || !piece.contains("SpecialToken") || !piece["SpecialToken"].is_object() ||
            !piece["SpecialToken"].contains("id") || !piece["SpecialToken"]["id"].is_string())
            throw Error(where + ": a template piece that is neither a sequence nor a special token");
        const std::string name = piece["SpecialToken"]["id"].get<std::string>();
        std::vector<int> ids;
        const Json* specials = post.contains("special_tokens") ? &post["special_tokens"] : nullptr;
        if (specials && specials->is_object() && specials->contains(name) &&
            (*specials)[name].contains("ids") && (*specials)[name]["ids"].is_array()) {
            for (const Json& id : (*specials)[name]["ids"])
                if (id.is_number_integer() && id.get<int64_t>() >= 0 &&
                    id.get<int64_t>() < int64_t(tok.m_tokens.size()))
                    ids.push_back(id.get<int>());
                else
                    throw Error(where + ": template token '" + name + "' has an id outside the vocabulary");
        } else if (const auto it = tok.m_vocab.find(name); it != tok.m_vocab.end()) {
            ids.push_back(it->second);
        } else {
            throw Error(where + ": template token '" + name + "' is not in the vocabulary");
        }
        auto& target = afterSequence ? tok.m_suffix : tok.m_prefix;
        target.insert(target.end(), ids.begin(), ids.end());
    }
}

void HfTokenizer::readDecoder(HfTokenizer& tok, const Json& decoder, int depth) {
    if (depth > 16) return;
    if (!decoder.is_object() || !decoder.contains("type") || !decoder["type"].is_string()) return;
    const std::string t = decoder["type"].get<std::string>();
    if (t == "ByteLevel") tok.m_byteLevelDecode = true;
    if (t == "Strip" && decoder.contains("start") && decoder["start"].is_number_integer() &&
        decoder["start"].get<int64_t>() > 0)
        tok.m_stripLeadingSpace = true;
    if (t == "Metaspace" && !(decoder.contains("prepend_scheme") && decoder["prepend_scheme"].is_string() &&
                              decoder["prepend_scheme"].get<std::string>() == "never"))
        tok.m_stripLeadingSpace = true;
    if (t == "Sequence" && decoder.contains("decoders") && decoder["decoders"].is_array())
        for (const Json& d : decoder["decoders"])
            readDecoder(tok, d, depth + 1);
}

void HfTokenizer::readEos(HfTokenizer& tok, const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::exists(dir / "tokenizer_config.json", ec)) return;
    const Json config = readJsonFile(dir / "tokenizer_config.json");
    if (!config.is_object() || !config.contains("eos_token")) return;
    const Json& eos = config["eos_token"];
    std::string name;
    if (eos.is_string()) name = eos.get<std::string>();
    if (eos.is_object() && eos.contains("content") && eos["content"].is_string())
        name = eos["content"].get<std::string>();
    if (const auto it = tok.m_vocab.find(name); it != tok.m_vocab.end()) tok.m_eos = it->second;
}

} // namespace attnlens
