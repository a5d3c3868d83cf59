// libFuzzer target: a chat template as a user's folder brings it (tokenizer_config.json's chat_template or
// chat_template.jinja: Jinja source run by llama.cpp's engine, core/text/chat_template). The input is the
// template's source; it is parsed and rendered for a fixed user turn. Any input must end in text or
// attnlens::Error. The engine runs in child processes (core/util/isolated.h), so what this target proves is
// that no template takes the caller down; the engine's own faults end as messages. A template that runs
// longer than 300 ms counts as a hang (its message), so that the CI's 20 seconds see many inputs.
#include "core/text/chat_template.h"
#include "core/util/error.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string source(reinterpret_cast<const char*>(data), size);
    try {
        const auto chat =
            attnlens::ChatTemplate::parse(source, {{"bos_token", "<s>"}, {"eos_token", "</s>"}}, "fuzz", 300);
        (void)chat.render("Hi 😀 {{ x }} <|im_end|>", 0);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
