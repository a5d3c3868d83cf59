#include "core/io/gguf.h"

#include "core/io/mapped_file.h"
#include "core/io/model_limits.h"
#include "core/util/error.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace attnlens {

namespace {

constexpr uint32_t kMagic = 0x46554747; // "GGUF" read as a little-endian uint32
constexpr uint64_t kMaxCount = uint64_t{1} << 24;

int64_t checkedProduct(const Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d <= 0 || n > std::numeric_limits<int64_t>::max() / d) return -1;
        n *= d;
    }
    return n;
}

} // namespace

// Reads the mapped bytes front to back; every read is checked against the end of the file.
class GgufParser {
public:
    GgufParser(GgufFile& file, const unsigned char* bytes, uint64_t size, bool metadataOnly = false)
        : m_f(file), m_bytes(bytes), m_size(size), m_where("'" + file.m_path.string() + "'"),
          m_metadataOnly(metadataOnly) {}

    void parse() {
        if (u32("the magic") != kMagic) fail("not a GGUF file (it does not start with \"GGUF\")");
        m_f.m_version = u32("the version");
        if (m_f.m_version == 1)
            fail("GGUF version 1 (2023) is not read: convert the model again with a current llama.cpp");
        if (m_f.m_version != 2 && m_f.m_version != 3)
            fail("GGUF version " + std::to_string(m_f.m_version) + " is not known (2 and 3 are)");
        const uint64_t tensors = count(u64("the tensor count"), "tensors");
        const uint64_t keys = count(u64("the metadata count"), "metadata keys");
        for (uint64_t i = 0; i < keys; ++i) {
            std::string key = str("a metadata key");
            GgufValue v = value(key);
            if (!m_f.m_metadata.emplace(key, std::move(v)).second)
                fail("metadata key '" + key + "' appears twice");
        }
        if (m_metadataOnly) return;
        if (const GgufValue* a = m_f.value("general.alignment")) {
            if (!a->isInteger() || a->integer <= 0 || (a->integer & (a->integer - 1)) != 0 ||
                a->integer > 65536)
                fail("general.alignment must be a power of two up to 65536, found " + a->describe());
            m_f.m_alignment = static_cast<uint64_t>(a->integer);
        }
        for (uint64_t i = 0; i < tensors; ++i)
            m_f.m_tensors.push_back(tensorInfo());
        const uint64_t dataStart = (m_pos + m_f.m_alignment - 1) / m_f.m_alignment * m_f.m_alignment;
        placeTensors(dataStart);
    }

private:
    [[noreturn]] void fail(const std::string& what) const { throw Error(m_where + ": " + what); }
    void need(uint64_t n, const char* what) const {
        if (n > m_size - m_pos)
            fail(std::string(what) + " runs past the end of the " + std::to_string(m_size) +
                 "-byte file (truncated?)");
    }
    template <typename T> T read(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, m_bytes + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }
    uint32_t u32(const char* what) { return read<uint32_t>(what); }
    uint64_t u64(const char* what) { return read<uint64_t>(what); }
    uint64_t count(uint64_t n, const char* what) const {
        if (n > kMaxCount)
            fail(std::to_string(n) + " " + what + " is more than this reader accepts (corrupt?)");
        return n;
    }
    std::string str(const char* what) {
        const uint64_t n = u64(what);
        need(n, what);
        std::string s(reinterpret_cast<const char*>(m_bytes + m_pos), n);
        m_pos += n;
        return s;
    }

    // One scalar of `type` into v (strings into v.text).
    void scalar(GgufValueType type, GgufValue& v, const std::string& key) {
        const char* what = "a metadata value";
        switch (type) {
        case GgufValueType::U8:
            v.integer = read<uint8_t>(what);
            break;
        case GgufValueType::I8:
            v.integer = read<int8_t>(what);
            break;
        case GgufValueType::U16:
            v.integer = read<uint16_t>(what);
            break;
        case GgufValueType::I16:
            v.integer = read<int16_t>(what);
            break;
        case GgufValueType::U32:
            v.integer = read<uint32_t>(what);
            break;
        case GgufValueType::I32:
            v.integer = read<int32_t>(what);
            break;
        case GgufValueType::I64:
            v.integer = read<int64_t>(what);
            break;
        case GgufValueType::U64: {
            const uint64_t u = read<uint64_t>(what);
            if (u > uint64_t(std::numeric_limits<int64_t>::max()))
                fail("metadata '" + key + "': u64 too large");
            v.integer = static_cast<int64_t>(u);
            break;
        }
        case GgufValueType::F32:
            v.number = read<float>(what);
            break;
        case GgufValueType::F64:
            v.number = read<double>(what);
            break;
        case GgufValueType::Bool: {
            const uint8_t b = read<uint8_t>(what);
            if (b > 1) fail("metadata '" + key + "': a boolean of " + std::to_string(b));
            v.integer = b;
            break;
        }
        case GgufValueType::String:
            v.text = str(what);
            break;
        case GgufValueType::Array:
            fail("metadata '" + key + "': an array inside an array is not read");
        }
    }

    GgufValueType valueType(const std::string& key) {
        const uint32_t t = u32("a metadata type");
        if (t > static_cast<uint32_t>(GgufValueType::F64))
            fail("metadata '" + key + "': unknown value type " + std::to_string(t));
        return static_cast<GgufValueType>(t);
    }

    GgufValue value(const std::string& key) {
        GgufValue v;
        v.type = valueType(key);
        if (v.type != GgufValueType::Array) {
            scalar(v.type, v, key);
            return v;
        }
        v.elementType = valueType(key);
        v.count = u64("an array length");
        // every element takes at least one byte (strings: 8): a longer array cannot fit in what is left
        if (v.count > m_size - m_pos)
            fail("metadata '" + key + "': an array of " + std::to_string(v.count) +
                 " elements is longer than the file");
        if (v.elementType == GgufValueType::Array) {
            for (uint64_t i = 0; i < v.count; ++i)
                skipArray(key);
            return v;
        }
        GgufValue e;
        for (uint64_t i = 0; i < v.count; ++i) {
            scalar(v.elementType, e, key);
            if (m_metadataOnly) continue; // walked past, not kept
            if (v.elementType == GgufValueType::String)
                v.strings.push_back(std::move(e.text));
            else
                v.numbers.push_back(v.elementType == GgufValueType::F32 || v.elementType == GgufValueType::F64
                                        ? e.number
                                        : double(e.integer));
        }
        return v;
    }
    void skipArray(const std::string& key) {
        const GgufValueType t = valueType(key);
        const uint64_t n = u64("an array length");
        if (n > m_size - m_pos) fail("metadata '" + key + "': a nested array is longer than the file");
        GgufValue e;
        for (uint64_t i = 0; i < n; ++i) {
            if (t == GgufValueType::Array)
                skipArray(key);
            else
                scalar(t, e, key);
        }
    }

    GgufTensor tensorInfo() {
        GgufTensor t;
        t.name = str("a tensor name");
        const std::string what = "tensor '" + t.name + "'";
        const uint32_t dims = u32("a tensor's axis count");
        if (dims == 0 || dims > 4) fail(what + ": " + std::to_string(dims) + " axes (GGML has 1 to 4)");
        for (uint32_t d = 0; d < dims; ++d) {
            const uint64_t n = u64("a tensor's axis");
            if (n == 0 || n > uint64_t{1} << 40) fail(what + ": an axis of " + std::to_string(n));
            t.shape.insert(t.shape.begin(), static_cast<int64_t>(n)); // the fastest axis is stored first
        }
        const uint32_t type = u32("a tensor's type");
        const GgmlTypeInfo* info = ggmlTypeInfo(type);
        if (!info) fail(what + ": GGML type " + std::to_string(type) + " is not one this build knows");
        t.type = info->type;
        const int64_t n = checkedProduct(t.shape);
        if (n < 0 || t.columns() % info->blockSize != 0)
            fail(what + ": its rows of " + std::to_string(t.columns()) + " are not whole " +
                 std::string(info->name) + " blocks of " + std::to_string(info->blockSize));
        const int64_t bytes = ggmlBytes(*info, n);
        if (bytes < 0)
            fail(what + ": " + std::to_string(n) + " elements are more bytes than a file can hold");
        t.bytes = static_cast<uint64_t>(bytes);
        t.offset = u64("a tensor's offset");
        return t;
    }

    void placeTensors(uint64_t dataStart) {
        std::vector<std::pair<uint64_t, uint64_t>> ranges;
        for (size_t i = 0; i < m_f.m_tensors.size(); ++i) {
            GgufTensor& t = m_f.m_tensors[i];
            const std::string what = "tensor '" + t.name + "'";
            if (t.offset % m_f.m_alignment != 0)
                fail(what + ": offset " + std::to_string(t.offset) + " is not aligned to " +
                     std::to_string(m_f.m_alignment));
            if (dataStart > m_size || t.offset > m_size - dataStart ||
                t.bytes > m_size - dataStart - t.offset)
                fail(what + ": its " + std::to_string(t.bytes) + " bytes at data offset " +
                     std::to_string(t.offset) + " run past the end of the file (truncated?)");
            t.offset += dataStart;
            ranges.emplace_back(t.offset, t.offset + t.bytes);
            if (!m_f.m_index.emplace(t.name, i).second) fail(what + " appears twice");
        }
        std::sort(ranges.begin(), ranges.end());
        for (size_t i = 1; i < ranges.size(); ++i)
            if (ranges[i].first < ranges[i - 1].second) fail("two tensors' bytes overlap");
    }

    GgufFile& m_f;
    const unsigned char* m_bytes;
    uint64_t m_size;
    uint64_t m_pos = 0;
    std::string m_where;
    bool m_metadataOnly = false;
};

bool GgufValue::isInteger() const {
    return type != GgufValueType::F32 && type != GgufValueType::F64 && type != GgufValueType::String &&
           type != GgufValueType::Array && type != GgufValueType::Bool;
}

std::string_view ggufValueTypeName(GgufValueType type) {
    static constexpr std::string_view names[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                 "bool", "string", "array", "u64", "i64", "f64"};
    const auto i = static_cast<size_t>(type);
    return i < std::size(names) ? names[i] : "?";
}

std::string GgufValue::describe() const {
    switch (type) {
    case GgufValueType::String:
        return "string '" + (text.size() > 60 ? text.substr(0, 57) + "..." : text) + "'";
    case GgufValueType::Array:
        return "array of " + std::to_string(count) + " " + std::string(ggufValueTypeName(elementType));
    case GgufValueType::F32:
    case GgufValueType::F64: {
        std::ostringstream s;
        s << ggufValueTypeName(type) << " " << number;
        return s.str();
    }
    case GgufValueType::Bool:
        return integer ? "bool true" : "bool false";
    default:
        return std::string(ggufValueTypeName(type)) + " " + std::to_string(integer);
    }
}

int64_t GgufTensor::rows() const {
    int64_t r = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i)
        r *= shape[i];
    return r;
}

GgufFile GgufFile::open(const std::filesystem::path& path) {
    GgufFile f;
    f.m_path = path;
    f.m_file = MappedFile::map(path);
    GgufParser(f, f.m_file->bytes(), f.m_file->size()).parse();
    return f;
}

std::map<std::string, std::string, std::less<>> GgufFile::peekStrings(const std::filesystem::path& path) {
    GgufFile f;
    f.m_path = path;
    f.m_file = MappedFile::map(path);
    GgufParser(f, f.m_file->bytes(), f.m_file->size(), true).parse();
    std::map<std::string, std::string, std::less<>> out;
    for (auto& [key, value] : f.m_metadata)
        if (value.type == GgufValueType::String) out.emplace(key, std::move(value.text));
    return out;
}

bool GgufFile::isGguf(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

uint64_t GgufFile::fileSize() const {
    return m_file ? m_file->size() : 0;
}

const GgufValue* GgufFile::value(std::string_view key) const {
    const auto it = m_metadata.find(key);
    return it == m_metadata.end() ? nullptr : &it->second;
}

namespace {
[[noreturn]] void wrongType(const std::filesystem::path& path, std::string_view key, const GgufValue& v,
                            const char* expected) {
    throw Error("'" + path.string() + "': metadata '" + std::string(key) + "' should be " + expected +
                ", found " + v.describe());
}
} // namespace

std::optional<int64_t> GgufFile::integer(std::string_view key) const {
    const GgufValue* v = value(key);
    if (!v) return std::nullopt;
    if (!v->isInteger()) wrongType(m_path, key, *v, "an integer");
    return v->integer;
}

std::optional<double> GgufFile::number(std::string_view key) const {
    const GgufValue* v = value(key);
    if (!v) return std::nullopt;
    if (v->isFloat()) return v->number;
    if (!v->isInteger()) wrongType(m_path, key, *v, "a number");
    return double(v->integer);
}

std::optional<std::string> GgufFile::string(std::string_view key) const {
    const GgufValue* v = value(key);
    if (!v) return std::nullopt;
    if (v->type != GgufValueType::String) wrongType(m_path, key, *v, "a string");
    return v->text;
}

std::optional<bool> GgufFile::boolean(std::string_view key) const {
    const GgufValue* v = value(key);
    if (!v) return std::nullopt;
    if (v->type != GgufValueType::Bool) wrongType(m_path, key, *v, "a boolean");
    return v->integer != 0;
}

int GgufFile::positive(std::string_view key, std::optional<int> fallback) const {
    const std::string where = "'" + m_path.string() + "': metadata '" + std::string(key) + "'";
    const GgufValue* v = value(key);
    if (!v && fallback) return *fallback;
    if (!v) throw Error(where + " is missing");
    if (v->type == GgufValueType::Array) throw Error(where + " differs per layer, which is not supported");
    const int64_t n = integer(key).value_or(0);
    if (n <= 0 || n > (int64_t{1} << 30))
        throw Error(where + " must be a positive integer, found " + v->describe());
    return static_cast<int>(n);
}

int GgufFile::layerCount(std::string_view key) const {
    const int n = positive(key);
    if (n > kMaxModelLayers)
        throw Error("'" + m_path.string() + "': metadata '" + std::string(key) + "' is " + std::to_string(n) +
                    ", more than " + std::to_string(kMaxModelLayers) + " layers (no model has that many)");
    return n;
}

const GgufTensor* GgufFile::find(std::string_view name) const {
    const auto it = m_index.find(name);
    return it == m_index.end() ? nullptr : &m_tensors[it->second];
}

const unsigned char* GgufFile::data(const GgufTensor& tensor) const {
    return m_file->bytes() + tensor.offset;
}

void GgufFile::dequantizeRows(const GgufTensor& t, int64_t row, int64_t count, float* out) const {
    const GgmlTypeInfo* info = ggmlTypeInfo(t.type);
    if (!info->dequantizes)
        throw Error("'" + m_path.string() + "': tensor '" + t.name + "' is " + std::string(info->name) +
                    ", a type this build does not convert to float");
    if (row < 0 || count < 0 || row > t.rows() - count)
        throw Error("'" + m_path.string() + "': rows " + std::to_string(row) + "+" + std::to_string(count) +
                    " are outside tensor '" + t.name + "' of " + std::to_string(t.rows()) + " rows");
    const int64_t cols = t.columns(), rowBytes = ggmlBytes(*info, cols);
    for (int64_t r = 0; r < count; ++r)
        dequantizeGgmlRow(t.type, data(t) + (row + r) * rowBytes, out + r * cols, cols);
}

TensorFile GgufFile::toTensorFile(const std::function<std::string(const std::string&)>& rename) const {
    std::vector<TensorInfo> infos;
    for (const GgufTensor& t : m_tensors) {
        std::string name = rename(t.name);
        if (name.empty()) continue;
        TensorInfo info;
        info.name = std::move(name);
        info.shape = t.shape;
        info.dtype = t.type == GgmlType::F32    ? DType::F32
                     : t.type == GgmlType::F16  ? DType::F16
                     : t.type == GgmlType::BF16 ? DType::BF16
                                                : DType::Ggml;
        info.ggml = t.type;
        info.begin = t.offset;
        infos.push_back(std::move(info));
    }
    TensorFile::Storage all{m_file->bytes(), m_file->size(), m_file};
    return TensorFile(m_path, TensorFile::Format::Gguf, m_file->size(), {all}, std::move(infos));
}

Tensor GgufFile::load(const GgufTensor& t) const {
    Tensor out(t.shape);
    dequantizeRows(t, 0, t.rows(), out.data());
    return out;
}

} // namespace attnlens
