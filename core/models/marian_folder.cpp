#include "core/models/marian_folder.h"

#include "core/io/model_folder.h"
#include "core/util/error.h"

namespace attnlens {

void checkTokenizerMatchesModel(const MarianTokenizer& tokenizer, const MarianModel& model) {
    const MarianConfig& c = model.config();
    const std::string vocab = (tokenizer.dir() / "vocab.json").string();
    const std::string hint = ": the tokenizer does not belong to this checkpoint";
    if (tokenizer.idLimit() > c.vocabSize)
        throw Error("'" + vocab + "' uses ids up to " + std::to_string(tokenizer.idLimit() - 1) +
                    " but config.json vocab_size is " + std::to_string(c.vocabSize) + hint);
    if (tokenizer.vocabEntries() != c.vocabSize)
        throw Error("'" + vocab + "' has " + std::to_string(tokenizer.vocabEntries()) +
                    " entries but config.json vocab_size is " + std::to_string(c.vocabSize) + hint);
    if (tokenizer.eosId() != c.eosTokenId)
        throw Error("'" + vocab + "' maps </s> to " + std::to_string(tokenizer.eosId()) +
                    " but config.json eos_token_id is " + std::to_string(c.eosTokenId) + hint);
    if (tokenizer.padId() && *tokenizer.padId() != c.padTokenId)
        throw Error("'" + vocab + "' maps <pad> to " + std::to_string(*tokenizer.padId()) +
                    " but config.json pad_token_id is " + std::to_string(c.padTokenId) + hint);
}

MarianFolder loadMarianFolder(const std::filesystem::path& dir, const Callbacks& callbacks) {
    const ModelFolderInfo info = inspectModelFolder(dir);
    if (info.kind != ModelKind::Marian)
        throw Error("'" + dir.string() + "': model_type is '" + info.modelType + "', expected 'marian'");
    MarianFolder m;
    m.tokenizer = MarianTokenizer::load(dir);
    m.model = MarianModel::load(dir, callbacks);
    checkTokenizerMatchesModel(*m.tokenizer, *m.model);
    return m;
}

std::string decoderStartPiece(const MarianFolder& folder) {
    if (!folder.tokenizer || !folder.model) return "<pad>";
    return folder.tokenizer->idToPiece(folder.model->config().decoderStartTokenId);
}

} // namespace attnlens
