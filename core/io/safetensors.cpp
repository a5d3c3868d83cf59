#include "core/io/safetensors.h"

#include "core/io/mapped_file.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <fstream>
#include <limits>

namespace attnlens {

namespace {

// The JSON header of a mapped file; sets `dataOffset` to where the tensor bytes begin.
nlohmann::json readHeader(const unsigned char* bytes, uint64_t size, const std::string& where,
                          uint64_t& dataOffset) {
    uint64_t headerLength = 0;
    for (int i = 7; i >= 0; --i)
        headerLength = (headerLength << 8) | bytes[i];
    if (headerLength > kMaxSafeTensorsHeaderBytes)
        throw Error(where + ": header length " + std::to_string(headerLength) + " exceeds the limit of " +
                    std::to_string(kMaxSafeTensorsHeaderBytes) +
                    " bytes (corrupt or not a safetensors file)");
    if (headerLength > size - 8)
        throw Error(where + ": header length " + std::to_string(headerLength) + " runs past the end of the " +
                    std::to_string(size) + "-byte file (truncated?)");
    if (headerLength < 2)
        throw Error(where + ": header of " + std::to_string(headerLength) + " bytes is too short");
    nlohmann::json header;
    try {
        header = nlohmann::json::parse(bytes + 8, bytes + 8 + headerLength);
    } catch (const nlohmann::json::exception& e) { // parse errors, and numbers too large for a double
        throw Error(where + ": header is not valid JSON: " + e.what());
    }
    if (!header.is_object())
        throw Error(where + ": header must be a JSON object, found " + header.type_name());
    dataOffset = 8 + headerLength;
    return header;
}

// One header entry as a TensorInfo, validated against itself and the data section's size.
TensorInfo parseEntry(const std::string& name, const nlohmann::json& entry, uint64_t dataSize,
                      const std::string& where) {
    const std::string what = where + ": tensor '" + name + "'";
    if (!entry.is_object()) throw Error(what + ": entry must be an object, found " + entry.type_name());
    const auto dt = entry.find("dtype");
    const auto sh = entry.find("shape");
    const auto off = entry.find("data_offsets");
    if (dt == entry.end() || !dt->is_string()) throw Error(what + ": missing or non-string 'dtype'");
    if (sh == entry.end() || !sh->is_array()) throw Error(what + ": missing or non-array 'shape'");
    if (off == entry.end() || !off->is_array() || off->size() != 2)
        throw Error(what + ": 'data_offsets' must be an array [begin, end]");

    TensorInfo info;
    info.name = name;
    const auto dtype = parseDType(dt->get<std::string>());
    if (!dtype)
        throw Error(what + ": unknown dtype '" + dt->get<std::string>() + "' (expected F32, F16 or BF16)");
    info.dtype = *dtype;
    // A saturating element count, so that a hostile shape cannot overflow.
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : *sh) {
        if (!d.is_number_unsigned())
            throw Error(what + ": shape " + sh->dump() + " must hold non-negative integers");
        const auto v = d.get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) overflow = true;
        info.shape.push_back(
            static_cast<int64_t>(std::min<uint64_t>(v, std::numeric_limits<int64_t>::max())));
        if (v != 0 && numel > std::numeric_limits<uint64_t>::max() / v)
            overflow = true;
        else
            numel *= v;
    }
    for (const auto& o : *off)
        if (!o.is_number_unsigned())
            throw Error(what + ": data_offsets " + off->dump() + " must be non-negative integers");
    info.begin = (*off)[0].get<uint64_t>();
    info.end = (*off)[1].get<uint64_t>();
    if (info.begin > info.end)
        throw Error(what + ": data_offsets begin " + std::to_string(info.begin) + " is after end " +
                    std::to_string(info.end));
    const auto elemSize = static_cast<uint64_t>(dtypeSize(info.dtype));
    if (elemSize != 0) {
        if (overflow || (numel != 0 && numel > std::numeric_limits<uint64_t>::max() / elemSize))
            throw Error(what + ": shape " + shapeToString(info.shape) + " is too large");
        if (numel * elemSize != info.end - info.begin)
            throw Error(what + ": shape " + shapeToString(info.shape) + " of " +
                        std::string(dtypeName(info.dtype)) + " needs " + std::to_string(numel * elemSize) +
                        " bytes, but data_offsets give " + std::to_string(info.end - info.begin));
    }
    if (info.end > dataSize)
        throw Error(what + ": data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) +
                    "] run past the data section of " + std::to_string(dataSize) +
                    " bytes (truncated file?)");
    return info;
}

// No two non-empty tensors may share bytes; `tensors` sorted by offset.
void checkNoOverlap(const std::vector<TensorInfo>& tensors, const std::string& where) {
    for (size_t i = 1; i < tensors.size(); ++i) {
        const TensorInfo& prev = tensors[i - 1];
        const TensorInfo& cur = tensors[i];
        if (cur.begin < prev.end && cur.begin != cur.end && prev.begin != prev.end)
            throw Error(where + ": tensors '" + prev.name + "' [" + std::to_string(prev.begin) + ", " +
                        std::to_string(prev.end) + ") and '" + cur.name + "' [" + std::to_string(cur.begin) +
                        ", " + std::to_string(cur.end) + ") overlap");
    }
}

} // namespace

TensorFile readSafeTensors(const std::filesystem::path& path, std::shared_ptr<MappedFile> mapping) {
    const std::string where = quoted(path);
    const unsigned char* bytes = mapping->bytes();
    const uint64_t size = mapping->size();
    if (size < 8)
        throw Error(where + ": truncated safetensors file: " + std::to_string(size) +
                    " bytes, expected at least 8 (the header length)");

    uint64_t dataOffset = 0;
    const nlohmann::json header = readHeader(bytes, size, where, dataOffset);
    std::vector<TensorInfo> tensors;
    std::map<std::string, std::string> metadata;
    for (auto it = header.begin(); it != header.end(); ++it) {
        if (it.key() != "__metadata__") {
            tensors.push_back(parseEntry(it.key(), it.value(), size - dataOffset, where));
            continue;
        }
        if (!it.value().is_object()) throw Error(where + ": __metadata__ must be an object of strings");
        for (auto m = it.value().begin(); m != it.value().end(); ++m) {
            if (!m.value().is_string())
                throw Error(where + ": __metadata__ value for '" + m.key() + "' must be a string, found " +
                            m.value().type_name());
            metadata[m.key()] = m.value().get<std::string>();
        }
    }
    // File order (by offset) for listing; then no two tensors may share bytes.
    std::stable_sort(tensors.begin(), tensors.end(),
                     [](const TensorInfo& a, const TensorInfo& b) { return a.begin < b.begin; });
    checkNoOverlap(tensors, where);
    TensorFile::Storage data{bytes + dataOffset, size - dataOffset, mapping};
    return TensorFile(path, TensorFile::Format::SafeTensors, size, {std::move(data)}, std::move(tensors),
                      std::move(metadata));
}

void writeSafeTensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                      const std::map<std::string, std::string>& metadata) {
    nlohmann::json header = nlohmann::json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::vector<unsigned char> data;
    for (const auto& t : tensors) {
        if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16)
            throw Error("writeSafeTensors: tensor '" + t.name + "': only F32, F16 and BF16 can be written");
        const uint64_t begin = data.size();
        const auto values = t.tensor.values();
        for (float v : values) {
            if (t.dtype == DType::F32) {
                const auto bits = std::bit_cast<uint32_t>(v);
                for (int b = 0; b < 4; ++b)
                    data.push_back(static_cast<unsigned char>(bits >> (8 * b)));
            } else {
                const uint16_t bits = t.dtype == DType::F16 ? floatToHalf(v) : floatToBFloat16(v);
                data.push_back(static_cast<unsigned char>(bits & 0xffu));
                data.push_back(static_cast<unsigned char>(bits >> 8));
            }
        }
        header[t.name] = {{"dtype", std::string(dtypeName(t.dtype))},
                          {"shape", t.tensor.shape()},
                          {"data_offsets", {begin, static_cast<uint64_t>(data.size())}}};
    }
    std::string json = header.dump();
    while ((8 + json.size()) % 8 != 0)
        json.push_back(' '); // align the data section like HF does
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("'" + path.string() + "': cannot open for writing");
    const uint64_t n = json.size();
    for (int b = 0; b < 8; ++b)
        out.put(static_cast<char>((n >> (8 * b)) & 0xffu));
    out.write(json.data(), static_cast<std::streamsize>(json.size()));
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!out) throw Error("'" + path.string() + "': write failed");
}

} // namespace attnlens
