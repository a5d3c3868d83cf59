#pragma once
// JSON files (config.json, generation_config.json, preprocessor_config.json, vocab.json, CLI input)
// read through nlohmann-json, with errors that name the file and key.

#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace attnlens {

using Json = nlohmann::json;

// Parses a JSON file; throws attnlens::Error naming the file (missing, unreadable, malformed).
Json readJsonFile(const std::filesystem::path& path);
void writeJsonFile(const std::filesystem::path& path, const Json& json, int indent = -1);

// A config object together with the file it came from, for typed access with clear errors:
//   JsonConfig cfg(dir / "config.json");
//   int d = cfg.get<int>("d_model");            // throws "config.json: key 'd_model' missing"
//   int h = cfg.value<int>("heads", 8);         // default when absent; throws when of wrong type
class JsonConfig {
public:
    JsonConfig() = default;
    explicit JsonConfig(const std::filesystem::path& path);
    JsonConfig(Json json, std::filesystem::path path) : m_json(std::move(json)), m_path(std::move(path)) {}

    const Json& json() const { return m_json; }
    const std::filesystem::path& path() const { return m_path; }
    bool has(const std::string& key) const { return m_json.is_object() && m_json.contains(key) && !m_json[key].is_null(); }

    template <typename T> T get(const std::string& key) const {
        if (!has(key)) throw missing(key);
        return convert<T>(key);
    }
    template <typename T> T value(const std::string& key, T fallback) const {
        return has(key) ? convert<T>(key) : fallback;
    }

private:
    template <typename T> T convert(const std::string& key) const {
        try {
            return m_json.at(key).get<T>();
        } catch (const nlohmann::json::exception&) {
            throw wrongType(key);
        }
    }
    Error missing(const std::string& key) const;
    Error wrongType(const std::string& key) const;

    Json m_json;
    std::filesystem::path m_path;
};

} // namespace attnlens
