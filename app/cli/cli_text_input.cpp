#include "cli_text_input.h"

#include "core/io/model_folder.h"

namespace cli {

attnlens::TextEncoding encodeText(const attnlens::TextFolder& folder, const std::string& text, int extra,
                                  bool chat) {
    attnlens::TextEncoding encoding = folder.encode(text, chat);
    if (encoding.ids.empty()) throw UsageError("the text has no tokens");
    if (static_cast<int>(encoding.ids.size()) + extra > folder.maxPositions())
        throw UsageError("the text is too long: " + std::to_string(encoding.ids.size()) + " tokens" +
                         (extra ? " + " + std::to_string(extra) + " to generate" : std::string()) +
                         ", the model has " + std::to_string(folder.maxPositions()) + " positions");
    return encoding;
}

} // namespace cli
