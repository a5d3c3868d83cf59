// attnlens-cli tokenize --model DIR [--json OUT] [--plain] "text"
// The tokens of a text as a text model's tokenizer gives them: DIR may hold only tokenizer files
// (tokenizer.json; or vocab.txt for WordPiece, vocab.json + merges.txt for GPT-2's BPE). stdout: one token a
// line, as the vocabulary names it. OUT: {"ids": [..], "tokens": [..]}. --plain: without the tokens the
// tokenizer adds around a text (BOS, [CLS] … [SEP]). --chat: the text as a user turn of the chat template.

#include "cli_common.h"
#include "core/io/json_file.h"
#include "core/models/text_folder.h"
#include "core/text/chat_template.h"
#include "core/text/hf_tokenizer.h"
#include "core/util/error.h"

#include <iostream>

namespace {

int runTokenize(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--model", "--json"}, {"--plain", "--chat"});
    const std::string text = args.single("the text");
    const auto model = args.value("--model");
    if (!model) throw cli::UsageError("--model DIR is required (a folder with tokenizer files)");
    const auto tokenizer = attnlens::loadTextTokenizer(*model);
    if (args.has("--plain") && args.has("--chat")) throw cli::UsageError("give --plain or --chat, not both");
    attnlens::TextEncoding e;
    if (args.has("--chat")) {
        const auto chat = attnlens::ChatTemplate::load(*model);
        if (!chat) throw attnlens::Error("'" + *model + "' has no chat template (tokenizer_config.json)");
        e = tokenizer->encodePlain(chat->render(text));
    } else {
        e = args.has("--plain") ? tokenizer->encodePlain(text) : tokenizer->encode(text);
    }
    for (const std::string& t : e.tokens)
        std::cout << t << "\n";
    if (const auto out = args.value("--json"))
        attnlens::writeJsonFile(*out, attnlens::Json{{"ids", e.ids}, {"tokens", e.tokens}}, 1);
    return 0;
}

const cli::Registration regTokenize{
    "tokenize", "--model DIR [--plain | --chat] [--json OUT] \"text\"",
    "a text's tokens and ids as a text model's tokenizer gives them (tokenizer.json, "
    "WordPiece or GPT-2 files; DIR may hold only those)",
    &runTokenize};

} // namespace
