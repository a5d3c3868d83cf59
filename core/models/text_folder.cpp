#include "core/models/text_folder.h"

#include "core/io/gguf.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/clip_text_model.h"
#include "core/models/gpt2_gguf.h"
#include "core/models/llama_gguf.h"
#include "core/models/llama_model.h"
#include "core/text/clip_tokenizer.h"
#include "core/text/gguf_tokenizer.h"
#include "core/text/hf_tokenizer.h"
#include "core/text/sentencepiece_tokenizer.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace attnlens {

namespace {

// The tokenizer loads first: a missing vocabulary fails before the weights are read.
void loadBert(TextFolder& f, const Callbacks& callbacks) {
    f.tokenizer = WordPieceTokenizer::load(f.dir);
    f.bert = BertModel::load(f.dir, callbacks);
    f.model = f.bert;
}

void loadGpt2(TextFolder& f, const Callbacks& callbacks) {
    f.tokenizer = ByteBpeTokenizer::load(f.dir);
    f.gpt2 = Gpt2Model::load(f.dir, callbacks);
    f.model = f.gpt2;
}

// Llama, Mistral, Qwen2/3, Gemma 3: the folder's tokenizer.json, else its tokenizer.model (SentencePiece).
std::shared_ptr<const TextTokenizer> loadLlamaTokenizer(const std::filesystem::path& dir) {
    if (HfTokenizer::present(dir)) return HfTokenizer::load(dir);
    if (SentencePieceTokenizer::present(dir)) return SentencePieceTokenizer::load(dir);
    throw Error("'" + dir.string() + "': no tokenizer files (tokenizer.json or tokenizer.model)");
}

void loadLlama(TextFolder& f, const Callbacks& callbacks) {
    f.tokenizer = loadLlamaTokenizer(f.dir);
    try {
        f.chat = ChatTemplate::load(f.dir);
    } catch (const Error& e) {
        f.chatProblem = e.what();
    }
    f.model = LlamaModel::load(f.dir, callbacks);
}

// A pipeline's text_encoder/ reads the tokenizer/ beside it (or its own files); every text is padded to the
// model's positions (77), as the pipeline feeds it.
void loadClipText(TextFolder& f, const Callbacks& callbacks) {
    const auto sibling = f.dir.parent_path() / "tokenizer";
    f.tokenizer = ClipTokenizer::load(ClipTokenizer::present(f.dir) ? f.dir : sibling);
    f.model = ClipTextModel::load(f.dir, callbacks);
    f.padTo = f.model->maxPositions();
}

// One row per text family: the model_type it reads and how its tokenizer and model load (the registry in
// core/io/model_folder.h names the family for people).
struct TextLoader {
    const char* modelType;
    void (*load)(TextFolder&, const Callbacks&);
};
constexpr TextLoader kLoaders[] = {{"bert", &loadBert},         {"gpt2", &loadGpt2},
                                   {"llama", &loadLlama},       {"mistral", &loadLlama},
                                   {"qwen2", &loadLlama},       {"qwen3", &loadLlama},
                                   {"gemma3_text", &loadLlama}, {"clip_text_model", &loadClipText}};

std::string loaderTypes() {
    std::string out;
    for (const TextLoader& l : kLoaders)
        out += (out.empty() ? "" : ", ") + std::string(l.modelType);
    return out;
}

} // namespace

std::shared_ptr<const TextTokenizer> loadTextTokenizer(const std::filesystem::path& dir) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir, ec) && GgufFile::isGguf(dir))
        return ggufTokenizer(GgufFile::open(dir)); // the vocabulary of its metadata
    if (!std::filesystem::is_directory(dir, ec)) throw Error("'" + dir.string() + "': folder not found");
    const std::string type = std::filesystem::exists(dir / "config.json", ec)
                                 ? JsonConfig(dir / "config.json").value<std::string>("model_type", "")
                                 : "";
    if (type == "bert") return WordPieceTokenizer::load(dir);
    if (type == "gpt2") return ByteBpeTokenizer::load(dir);
    if (ClipTokenizer::present(dir)) return ClipTokenizer::load(dir);
    if (type == "clip_text_model" && ClipTokenizer::present(dir.parent_path() / "tokenizer"))
        return ClipTokenizer::load(dir.parent_path() / "tokenizer");
    if (isLlamaModelType(type) || HfTokenizer::present(dir) || SentencePieceTokenizer::present(dir))
        return loadLlamaTokenizer(dir);
    if (std::filesystem::exists(dir / "vocab.txt", ec)) return WordPieceTokenizer::load(dir);
    if (std::filesystem::exists(dir / "vocab.json", ec)) return ByteBpeTokenizer::load(dir);
    throw Error(
        "'" + dir.string() +
        "': no tokenizer files (tokenizer.json, tokenizer.model, vocab.txt or vocab.json + merges.txt)");
}

bool isTextModelType(const std::string& modelType) {
    return std::any_of(std::begin(kLoaders), std::end(kLoaders),
                       [&](const TextLoader& l) { return modelType == l.modelType; });
}

// A GGUF file (llama.cpp, LM Studio, an Ollama blob): the Llama family's model, the tokenizer and chat
// template of its metadata.
void loadGgufText(TextFolder& f, const Callbacks& callbacks) {
    const GgufFile file = GgufFile::open(f.dir);
    f.tokenizer = ggufTokenizer(file);
    if (const auto source = file.string("tokenizer.chat_template")) {
        std::map<std::string, std::string> tokens;
        for (const auto& [name, key] : {std::pair{"bos_token", "tokenizer.ggml.bos_token_id"},
                                        std::pair{"eos_token", "tokenizer.ggml.eos_token_id"}})
            if (const auto id = file.integer(key); id && *id >= 0 && *id < f.tokenizer->vocabSize())
                tokens[name] = f.tokenizer->token(static_cast<int>(*id));
        try {
            f.chat =
                ChatTemplate::parse(*source, tokens, "'" + f.dir.string() + "': tokenizer.chat_template");
        } catch (const Error& e) {
            f.chatProblem = e.what();
        }
    }
    if (file.string("general.architecture").value_or("") == "gpt2") {
        f.modelType = "gpt2";
        f.gpt2 = loadGpt2Gguf(file, callbacks);
        f.model = f.gpt2;
        return;
    }
    const auto model = LlamaModel::load(file, callbacks);
    f.modelType = model->config().modelType;
    f.model = model;
}

std::optional<std::string> ggufRefusal(const std::string& architecture, const std::string& vocabulary) {
    if (!isLlamaGgufArchitecture(architecture) && architecture != "gpt2") // GPT-2: gpt2_gguf.h
        return "GGUF files of architecture '" + architecture +
               "' are not opened yet (llama, qwen2, qwen3, gemma3, gpt2 are)";
    if (vocabulary.empty()) return "it carries no vocabulary (tokenizer.ggml.model)";
    if (vocabulary != "gpt2" && vocabulary != "llama")
        return "its vocabulary ('" + vocabulary +
               "') is not read yet (byte-level BPE 'gpt2' and SentencePiece 'llama' are)";
    return std::nullopt;
}

TextFolder loadTextFolder(const std::filesystem::path& dir, const Callbacks& callbacks) {
    std::error_code ec;
    TextFolder f;
    f.dir = dir;
    if (std::filesystem::is_regular_file(dir, ec) && GgufFile::isGguf(dir)) {
        loadGgufText(f, callbacks);
    } else {
        if (!std::filesystem::exists(dir / "config.json", ec))
            throw Error("'" + dir.string() +
                        "': config.json is missing (expected a Hugging Face model folder)");
        f.modelType = JsonConfig(dir / "config.json").value<std::string>("model_type", "");
        const auto loader = std::find_if(std::begin(kLoaders), std::end(kLoaders),
                                         [&](const TextLoader& l) { return f.modelType == l.modelType; });
        if (loader == std::end(kLoaders))
            throw Error("'" + dir.string() + "': model_type '" + f.modelType +
                        "' is not a text model this version opens (" + loaderTypes() + ")");
        loader->load(f, callbacks);
    }
    if (f.tokenizerVocabSize() > f.model->vocabSize())
        throw Error("'" + dir.string() + "': the tokenizer has " + std::to_string(f.tokenizerVocabSize()) +
                    " tokens, the model " + std::to_string(f.model->vocabSize()));
    return f;
}

int TextFolder::tokenizerVocabSize() const {
    return tokenizer->vocabSize();
}

int TextFolder::layers() const {
    return model->layers();
}
int TextFolder::heads() const {
    return model->heads();
}
int TextFolder::maxPositions() const {
    return model->maxPositions();
}
int TextFolder::vocabSize() const {
    return model->vocabSize();
}

TextEncoding TextFolder::encode(const std::string& text, bool asChat) const {
    if (padTo > 0 && !asChat)
        if (const auto* clip = dynamic_cast<const ClipTokenizer*>(tokenizer.get()))
            return clip->encodePadded(text, padTo);
    if (!asChat) return tokenizer->encode(text);
    if (!chat)
        throw Error(chatProblem.empty() ? "this model has no chat template (tokenizer_config.json)"
                                        : chatProblem);
    return tokenizer->encodePlain(chat->render(text));
}

TextForward TextFolder::forward(const std::vector<int>& ids, bool logits, const RunControls& run) const {
    return model->forward(ids, logits, run);
}

const std::string& TextFolder::token(int id) const {
    return tokenizer->token(id);
}

std::string TextFolder::tokenText(int id) const {
    return tokenizer->tokenText(id);
}

std::vector<int> TextFolder::maskPositions(const std::vector<int>& ids) const {
    std::vector<int> out;
    const int mask = tokenizer->maskId();
    if (mask < 0) return out;
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == mask) out.push_back(static_cast<int>(i));
    return out;
}

int TextFolder::endOfTextId() const {
    if (!decoderOnly()) return -1;
    if (model->endOfTextId() >= 0) return model->endOfTextId();
    return tokenizer->endOfTextId();
}

bool TextFolder::isEndOfText(int id) const {
    if (!decoderOnly() || id < 0) return false;
    const std::vector<int> ids = model->endOfTextIds();
    if (!ids.empty()) return std::find(ids.begin(), ids.end(), id) != ids.end();
    return id == tokenizer->endOfTextId();
}

std::vector<TextCandidate> topCandidates(const float* logits, int64_t vocab, int k) {
    if (vocab <= 0) return {};
    const float maxLogit = *std::max_element(logits, logits + vocab);
    double sum = 0;
    for (int64_t i = 0; i < vocab; ++i)
        sum += std::exp(double(logits[i]) - maxLogit);
    std::vector<int> order(static_cast<size_t>(vocab));
    for (int64_t i = 0; i < vocab; ++i)
        order[static_cast<size_t>(i)] = static_cast<int>(i);
    const auto kk = static_cast<size_t>(std::min<int64_t>(k, vocab));
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kk), order.end(),
        [logits](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    std::vector<TextCandidate> out;
    for (size_t i = 0; i < kk; ++i)
        out.push_back({order[i], static_cast<float>(std::exp(double(logits[order[i]]) - maxLogit) / sum)});
    return out;
}

} // namespace attnlens
