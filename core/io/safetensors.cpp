#include "core/io/safetensors.h"

#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnlens {

namespace {

struct DTypeEntry {
    DType dtype;
    std::string_view name;
    int64_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::F32, "F32", 4}, {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2}, {DType::F64, "F64", 8},
    {DType::I64, "I64", 8}, {DType::I32, "I32", 4}, {DType::I16, "I16", 2},   {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},   {DType::Bool, "BOOL", 1},
};

std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

} // namespace

std::string_view dtypeName(DType dtype) {
    for (const auto& e : kDTypes)
        if (e.dtype == dtype) return e.name;
    return "other";
}

std::optional<DType> parseDType(std::string_view name) {
    for (const auto& e : kDTypes)
        if (e.name == name) return e.dtype;
    // Defined by the format but rarely used: we keep such tensors listed but cannot load them.
    static constexpr std::string_view kOther[] = {"U16", "U32", "U64", "F8_E4M3", "F8_E5M2"};
    for (auto o : kOther)
        if (o == name) return DType::Other;
    return std::nullopt;
}

int64_t dtypeSize(DType dtype) {
    for (const auto& e : kDTypes)
        if (e.dtype == dtype) return e.size;
    return 0;
}

float halfToFloat(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;
        } else { // subnormal: normalise
            int shift = 0;
            while (!(mantissa & 0x400u)) {
                mantissa <<= 1;
                ++shift;
            }
            mantissa &= 0x3ffu;
            bits = sign | (static_cast<uint32_t>(127 - 15 + 1 - shift) << 23) | (mantissa << 13);
        }
    } else if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else {
        bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    }
    return std::bit_cast<float>(bits);
}

float bfloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t floatToHalf(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) // inf or nan
        return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) // rounds to >= 65520: overflow to inf
        return static_cast<uint16_t>(sign | 0x7c00u);
    if (absx < 0x38800000u) { // below the smallest normal half: subnormal or zero
        const float a = std::bit_cast<float>(absx);
        // subnormal step is 2^-24; nearbyint rounds half to even in the default mode
        const auto m = static_cast<uint32_t>(std::nearbyint(a * 16777216.0f));
        return static_cast<uint16_t>(sign | m);
    }
    uint32_t mant = absx & 0x7fffffu;
    uint32_t exp = (absx >> 23) - 127 + 15;
    uint32_t half = (exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half; // carry into exponent is correct
    return static_cast<uint16_t>(sign | half);
}

struct SafeTensorsFile::Mapping {
    void* address = MAP_FAILED;
    size_t length = 0;
    ~Mapping() {
        if (address != MAP_FAILED) munmap(address, length);
    }
};

namespace {

// A file descriptor closed when it goes out of scope.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : m_fd(fd) {}
    ~FileDescriptor() {
        if (m_fd >= 0) ::close(m_fd);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

// The JSON header of a mapped file; sets `dataOffset` to where the tensor bytes begin.
nlohmann::json readHeader(const unsigned char* bytes, uint64_t size, const std::string& where, uint64_t& dataOffset) {
    uint64_t headerLength = 0;
    for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | bytes[i];
    if (headerLength > SafeTensorsFile::kMaxHeaderBytes)
        throw Error(where + ": header length " + std::to_string(headerLength) + " exceeds the limit of " +
                    std::to_string(SafeTensorsFile::kMaxHeaderBytes) + " bytes (corrupt or not a safetensors file)");
    if (headerLength > size - 8)
        throw Error(where + ": header length " + std::to_string(headerLength) + " runs past the end of the " +
                    std::to_string(size) + "-byte file (truncated?)");
    if (headerLength < 2) throw Error(where + ": header of " + std::to_string(headerLength) + " bytes is too short");
    nlohmann::json header;
    try {
        header = nlohmann::json::parse(bytes + 8, bytes + 8 + headerLength);
    } catch (const nlohmann::json::exception& e) { // parse errors, and numbers too large for a double
        throw Error(where + ": header is not valid JSON: " + e.what());
    }
    if (!header.is_object()) throw Error(where + ": header must be a JSON object, found " + header.type_name());
    dataOffset = 8 + headerLength;
    return header;
}

// One header entry as a TensorInfo, validated against itself and the data section's size.
TensorInfo parseEntry(const std::string& name, const nlohmann::json& entry, uint64_t dataSize, const std::string& where) {
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
    if (!dtype) throw Error(what + ": unknown dtype '" + dt->get<std::string>() + "' (expected F32, F16 or BF16)");
    info.dtype = *dtype;
    // A saturating element count, so that a hostile shape cannot overflow.
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : *sh) {
        if (!d.is_number_unsigned()) throw Error(what + ": shape " + sh->dump() + " must hold non-negative integers");
        const auto v = d.get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) overflow = true;
        info.shape.push_back(static_cast<int64_t>(std::min<uint64_t>(v, std::numeric_limits<int64_t>::max())));
        if (v != 0 && numel > std::numeric_limits<uint64_t>::max() / v) overflow = true;
        else numel *= v;
    }
    for (const auto& o : *off)
        if (!o.is_number_unsigned()) throw Error(what + ": data_offsets " + off->dump() + " must be non-negative integers");
    info.begin = (*off)[0].get<uint64_t>();
    info.end = (*off)[1].get<uint64_t>();
    if (info.begin > info.end)
        throw Error(what + ": data_offsets begin " + std::to_string(info.begin) + " is after end " + std::to_string(info.end));
    const auto elemSize = static_cast<uint64_t>(dtypeSize(info.dtype));
    if (elemSize != 0) {
        if (overflow || (numel != 0 && numel > std::numeric_limits<uint64_t>::max() / elemSize))
            throw Error(what + ": shape " + shapeToString(info.shape) + " is too large");
        if (numel * elemSize != info.end - info.begin)
            throw Error(what + ": shape " + shapeToString(info.shape) + " of " + std::string(dtypeName(info.dtype)) + " needs " +
                        std::to_string(numel * elemSize) + " bytes, but data_offsets give " +
                        std::to_string(info.end - info.begin));
    }
    if (info.end > dataSize)
        throw Error(what + ": data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) +
                    "] run past the data section of " + std::to_string(dataSize) + " bytes (truncated file?)");
    return info;
}

// No two non-empty tensors may share bytes; `tensors` sorted by offset.
void checkNoOverlap(const std::vector<TensorInfo>& tensors, const std::string& where) {
    for (size_t i = 1; i < tensors.size(); ++i) {
        const TensorInfo& prev = tensors[i - 1];
        const TensorInfo& cur = tensors[i];
        if (cur.begin < prev.end && cur.begin != cur.end && prev.begin != prev.end)
            throw Error(where + ": tensors '" + prev.name + "' [" + std::to_string(prev.begin) + ", " +
                        std::to_string(prev.end) + ") and '" + cur.name + "' [" + std::to_string(cur.begin) + ", " +
                        std::to_string(cur.end) + ") overlap");
    }
}

} // namespace

std::shared_ptr<SafeTensorsFile::Mapping> SafeTensorsFile::mapFile(const std::filesystem::path& path) {
    const std::string where = quoted(path);
    const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) throw Error(where + ": cannot open (" + std::strerror(errno) + ")");
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw Error(where + ": not a regular file");
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size < 8)
        throw Error(where + ": truncated safetensors file: " + std::to_string(size) +
                    " bytes, expected at least 8 (the header length)");
    auto mapping = std::make_shared<Mapping>();
    mapping->length = static_cast<size_t>(size);
    // Private, writable copy-on-write mapping: tensors viewing it can be written without touching
    // the file (and without faulting on a read-only page).
    mapping->address = mmap(nullptr, mapping->length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
    if (mapping->address == MAP_FAILED) throw Error(where + ": cannot memory-map (" + std::strerror(errno) + ")");
    return mapping;
}

SafeTensorsFile SafeTensorsFile::open(const std::filesystem::path& path) {
    SafeTensorsFile file;
    file.m_path = path;
    const std::string where = quoted(path);
    file.m_mapping = mapFile(path);
    const auto* bytes = static_cast<const unsigned char*>(file.m_mapping->address);
    const uint64_t size = file.m_mapping->length;

    uint64_t dataOffset = 0;
    const nlohmann::json header = readHeader(bytes, size, where, dataOffset);
    file.m_dataSection = bytes + dataOffset;
    for (auto it = header.begin(); it != header.end(); ++it) {
        if (it.key() != "__metadata__") {
            file.m_tensors.push_back(parseEntry(it.key(), it.value(), size - dataOffset, where));
            continue;
        }
        if (!it.value().is_object()) throw Error(where + ": __metadata__ must be an object of strings");
        for (auto m = it.value().begin(); m != it.value().end(); ++m) {
            if (!m.value().is_string())
                throw Error(where + ": __metadata__ value for '" + m.key() + "' must be a string, found " + m.value().type_name());
            file.m_metadata[m.key()] = m.value().get<std::string>();
        }
    }
    // File order (by offset) for listing; then no two tensors may share bytes.
    std::stable_sort(file.m_tensors.begin(), file.m_tensors.end(),
                     [](const TensorInfo& a, const TensorInfo& b) { return a.begin < b.begin; });
    checkNoOverlap(file.m_tensors, where);
    for (size_t i = 0; i < file.m_tensors.size(); ++i) file.m_index.emplace(file.m_tensors[i].name, i);
    return file;
}

uint64_t SafeTensorsFile::fileSize() const { return m_mapping ? m_mapping->length : 0; }

const TensorInfo* SafeTensorsFile::find(std::string_view name) const {
    const auto it = m_index.find(name);
    return it == m_index.end() ? nullptr : &m_tensors[it->second];
}

Tensor SafeTensorsFile::load(std::string_view name) const {
    const TensorInfo* info = find(name);
    if (!info) throw Error(quoted(m_path) + ": tensor '" + std::string(name) + "' not found");
    return load(*info);
}

Tensor SafeTensorsFile::load(const TensorInfo& info) const {
    const unsigned char* src = m_dataSection + info.begin;
    const int64_t n = shapeNumel(info.shape);
    switch (info.dtype) {
    case DType::F32: {
        if (reinterpret_cast<uintptr_t>(src) % alignof(float) == 0)
            return Tensor::view(info.shape, const_cast<float*>(reinterpret_cast<const float*>(src)), m_mapping);
        Tensor t(info.shape);
        std::memcpy(t.data(), src, static_cast<size_t>(n) * sizeof(float));
        return t;
    }
    case DType::F16:
    case DType::BF16: {
        Tensor t(info.shape);
        float* dst = t.data();
        const bool half = info.dtype == DType::F16;
        for (int64_t i = 0; i < n; ++i) {
            uint16_t v;
            std::memcpy(&v, src + 2 * i, 2);
            dst[i] = half ? halfToFloat(v) : bfloat16ToFloat(v);
        }
        return t;
    }
    default:
        throw Error(quoted(m_path) + ": tensor '" + info.name + "' has dtype " + std::string(dtypeName(info.dtype)) +
                    "; only F32, F16 and BF16 can be loaded");
    }
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
                for (int b = 0; b < 4; ++b) data.push_back(static_cast<unsigned char>(bits >> (8 * b)));
            } else {
                const uint16_t bits = t.dtype == DType::F16
                                          ? floatToHalf(v)
                                          : static_cast<uint16_t>((std::bit_cast<uint32_t>(v) + 0x7fffu +
                                                                   ((std::bit_cast<uint32_t>(v) >> 16) & 1u)) >> 16);
                data.push_back(static_cast<unsigned char>(bits & 0xffu));
                data.push_back(static_cast<unsigned char>(bits >> 8));
            }
        }
        header[t.name] = {{"dtype", std::string(dtypeName(t.dtype))},
                          {"shape", t.tensor.shape()},
                          {"data_offsets", {begin, static_cast<uint64_t>(data.size())}}};
    }
    std::string json = header.dump();
    while ((8 + json.size()) % 8 != 0) json.push_back(' '); // align the data section like HF does
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("'" + path.string() + "': cannot open for writing");
    const uint64_t n = json.size();
    for (int b = 0; b < 8; ++b) out.put(static_cast<char>((n >> (8 * b)) & 0xffu));
    out.write(json.data(), static_cast<std::streamsize>(json.size()));
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!out) throw Error("'" + path.string() + "': write failed");
}

} // namespace attnlens
