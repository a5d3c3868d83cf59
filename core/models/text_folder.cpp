#include "core/models/text_folder.h"

#include "core/io/json_file.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace attnlens {

bool isTextModelType(const std::string& modelType) {
    return modelType == "bert" || modelType == "gpt2";
}

TextFolder loadTextFolder(const std::filesystem::path& dir, const Callbacks& callbacks) {
    std::error_code ec;
    if (!std::filesystem::exists(dir / "config.json", ec))
        throw Error("'" + dir.string() + "': config.json is missing (expected a Hugging Face model folder)");
    TextFolder f;
    f.dir = dir;
    f.modelType = JsonConfig(dir / "config.json").value<std::string>("model_type", "");
    if (f.modelType == "bert") {
        f.wordPiece =
            WordPieceTokenizer::load(dir); // tokenizer first: a missing vocab fails before the weights load
        f.bert = BertModel::load(dir, callbacks);
        f.model = f.bert;
        if (f.wordPiece->vocabSize() > f.bert->config().vocabSize)
            throw Error("'" + dir.string() + "': the tokenizer has " +
                        std::to_string(f.wordPiece->vocabSize()) + " tokens, the model " +
                        std::to_string(f.bert->config().vocabSize));
    } else if (f.modelType == "gpt2") {
        f.bpe = ByteBpeTokenizer::load(dir);
        f.gpt2 = Gpt2Model::load(dir, callbacks);
        f.model = f.gpt2;
        if (f.bpe->vocabSize() > f.gpt2->config().vocabSize)
            throw Error("'" + dir.string() + "': the tokenizer has " + std::to_string(f.bpe->vocabSize()) +
                        " tokens, the model " + std::to_string(f.gpt2->config().vocabSize));
    } else {
        throw Error("'" + dir.string() + "': model_type '" + f.modelType +
                    "' is not a text model this version opens (bert, gpt2)");
    }
    return f;
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

TextEncoding TextFolder::encode(const std::string& text) const {
    return bpe ? bpe->encode(text) : wordPiece->encode(text);
}

TextForward TextFolder::forward(const std::vector<int>& ids, bool logits, const RunControls& run) const {
    return model->forward(ids, logits, run);
}

const std::string& TextFolder::token(int id) const {
    return bpe ? bpe->token(id) : wordPiece->token(id);
}

std::string TextFolder::tokenText(int id) const {
    return bpe ? bpe->tokenText(id) : wordPiece->token(id);
}

std::vector<int> TextFolder::maskPositions(const std::vector<int>& ids) const {
    std::vector<int> out;
    if (!wordPiece || wordPiece->maskId() < 0) return out;
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == wordPiece->maskId()) out.push_back(static_cast<int>(i));
    return out;
}

int TextFolder::endOfTextId() const {
    if (!decoderOnly()) return -1;
    if (model->endOfTextId() >= 0) return model->endOfTextId();
    return bpe ? bpe->endOfTextId().value_or(-1) : -1;
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
