#include "core/text/chat_template.h"

#include "core/io/json_file.h"
#include "core/util/error.h"
#include "core/util/isolated.h"

#include <jinja/lexer.h>
#include <jinja/parser.h>
#include <jinja/runtime.h>
#include <json.h>

#include <fstream>
#include <sstream>

namespace attnlens {

struct ChatTemplate::Program {
    std::string source, where;
    std::map<std::string, std::string> tokens;
    int timeoutMs = ChatTemplate::kDefaultTimeoutMs;
};

namespace {

// The engine runs in a child process (core/util/isolated.h): it recurses without limit on nested syntax,
// recursive macros and nested values, so a hostile template could otherwise overflow the stack; a child that
// dies or runs past its deadline (ChatTemplate::kDefaultTimeoutMs) is an error message. Forking costs about a
// millisecond.

jinja::program parseProgram(const std::string& source, std::string* lexedSource = nullptr) {
    jinja::lexer lexer;
    auto lexed = lexer.tokenize(source);
    if (lexedSource) *lexedSource = lexed.source;
    return jinja::parse_from_tokens(lexed);
}

std::string renderProgram(const std::string& source, const std::map<std::string, std::string>& tokens,
                          std::string_view userText, std::optional<std::time_t> now) {
    std::string lexedSource;
    const jinja::program program = parseProgram(source, &lexedSource);
    common_json input = common_json::object();
    common_json message = common_json::object();
    message["role"] = "user";
    message["content"] = std::string(userText);
    common_json messages = common_json::array();
    messages.push_back(message);
    input["messages"] = messages;
    input["add_generation_prompt"] = true;
    for (const auto& [name, value] : tokens)
        input[name] = value;
    jinja::context context(lexedSource);
    if (now) context.current_time = *now;
    jinja::global_from_json(context, input, /*mark_input=*/false);
    jinja::runtime runtime(context);
    const jinja::value result = runtime.execute(program);
    return jinja::runtime::gather_string_parts(result)->as_string().str();
}

// tokenizer_config.json's special tokens: a string, or an AddedToken object {"content": …}.
std::map<std::string, std::string> specialTokens(const Json& config) {
    std::map<std::string, std::string> tokens;
    for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
        if (!config.contains(key)) continue;
        const Json& t = config[key];
        if (t.is_string()) tokens[key] = t.get<std::string>();
        if (t.is_object() && t.contains("content") && t["content"].is_string())
            tokens[key] = t["content"].get<std::string>();
    }
    return tokens;
}

// "chat_template": a string, or [{"name": …, "template": …}, …] (the one named "default").
std::optional<std::string> templateOf(const Json& config, const std::string& where) {
    if (!config.contains("chat_template") || config["chat_template"].is_null()) return std::nullopt;
    const Json& t = config["chat_template"];
    if (t.is_string()) return t.get<std::string>();
    if (t.is_array()) {
        for (const Json& named : t)
            if (named.is_object() && named.value("name", Json()) == "default" && named.contains("template") &&
                named["template"].is_string())
                return named["template"].get<std::string>();
        throw Error(where + ": chat_template lists no template named \"default\"");
    }
    throw Error(where + ": chat_template is neither a string nor a list of named templates");
}

} // namespace

std::optional<ChatTemplate> ChatTemplate::load(const std::filesystem::path& dir) {
    std::error_code ec;
    const auto configPath = dir / "tokenizer_config.json";
    const Json config = std::filesystem::exists(configPath, ec) ? readJsonFile(configPath) : Json::object();
    if (!config.is_object()) throw Error("'" + configPath.string() + "': not a JSON object");
    const auto tokens = specialTokens(config);
    if (const auto file = dir / "chat_template.jinja"; std::filesystem::exists(file, ec)) {
        std::ifstream in(file, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in && !in.eof()) throw Error("'" + file.string() + "': cannot be read");
        return parse(text.str(), tokens, "'" + file.string() + "'");
    }
    const std::string where = "'" + configPath.string() + "'";
    const auto source = templateOf(config, where);
    if (!source) return std::nullopt;
    return parse(*source, tokens, where);
}

ChatTemplate ChatTemplate::parse(const std::string& source, std::map<std::string, std::string> tokens,
                                 const std::string& where, int timeoutMs) {
    auto p = std::make_shared<Program>();
    p->where = where;
    p->timeoutMs = timeoutMs;
    p->tokens = std::move(tokens);
    p->source = source;
    (void)runIsolated(
        [&] {
            (void)parseProgram(source);
            return std::string();
        },
        timeoutMs, where + ": the chat template (parsing)");
    ChatTemplate t;
    t.m_program = std::move(p);
    return t;
}

const std::string& ChatTemplate::source() const {
    return m_program->source;
}

std::string ChatTemplate::render(std::string_view userText, std::optional<std::time_t> now) const {
    const Program& p = *m_program;
    return runIsolated([&] { return renderProgram(p.source, p.tokens, userText, now); }, p.timeoutMs,
                       p.where + ": the chat template");
}

} // namespace attnlens
