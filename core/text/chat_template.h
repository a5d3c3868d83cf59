#pragma once
// ChatTemplate: a chat model's `chat_template` — chat_template.jinja in the folder (where transformers ≥ 4.47
// saves it), else tokenizer_config.json's "chat_template" (a string, or a list of named templates: "default")
// — rendered by llama.cpp's Jinja engine (third_party/llama-jinja; trim_blocks and lstrip_blocks as
// transformers' environment) for one user turn, as transformers'
// apply_chat_template(add_generation_prompt=True) does: messages = [{"role": "user", "content": text}],
// bos_token / eos_token / unk_token / pad_token from tokenizer_config.json (a string or {"content": …}). The
// result is tokenized without the post-processor's tokens (transformers tokenizes it with
// add_special_tokens=False): TextTokenizer::encodePlain.
//
//   if (auto chat = ChatTemplate::load(dir)) ids = tok.encodePlain(chat->render("Hi!")).ids;

#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace attnlens {

class ChatTemplate {
public:
    // nullopt when the folder has no chat template. Throws attnlens::Error naming the file for a template
    // that is no string or does not parse.
    static std::optional<ChatTemplate> load(const std::filesystem::path& dir);
    // A template from its source; `tokens`: bos_token, eos_token, … as the template sees them. `where` names
    // it in messages.
    // timeoutMs bounds parsing and each render (a fuzz target sets it short).
    static constexpr int kDefaultTimeoutMs = 10000;
    static ChatTemplate parse(const std::string& source, std::map<std::string, std::string> tokens,
                              const std::string& where, int timeoutMs = kDefaultTimeoutMs);

    // The text of one user turn, the assistant's turn opened. `now` is what strftime_now formats (default:
    // the current time). Throws attnlens::Error with the template's message (raise_exception) or the
    // engine's.
    std::string render(std::string_view userText, std::optional<std::time_t> now = std::nullopt) const;
    const std::string& source() const;

private:
    struct Program;
    std::shared_ptr<const Program> m_program;
};

} // namespace attnlens
