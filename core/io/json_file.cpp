#include "core/io/json_file.h"

#include "core/io/model_limits.h"
#include "core/util/error.h"

#include <fstream>
#include <sstream>

namespace attnlens {

Json readJsonFile(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw Error("'" + path.string() + "': file not found");
    if (std::filesystem::is_directory(path, ec))
        throw Error("'" + path.string() + "': is a directory, expected a JSON file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("'" + path.string() + "': cannot open for reading");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    try {
        return Json::parse(buffer.str());
    } catch (const nlohmann::json::exception& e) { // parse errors, and numbers too large for a double
        throw Error("'" + path.string() + "': malformed JSON: " + e.what());
    }
}

void writeJsonFile(const std::filesystem::path& path, const Json& json, int indent) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("'" + path.string() + "': cannot open for writing");
    out << json.dump(indent) << '\n';
    if (!out) throw Error("'" + path.string() + "': write failed");
}

JsonConfig::JsonConfig(const std::filesystem::path& path) : m_json(readJsonFile(path)), m_path(path) {
    if (!m_json.is_object()) throw Error("'" + path.string() + "': expected a JSON object at the top level");
}

int JsonConfig::positive(const std::string& key) const {
    const int v = get<int>(key);
    checkPositive(v, key);
    return v;
}

int JsonConfig::layerCount(const std::string& key) const {
    const int v = get<int>(key);
    checkLayerCount(v, key);
    return v;
}

void JsonConfig::checkLayerCount(int64_t value, const std::string& key) const {
    checkPositive(value, key);
    if (value > kMaxModelLayers)
        throw Error("'" + m_path.string() + "': '" + key + "' is " + std::to_string(value) + ", more than " +
                    std::to_string(kMaxModelLayers) + " layers (no model has that many)");
}

void JsonConfig::checkPositive(int64_t value, const std::string& key) const {
    if (value <= 0)
        throw Error("'" + m_path.string() + "': '" + key + "' must be positive, found " +
                    std::to_string(value));
}

Error JsonConfig::missing(const std::string& key) const {
    return Error("'" + m_path.string() + "': required key '" + key + "' is missing");
}

Error JsonConfig::wrongType(const std::string& key) const {
    return Error("'" + m_path.string() + "': key '" + key + "' has the wrong type (found " +
                 std::string(m_json.at(key).type_name()) + ": " + m_json.at(key).dump() + ")");
}

Error JsonConfig::outOfRange(const std::string& key) const {
    std::string value = m_json.at(key).dump();
    if (value.size() > 80) value = value.substr(0, 77) + "...";
    return Error("'" + m_path.string() + "': key '" + key + "' holds a number out of range (" + value + ")");
}

} // namespace attnlens
