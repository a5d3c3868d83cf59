#pragma once
// JSON files (config.json, generation_config.json, preprocessor_config.json, vocab.json, CLI input)
// read through nlohmann-json, with errors that name the file and key.

#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

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
    bool has(const std::string& key) const {
        return m_json.is_object() && m_json.contains(key) && !m_json[key].is_null();
    }

    template <typename T> T get(const std::string& key) const {
        if (!has(key)) throw missing(key);
        return convert<T>(key);
    }
    template <typename T> T value(const std::string& key, T fallback) const {
        return has(key) ? convert<T>(key) : fallback;
    }
    // The checks every family's config prologue makes: a required whole number above 0, and a value read
    // (or derived) under `key` that must be above 0. Both throw attnlens::Error naming the file and the key:
    // "'…/config.json': 'num_hidden_layers' must be positive, found 0".
    int positive(const std::string& key) const;
    void checkPositive(int64_t value, const std::string& key) const;
    // A number of transformer blocks: positive and at most kMaxModelLayers (core/io/model_limits.h).
    int layerCount(const std::string& key) const;
    void checkLayerCount(int64_t value, const std::string& key) const;
    // The error for a value this build does not support: "…/config.json: act_fn must be \"silu\"".
    Error refuse(const std::string& key, const std::string& why) const {
        return Error(m_path.string() + ": " + key + " " + why);
    }

private:
    template <typename T> struct IsVector : std::false_type {};
    template <typename U> struct IsVector<std::vector<U>> : std::true_type { using Element = U; };
    // Whether every number in `j` fits T (element-wise for vectors): nlohmann's get<int>() of 1e112, or
    // get<float>() of 1e300, is undefined behaviour (found by tests/fuzz/fuzz_configs), not an error.
    template <typename T> static bool fits(const Json& j) {
        if constexpr (IsVector<T>::value) {
            if (!j.is_array()) return true; // get<>() reports the wrong type
            for (const Json& e : j)
                if (!fits<typename IsVector<T>::Element>(e)) return false;
            return true;
        } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            if (!j.is_number()) return true;
            if (j.is_number_unsigned())
                return j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
            if (j.is_number_integer()) {
                const int64_t v = j.get<int64_t>();
                return v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                       (v < 0 ||
                        static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
            }
            const double v = j.get<double>();
            return std::isfinite(v) && v == std::trunc(v) &&
                   v >= static_cast<double>(std::numeric_limits<T>::min()) &&
                   v <= static_cast<double>(std::numeric_limits<T>::max());
        } else if constexpr (std::is_floating_point_v<T>) {
            if (!j.is_number_float()) return true;
            const double v = j.get<double>();
            return !std::isfinite(v) || std::abs(v) <= static_cast<double>(std::numeric_limits<T>::max());
        } else {
            return true;
        }
    }
    template <typename T> T convert(const std::string& key) const {
        const Json& j = m_json.at(key);
        if (!fits<T>(j)) throw outOfRange(key);
        try {
            return j.get<T>();
        } catch (const nlohmann::json::exception&) {
            throw wrongType(key);
        }
    }
    Error outOfRange(const std::string& key) const;
    Error missing(const std::string& key) const;
    Error wrongType(const std::string& key) const;

    Json m_json;
    std::filesystem::path m_path;
};

} // namespace attnlens
