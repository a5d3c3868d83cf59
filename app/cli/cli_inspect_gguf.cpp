#include "cli_inspect_gguf.h"

#include "core/io/gguf.h"
#include "core/io/json_file.h"
#include "core/models/text_folder.h"

#include <iomanip>
#include <iostream>
#include <map>

namespace cli {

namespace {

using attnlens::Json;

// A metadata value for the JSON: scalars as they are, arrays of up to 16 elements whole, longer ones counted.
Json valueJson(const attnlens::GgufValue& v) {
    using T = attnlens::GgufValueType;
    switch (v.type) {
    case T::String:
        return v.text;
    case T::Bool:
        return v.integer != 0;
    case T::F32:
    case T::F64:
        return v.number;
    case T::Array:
        if (v.count > 16 || v.elementType == T::Array) return v.describe();
        if (v.elementType == T::String) return v.strings;
        return v.numbers;
    default:
        return v.integer;
    }
}

} // namespace

int inspectGguf(const std::filesystem::path& path, const std::optional<std::string>& jsonPath) {
    const attnlens::GgufFile f = attnlens::GgufFile::open(path);
    struct TypeUse {
        uint64_t tensors = 0, parameters = 0;
    };
    std::map<std::string, TypeUse> types;
    uint64_t parameters = 0;
    Json tensors = Json::array();
    for (const attnlens::GgufTensor& t : f.tensors()) {
        const std::string type(attnlens::ggmlTypeInfo(t.type)->name);
        const auto n = static_cast<uint64_t>(attnlens::shapeNumel(t.shape));
        types[type].tensors += 1;
        types[type].parameters += n;
        parameters += n;
        tensors.push_back({{"name", t.name}, {"type", type}, {"shape", t.shape}});
    }
    Json typeJson = Json::object(), metadata = Json::object();
    for (const auto& [name, use] : types)
        typeJson[name] = {{"tensors", use.tensors}, {"parameters", use.parameters}};
    for (const auto& [key, value] : f.metadata())
        metadata[key] = valueJson(value);
    const std::string architecture = f.string("general.architecture").value_or("(none)");
    const auto refusal = attnlens::ggufRefusal(architecture, f.string("tokenizer.ggml.model").value_or(""));
    const std::string opens = refusal ? "does not open: " + *refusal
                                      : "opens as a text model: attnlens-cli text --model " + path.string();
    if (jsonPath)
        attnlens::writeJsonFile(*jsonPath,
                                {{"model", path.string()},
                                 {"format", "gguf"},
                                 {"version", f.version()},
                                 {"alignment", f.alignment()},
                                 {"architecture", architecture},
                                 {"opens", !refusal},
                                 {"why_not", refusal ? Json(*refusal) : Json()},
                                 {"supported", false},
                                 {"tensor_count", f.tensors().size()},
                                 {"parameter_count", parameters},
                                 {"file_bytes", f.fileSize()},
                                 {"types", typeJson},
                                 {"tensors", tensors},
                                 {"metadata", metadata}},
                                1);
    std::cout << "model:        " << path.string() << "\n"
              << "format:       GGUF v" << f.version() << ", " << f.fileSize() << " bytes, alignment "
              << f.alignment() << "\n"
              << "architecture: " << architecture << " (" << opens << ")\n"
              << "tensors:      " << f.tensors().size() << ", " << parameters << " parameters\n"
              << "types:        ";
    bool first = true;
    for (const auto& [name, use] : types) {
        std::cout << (first ? "" : ", ") << name << " ×" << use.tensors << " (" << std::fixed
                  << std::setprecision(1)
                  << 100.0 * double(use.parameters) / double(std::max<uint64_t>(1, parameters)) << " %)";
        first = false;
    }
    std::cout << " of the parameters\nmetadata:     " << f.metadata().size() << " keys\n";
    for (const auto& [key, value] : f.metadata())
        std::cout << "  " << std::left << std::setw(40) << key << value.describe() << "\n";
    return 0;
}

} // namespace cli
