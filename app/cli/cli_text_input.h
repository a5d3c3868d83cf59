#pragma once
// The options `text`, `heads` and `neuron` share for BERT- and GPT-2-style folders: --model (default the
// built-in llama-en-tiny) and a text encoded by the folder's own tokenizer, checked against the model's
// positions.

#include "cli_common.h"
#include "core/models/text_folder.h"

#include <filesystem>
#include <string>

namespace cli {

// `text` encoded; usage errors for a text without tokens or longer than the model's positions (`extra`:
// tokens still to come, e.g. --generate N; `chat`: as a user turn of the chat template, TextFolder::encode).
attnlens::TextEncoding encodeText(const attnlens::TextFolder& folder, const std::string& text, int extra = 0,
                                  bool chat = false);

} // namespace cli
