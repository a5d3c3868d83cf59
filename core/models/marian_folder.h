#pragma once
// Loading a whole Marian folder (model + tokenizer) with the consistency checks between them.
//
//   MarianFolder m = loadMarianFolder(dir, callbacks);
//   DecodeSession session(m.model, m.tokenizer, "Guten Morgen!");

#include "core/models/marian_model.h"
#include "core/text/marian_tokenizer.h"
#include "core/util/callbacks.h"

#include <filesystem>
#include <memory>
#include <string>

namespace attnlens {

struct MarianFolder {
    std::shared_ptr<const MarianModel> model;
    std::shared_ptr<const MarianTokenizer> tokenizer;
};

// Throws attnlens::Error when vocab.json does not belong to the checkpoint: an id outside
// [0, vocab_size), an entry count different from vocab_size, or </s> / <pad> ids that differ from
// config.json's eos_token_id / pad_token_id.
void checkTokenizerMatchesModel(const MarianTokenizer& tokenizer, const MarianModel& model);

// The piece of the decoder's start token (decoder self-attention's first key); "<pad>" without a tokenizer.
std::string decoderStartPiece(const MarianFolder& folder);

// Tokenizer first (cheap, most likely to be missing), then the weights, then the checks.
MarianFolder loadMarianFolder(const std::filesystem::path& dir, const Callbacks& callbacks = {});

} // namespace attnlens
