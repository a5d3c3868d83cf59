#pragma once
// Shared plumbing for attnlens-cli subcommands: a registry, a small argument parser and the error
// convention (exit 0 on success; exit 2 with one line "error: ..." on stderr for bad input/usage).
//
// A subcommand lives in its own cli_<name>.cpp and registers itself:
//   static const cli::Registration reg{"attention", "--input IN.json [--json OUT]", "summary",
//   &runAttention};

#include "core/io/model_folder.h"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cli {

// Thrown for bad usage or bad input; main() prints "error: <message>" and exits 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using CommandFn = std::function<int(const std::vector<std::string>& args)>;

struct Command {
    std::string name;
    std::string usage;
    std::string summary;
    CommandFn run;
};

std::map<std::string, Command>& registry();

// `attnlens-cli SUB --help`: a line per option of the usage (and per positional argument) saying what it
// does and its default, then examples (cli_help.cpp holds them all, next to nothing else).
struct OptionHelp {
    std::string flag; // as the usage writes it: "--beam N", "--key-side", "\"Satz\""
    std::string text; // one line: what it does, "(default: …)" where it has one
};
struct CommandHelp {
    std::vector<OptionHelp> options;
    std::vector<std::string> examples; // whole command lines, "attnlens-cli SUB …"
};
// The help of a registered subcommand (empty for an unknown name).
const CommandHelp& commandHelp(const std::string& name);

struct Registration {
    Registration(std::string name, std::string usage, std::string summary, CommandFn run);
};

// Parses "--flag value", "--flag=value", boolean "--flag" and positionals. Unknown flags are errors.
class Args {
public:
    // valueFlags take a value; switchFlags take none.
    Args(const std::vector<std::string>& args, std::vector<std::string> valueFlags,
         std::vector<std::string> switchFlags = {});

    std::optional<std::string> value(const std::string& flag) const;
    std::string value(const std::string& flag, const std::string& fallback) const;
    bool has(const std::string& flag) const;
    int intValue(const std::string& flag, int fallback, int min, int max) const;
    double doubleValue(const std::string& flag, double fallback, double min, double max) const;
    const std::vector<std::string>& positionals() const { return m_positionals; }
    // Exactly one positional, named `what` in the error message.
    const std::string& single(const std::string& what) const;

private:
    std::map<std::string, std::string> m_values;
    std::vector<std::string> m_switches;
    std::vector<std::string> m_positionals;
};

// --model DIR, or the built-in model of `kind` (the registry's, core/io/model_folder.h). Every subcommand's
// --model also takes ORG/NAME[@REVISION][/SUB/FOLDER] of a model in the Hugging Face cache
// (core/io/hf_cache.h), resolved to its snapshot folder when Args reads it (offline; an uncached name is exit
// 2, saying where the cache was looked for).
std::filesystem::path modelDir(const Args& args, attnlens::ModelKind kind);

// "L:H[,L:H…]" (layers and heads numbered from 0) → (layer, head) pairs, each checked against the model's
// `layers` × `heads`. `flag` names the option in the error.
std::vector<std::pair<int, int>> parseHeadList(const std::string& flag, const std::string& text, int layers,
                                               int heads);
// "A<separator>B" with two integers and nothing else ("4,2", "1:3"), or nothing.
std::optional<std::pair<int, int>> parseIntPair(const std::string& text, char separator);
// One "LAYER:HEAD" (non-negative integers), unchecked against a model.
std::pair<int, int> parseLayerHead(const std::string& flag, const std::string& item);

// --precision fp32|bf16 (default fp32): the number format linear layers are packed in when the model
// loads (attnlens::setLinearPrecision). Call before loading. bf16 where the CPU cannot: exit 2, one line.
void applyPrecision(const Args& args);
inline constexpr const char* kPrecisionUsage = "[--precision fp32|bf16]";

} // namespace cli
