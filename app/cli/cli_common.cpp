#include "cli_common.h"

#include "core/io/hf_cache.h"
#include "core/io/ollama.h"
#include "core/ops/gemm.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace cli {

std::map<std::string, Command>& registry() {
    static std::map<std::string, Command> commands;
    return commands;
}

Registration::Registration(std::string name, std::string usage, std::string summary, CommandFn run) {
    auto key = name;
    registry()[key] = Command{std::move(name), std::move(usage), std::move(summary), std::move(run)};
}

namespace {

// --model ORG/NAME (no such folder here): the snapshot in the Hugging Face cache, offline; a name that is not
// cached either is said with where the cache was looked for.
void resolveModelName(std::string& model) {
    std::error_code ec;
    if (std::filesystem::exists(model, ec) || !attnlens::isHfModelName(model)) return;
    if (const auto dir = attnlens::resolveHfModel(model)) {
        model = dir->string();
        return;
    }
    throw UsageError("--model '" + model + "': not a model folder (directory not found), and not in the " +
                     "Hugging Face cache at " + attnlens::hfHubCache().string() +
                     " (nothing is downloaded: `huggingface-cli download " + model + "` first)");
}

} // namespace

Args::Args(const std::vector<std::string>& args, std::vector<std::string> valueFlags,
           std::vector<std::string> switchFlags) {
    auto contains = [](const std::vector<std::string>& v, const std::string& s) {
        return std::find(v.begin(), v.end(), s) != v.end();
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() > 2 && a.rfind("--", 0) == 0) {
            std::string flag = a;
            std::optional<std::string> inlineValue;
            if (const auto eq = a.find('='); eq != std::string::npos) {
                flag = a.substr(0, eq);
                inlineValue = a.substr(eq + 1);
            }
            if (contains(valueFlags, flag)) {
                if (inlineValue) {
                    m_values[flag] = *inlineValue;
                } else {
                    if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
                    m_values[flag] = args[++i];
                }
            } else if (contains(switchFlags, flag) && !inlineValue) {
                m_switches.push_back(flag);
            } else {
                throw UsageError("unknown option '" + a + "'");
            }
        } else if (a == "--") {
            for (++i; i < args.size(); ++i)
                m_positionals.push_back(args[i]);
        } else {
            m_positionals.push_back(a);
        }
    }
    if (const auto it = m_values.find("--model"); it != m_values.end()) resolveModelName(it->second);
}

std::optional<std::string> Args::value(const std::string& flag) const {
    const auto it = m_values.find(flag);
    if (it == m_values.end()) return std::nullopt;
    return it->second;
}

std::string Args::value(const std::string& flag, const std::string& fallback) const {
    return value(flag).value_or(fallback);
}

bool Args::has(const std::string& flag) const {
    return m_values.count(flag) || std::find(m_switches.begin(), m_switches.end(), flag) != m_switches.end();
}

int Args::intValue(const std::string& flag, int fallback, int min, int max) const {
    const auto v = value(flag);
    if (!v) return fallback;
    int out = 0;
    const auto* end = v->data() + v->size();
    const auto [ptr, ec] = std::from_chars(v->data(), end, out);
    if (ec != std::errc() || ptr != end) throw UsageError(flag + ": expected an integer, got '" + *v + "'");
    if (out < min || out > max)
        throw UsageError(flag + ": " + *v + " is out of range [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
    return out;
}

double Args::doubleValue(const std::string& flag, double fallback, double min, double max) const {
    const auto v = value(flag);
    if (!v) return fallback;
    double out = 0;
    const auto* end = v->data() + v->size();
    const auto [ptr, ec] = std::from_chars(v->data(), end, out);
    if (ec != std::errc() || ptr != end || !std::isfinite(out))
        throw UsageError(flag + ": expected a number, got '" + *v + "'");
    if (out < min || out > max)
        throw UsageError(flag + ": " + *v + " is out of range [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
    return out;
}

const std::string& Args::single(const std::string& what) const {
    if (m_positionals.empty()) throw UsageError("missing " + what);
    if (m_positionals.size() > 1) throw UsageError("unexpected argument '" + m_positionals[1] + "'");
    return m_positionals.front();
}

void applyPrecision(const Args& args) {
    const std::string p = args.value("--precision", "fp32");
    if (p == "fp32") {
        attnlens::setLinearPrecision(attnlens::LinearPrecision::Fp32);
    } else if (p == "bf16") {
        attnlens::setLinearPrecision(attnlens::LinearPrecision::Bf16); // throws, naming what is missing
    } else {
        throw UsageError("--precision: expected fp32 or bf16, got '" + p + "'");
    }
}

std::optional<std::pair<int, int>> parseIntPair(const std::string& text, char separator) {
    const size_t at = text.find(separator);
    if (at == std::string::npos) return std::nullopt;
    int a = 0, b = 0;
    const char* end = text.data() + text.size();
    const auto r1 = std::from_chars(text.data(), text.data() + at, a);
    const auto r2 = std::from_chars(text.data() + at + 1, end, b);
    if (r1.ec != std::errc() || r1.ptr != text.data() + at || r2.ec != std::errc() || r2.ptr != end)
        return std::nullopt;
    return std::pair(a, b);
}

std::pair<int, int> parseLayerHead(const std::string& flag, const std::string& item) {
    const auto pair = parseIntPair(item, ':');
    if (!pair || pair->first < 0 || pair->second < 0)
        throw UsageError(flag + ": expected LAYER:HEAD (numbers from 0), got '" + item + "'");
    return *pair;
}

std::vector<std::pair<int, int>> parseHeadList(const std::string& flag, const std::string& text, int layers,
                                               int heads) {
    std::vector<std::pair<int, int>> pairs;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        const auto [layer, head] = parseLayerHead(flag, item);
        if (layer >= layers || head >= heads)
            throw UsageError(flag + ": head " + item + " is outside the " + std::to_string(layers) +
                             " layers × " + std::to_string(heads) + " heads (numbered from 0)");
        pairs.emplace_back(layer, head);
        start = end + 1;
    }
    return pairs;
}

std::filesystem::path modelDir(const Args& args, attnlens::ModelKind kind) {
    if (const auto dir = args.value("--model")) return attnlens::resolveModelReference(*dir); // ollama:NAME
    return attnlens::builtinModelDir(kind);
}

} // namespace cli
