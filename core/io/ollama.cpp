#include "core/io/ollama.h"

#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace attnlens {

namespace {

constexpr std::string_view kRegistry = "registry.ollama.ai";
constexpr std::string_view kModelLayer = "application/vnd.ollama.image.model";

// "qwen2.5:0.5b" → registry.ollama.ai/library/qwen2.5/0.5b, "user/m" → registry.ollama.ai/user/m/latest,
// "hf.co/org/repo:q4" → hf.co/org/repo/q4.
std::filesystem::path manifestPath(std::string_view name) {
    std::string n(name), tag = "latest";
    if (const size_t colon = n.rfind(':');
        colon != std::string::npos && n.find('/', colon) == std::string::npos) {
        tag = n.substr(colon + 1);
        n.resize(colon);
    }
    std::vector<std::string> parts;
    for (size_t start = 0; start <= n.size();) {
        const size_t slash = std::min(n.find('/', start), n.size());
        parts.push_back(n.substr(start, slash - start));
        start = slash + 1;
    }
    if (parts.size() == 1) parts.insert(parts.begin(), "library");
    if (parts.size() == 2 || parts.front().find('.') == std::string::npos)
        parts.insert(parts.begin(), std::string(kRegistry));
    std::filesystem::path p;
    for (const std::string& part : parts) {
        if (part.empty() || part == "." || part == "..")
            throw Error("ollama: '" + std::string(name) + "' is no model name");
        p /= part;
    }
    if (tag.empty() || tag == "." || tag == "..")
        throw Error("ollama: '" + std::string(name) + "' is no model name");
    return p / tag;
}

// The display name of manifests/<rel>: library models without registry and namespace.
std::string displayName(const std::filesystem::path& rel) {
    std::vector<std::string> parts;
    for (const auto& p : rel)
        parts.push_back(p.string());
    const std::string tag = parts.back();
    parts.pop_back();
    if (parts.size() >= 2 && parts[0] == kRegistry) {
        parts.erase(parts.begin());
        if (parts.size() >= 2 && parts[0] == "library") parts.erase(parts.begin());
    }
    std::string n;
    for (const std::string& p : parts)
        n += (n.empty() ? "" : "/") + p;
    return n + ":" + tag;
}

// A string field of a JSON object, "" when absent or of another type (json::value would throw then).
std::string stringField(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Reads a manifest's model layer into m. Throws attnlens::Error naming the file.
void readManifest(const std::filesystem::path& modelsDir, OllamaModel& m) {
    const std::string where = "'" + m.manifest.string() + "'";
    std::ifstream in(m.manifest);
    if (!in) throw Error(where + ": cannot be read");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw Error(where + ": not an Ollama manifest (" + e.what() + ")");
    }
    if (!j.is_object() || !j.contains("layers") || !j["layers"].is_array())
        throw Error(where + ": not an Ollama manifest (no \"layers\")");
    for (const auto& layer : j["layers"]) {
        if (!layer.is_object() || stringField(layer, "mediaType") != kModelLayer) continue;
        const std::string digest = stringField(layer, "digest");
        if (digest.rfind("sha256:", 0) != 0 || digest.size() != 71 ||
            digest.find_first_not_of("0123456789abcdef", 7) != std::string::npos)
            throw Error(where + ": the model layer's digest '" + digest + "' is no sha256 digest");
        m.model = modelsDir / "blobs" / ("sha256-" + digest.substr(7));
        if (layer.contains("size") && layer["size"].is_number_unsigned())
            m.bytes = layer["size"].get<uint64_t>();
        std::error_code ec;
        m.present = std::filesystem::is_regular_file(m.model, ec);
        return;
    }
}

} // namespace

std::filesystem::path ollamaModelsDir() {
    if (const char* dir = std::getenv("OLLAMA_MODELS"); dir && *dir) return dir;
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home ? home : "") / ".ollama" / "models";
}

std::vector<OllamaModel> listOllamaModels(const std::filesystem::path& modelsDir) {
    std::vector<OllamaModel> out;
    const std::filesystem::path root = modelsDir / "manifests";
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it.depth() > 4) it.disable_recursion_pending();
        if (!it->is_regular_file(ec)) continue;
        OllamaModel m;
        m.manifest = it->path();
        m.name = displayName(std::filesystem::relative(it->path(), root, ec));
        try {
            readManifest(modelsDir, m);
        } catch (const Error&) {
            continue;
        }
        out.push_back(std::move(m));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
}

OllamaModel findOllamaModel(const std::filesystem::path& modelsDir, std::string_view name) {
    OllamaModel m;
    m.manifest = modelsDir / "manifests" / manifestPath(name);
    m.name = displayName(manifestPath(name));
    std::error_code ec;
    if (!std::filesystem::is_regular_file(m.manifest, ec)) {
        std::string known;
        for (const OllamaModel& o : listOllamaModels(modelsDir))
            known += (known.empty() ? "" : ", ") + o.name;
        throw Error("ollama: no model '" + m.name + "' in '" + modelsDir.string() + "' (" +
                    (known.empty() ? std::string("it holds none") : "it holds " + known) +
                    "); `ollama pull " + m.name + "` downloads it");
    }
    readManifest(modelsDir, m);
    if (m.model.empty()) throw Error("ollama: '" + m.manifest.string() + "' names no model layer");
    if (!m.present)
        throw Error("ollama: the model file of '" + m.name + "' (" + m.model.string() + ") is missing");
    return m;
}

std::filesystem::path resolveModelReference(const std::string& argument) {
    if (argument.rfind("ollama:", 0) != 0) return argument;
    return findOllamaModel(ollamaModelsDir(), std::string_view(argument).substr(7)).model;
}

} // namespace attnlens
