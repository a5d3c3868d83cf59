#include "core/io/tensor_file.h"

#include "core/io/json_file.h"
#include "core/io/mapped_file.h"
#include "core/io/safetensors.h"
#include "core/io/torch_checkpoint.h"
#include "core/util/checked_size.h"
#include "core/util/error.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <limits>
#include <set>

namespace attnlens {

namespace {

bool startsWith(const MappedFile& file, std::string_view prefix) {
    return file.size() >= prefix.size() && std::memcmp(file.bytes(), prefix.data(), prefix.size()) == 0;
}

// A pickle starts with PROTO 2…5 (0x80 n). A safetensors file may start with those bytes too (a header length
// of 0x0280 bytes, say), so it counts as a pickle only when its first 8 bytes are no header length that fits.
bool looksLikePickle(const MappedFile& file) {
    const unsigned char* b = file.bytes();
    if (file.size() < 2 || b[0] != 0x80 || b[1] < 2 || b[1] > 5) return false;
    if (file.size() < 8) return true;
    uint64_t headerLength = 0;
    for (int i = 7; i >= 0; --i)
        headerLength = (headerLength << 8) | b[i];
    return headerLength > kMaxSafeTensorsHeaderBytes || headerLength > file.size() - 8;
}

// Checks `info` against its storage and sets info.end. Throws naming the tensor.
void validate(TensorInfo& info, const std::vector<TensorFile::Storage>& storages, const std::string& where) {
    const std::string what = where + ": tensor '" + info.name + "'";
    if (info.storage >= storages.size()) throw Error(what + ": refers to a storage the file does not have");
    const uint64_t storageSize = storages[info.storage].size;
    uint64_t numel = 1;
    for (const int64_t d : info.shape) {
        if (d < 0) throw Error(what + ": negative dimension in shape " + shapeToString(info.shape));
        if (!mulSize(numel, static_cast<uint64_t>(d), numel) ||
            numel > uint64_t(std::numeric_limits<int64_t>::max()))
            throw Error(what + ": shape " + shapeToString(info.shape) + " is too large");
    }
    if (info.begin > storageSize)
        throw Error(what + ": starts at byte " + std::to_string(info.begin) + ", past its storage of " +
                    std::to_string(storageSize) + " bytes");
    if (info.dtype == DType::Ggml) {
        const GgmlTypeInfo* type = ggmlTypeInfo(info.ggml);
        const int64_t bytes = type && !info.shape.empty() && info.shape.back() % type->blockSize == 0
                                  ? ggmlBytes(*type, static_cast<int64_t>(numel))
                                  : -1;
        if (bytes < 0 || !info.strides.empty() || !addSize(info.begin, uint64_t(bytes), info.end) ||
            info.end > storageSize)
            throw Error(what + ": GGML blocks of shape " + shapeToString(info.shape) +
                        " do not fit its storage");
        return;
    }
    const auto elemSize = static_cast<uint64_t>(dtypeSize(info.dtype));
    if (elemSize == 0) return; // listed, never loaded
    uint64_t span = 0;         // elements from the first to one past the last
    if (numel == 0) {
        span = 0;
    } else if (info.strides.empty()) {
        span = numel;
    } else {
        if (info.strides.size() != info.shape.size())
            throw Error(what + ": " + std::to_string(info.strides.size()) + " strides for a shape of " +
                        std::to_string(info.shape.size()) + " dimensions");
        span = 1;
        for (size_t i = 0; i < info.shape.size(); ++i) {
            if (info.strides[i] < 0)
                throw Error(what + ": negative stride " + std::to_string(info.strides[i]));
            uint64_t reach = 0;
            if (!mulSize(static_cast<uint64_t>(info.shape[i] - 1), static_cast<uint64_t>(info.strides[i]),
                         reach) ||
                !addSize(span, reach, span))
                throw Error(what + ": strides reach past any file");
        }
    }
    uint64_t bytes = 0;
    if (!mulSize(span, elemSize, bytes) || !addSize(info.begin, bytes, info.end) || info.end > storageSize)
        throw Error(what + ": shape " + shapeToString(info.shape) + " of " +
                    std::string(dtypeName(info.dtype)) + " from byte " + std::to_string(info.begin) +
                    " runs past its storage of " + std::to_string(storageSize) + " bytes (truncated file?)");
}

// Calls f(i, offset) for element i (row-major) at `offset` elements from the tensor's first one: the
// multi-index walked in row-major order, carrying the offset along (strided views as well as contiguous).
template <class F> void forEachOffset(const TensorInfo& info, F&& f) {
    const int64_t n = shapeNumel(info.shape);
    if (info.contiguous()) {
        for (int64_t i = 0; i < n; ++i)
            f(i, i);
        return;
    }
    const size_t dims = info.shape.size();
    std::vector<int64_t> index(dims, 0);
    int64_t offset = 0;
    for (int64_t i = 0; i < n; ++i) {
        f(i, offset);
        for (size_t d = dims; d-- > 0;) {
            if (++index[d] < info.shape[d]) {
                offset += info.strides[d];
                break;
            }
            offset -= (info.shape[d] - 1) * info.strides[d];
            index[d] = 0;
        }
    }
}

float readElement(const unsigned char* p, DType dtype) {
    switch (dtype) {
    case DType::F32: {
        float v;
        std::memcpy(&v, p, 4);
        return v;
    }
    case DType::F16:
    case DType::BF16: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return dtype == DType::F16 ? halfToFloat(v) : bfloat16ToFloat(v);
    }
    default:
        return 0.0f; // not reached: load() admits float types only
    }
}

} // namespace

bool TensorInfo::contiguous() const {
    if (strides.empty()) return true;
    int64_t expected = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        if (shape[i] != 1 && strides[i] != expected) return false;
        expected *= shape[i];
    }
    return true;
}

TensorFile TensorFile::open(const std::filesystem::path& path) {
    if (const std::string name = path.filename().string();
        name.size() > 11 && name.compare(name.size() - 11, 11, ".index.json") == 0)
        return openSharded(path);
    auto mapping = MappedFile::map(path);
    if (startsWith(*mapping, "PK\x03\x04") || startsWith(*mapping, "PK\x05\x06"))
        return readTorchZip(path, std::move(mapping));
    if (looksLikePickle(*mapping)) return readTorchLegacy(path, std::move(mapping));
    if (mapping->size() >= 262 && std::memcmp(mapping->bytes() + 257, "ustar", 5) == 0)
        throw Error(quoted(path) +
                    ": a tar-format PyTorch checkpoint (PyTorch before 0.4) is not read; load it with "
                    "torch.load and save it again with torch.save");
    return readSafeTensors(path, std::move(mapping));
}

TensorFile TensorFile::openSharded(const std::filesystem::path& indexPath) {
    const std::string where = quoted(indexPath);
    const JsonConfig index(indexPath);
    if (!index.has("weight_map") || !index.json()["weight_map"].is_object())
        throw Error(where + ": not a sharded checkpoint's index (no weight_map object)");
    std::map<std::string, std::set<std::string>> byShard; // shard file -> the tensors the index puts there
    for (const auto& [name, shard] : index.json()["weight_map"].items()) {
        if (!shard.is_string()) throw Error(where + ": weight_map['" + name + "'] is not a file name");
        const std::string file = shard.get<std::string>();
        if (file.empty() || file.find('/') != std::string::npos || file == "." || file == ".." ||
            (file.size() >= 11 && file.compare(file.size() - 11, 11, ".index.json") == 0))
            throw Error(where + ": weight_map['" + name + "'] names '" + file +
                        "', not a file beside the index");
        byShard[file].insert(name);
    }
    if (byShard.empty()) throw Error(where + ": the index names no tensors");
    std::vector<Storage> storages;
    std::vector<TensorInfo> tensors;
    uint64_t bytes = 0;
    Format format = Format::SafeTensors;
    for (const auto& [file, names] : byShard) {
        const auto path = indexPath.parent_path() / file;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            throw Error(where + ": shard '" + file + "' is missing");
        TensorFile shard = open(path);
        format = shard.m_format;
        bytes += shard.m_fileSize;
        for (const std::string& name : names)
            if (!shard.contains(name))
                throw Error(where + ": the index puts '" + name + "' in '" + file +
                            "', which does not hold it");
        const size_t first = storages.size();
        for (Storage& s : shard.m_storages)
            storages.push_back(std::move(s));
        for (TensorInfo& t : shard.m_tensors)
            if (names.count(t.name)) { // a shard's extra tensors are not the checkpoint's
                t.storage += first;
                tensors.push_back(std::move(t));
            }
    }
    return TensorFile(indexPath, format, bytes, std::move(storages), std::move(tensors));
}

TensorFile::TensorFile(std::filesystem::path path, Format format, uint64_t fileSize,
                       std::vector<Storage> storages, std::vector<TensorInfo> tensors,
                       std::map<std::string, std::string> metadata)
    : m_path(std::move(path)), m_format(format), m_fileSize(fileSize), m_storages(std::move(storages)),
      m_tensors(std::move(tensors)), m_metadata(std::move(metadata)) {
    const std::string where = quoted(m_path);
    for (auto& info : m_tensors)
        validate(info, m_storages, where);
    for (size_t i = 0; i < m_tensors.size(); ++i)
        if (!m_index.emplace(m_tensors[i].name, i).second)
            throw Error(where + ": tensor '" + m_tensors[i].name + "' appears twice");
}

std::string_view TensorFile::formatName(Format format) {
    switch (format) {
    case Format::SafeTensors:
        return "safetensors";
    case Format::TorchZip:
        return "PyTorch zip checkpoint";
    case Format::TorchLegacy:
        return "PyTorch legacy checkpoint";
    case Format::Gguf:
        return "GGUF";
    }
    return "unknown";
}

const TensorInfo* TensorFile::find(std::string_view name) const {
    const auto it = m_index.find(name);
    return it == m_index.end() ? nullptr : &m_tensors[it->second];
}

Tensor TensorFile::load(std::string_view name) const {
    const TensorInfo* info = find(name);
    if (!info) throw Error(quoted(m_path) + ": tensor '" + std::string(name) + "' not found");
    return load(*info);
}

Tensor TensorFile::load(const TensorInfo& info) const {
    if (!isFloatWeightType(info.dtype))
        throw Error(quoted(m_path) + ": tensor '" + info.name + "' has dtype " +
                    std::string(dtypeName(info.dtype)) + "; only F32, F16 and BF16 can be loaded");
    const Storage& storage = m_storages.at(info.storage);
    const unsigned char* src = storage.bytes + info.begin;
    const int64_t n = shapeNumel(info.shape);
    if (info.dtype == DType::F32 && info.contiguous() && n > 0 &&
        reinterpret_cast<uintptr_t>(src) % alignof(float) == 0)
        return Tensor::view(info.shape, const_cast<float*>(reinterpret_cast<const float*>(src)),
                            storage.owner);
    Tensor t(info.shape);
    if (n == 0) return t;
    float* dst = t.data();
    if (info.dtype == DType::Ggml) { // rows of whole blocks, one after the other
        if (!ggmlTypeInfo(info.ggml)->dequantizes)
            throw Error(quoted(m_path) + ": tensor '" + info.name + "' is " +
                        std::string(ggmlTypeInfo(info.ggml)->name) + ", a type this build does not decode");
        const int64_t cols = info.shape.back(), rowBytes = ggmlBytes(*ggmlTypeInfo(info.ggml), cols);
        for (int64_t r = 0; r < n / cols; ++r)
            dequantizeGgmlRow(info.ggml, src + r * rowBytes, dst + r * cols, cols);
        return t;
    }
    const int64_t size = dtypeSize(info.dtype);
    forEachOffset(info,
                  [&](int64_t i, int64_t offset) { dst[i] = readElement(src + offset * size, info.dtype); });
    return t;
}

void TensorFile::releasePages(const void* data, size_t bytes) const {
    const auto begin = reinterpret_cast<uintptr_t>(data), end = begin + bytes;
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    for (const Storage& s : m_storages) {
        const auto sb = reinterpret_cast<uintptr_t>(s.bytes);
        if (begin < sb || end > sb + s.size) continue;
        const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
        if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
        return;
    }
}

void TensorFile::releasePages() const {
    for (const Storage& s : m_storages)
        releasePages(s.bytes, s.size);
}

HalfMatrix TensorFile::loadHalf(const TensorInfo& info) const {
    if ((info.dtype != DType::F16 && info.dtype != DType::BF16 && info.dtype != DType::Ggml) ||
        info.shape.empty())
        throw Error(quoted(m_path) + ": tensor '" + info.name + "' is no F16 / BF16 / GGML matrix");
    if (info.dtype == DType::Ggml) {
        const int64_t cols = info.shape.back(), rows = cols ? shapeNumel(info.shape) / cols : 0;
        const Storage& storage = m_storages.at(info.storage);
        return {info.ggml, rows, cols, storage.bytes + info.begin, storage.owner};
    }
    const auto format = info.dtype == DType::BF16 ? HalfMatrix::Format::BF16 : HalfMatrix::Format::F16;
    const int64_t n = shapeNumel(info.shape), cols = info.shape.back(), rows = cols ? n / cols : 0;
    const Storage& storage = m_storages.at(info.storage);
    const unsigned char* src = storage.bytes + info.begin;
    if (info.contiguous() && n > 0 && reinterpret_cast<uintptr_t>(src) % alignof(uint16_t) == 0)
        return {format, rows, cols, reinterpret_cast<const uint16_t*>(src), storage.owner};
    auto copy = std::make_shared<std::vector<uint16_t>>(static_cast<size_t>(std::max<int64_t>(n, 1)));
    uint16_t* dst = copy->data();
    forEachOffset(info, [&](int64_t i, int64_t offset) { std::memcpy(dst + i, src + offset * 2, 2); });
    return {format, rows, cols, dst, std::shared_ptr<const void>(copy, dst)};
}

} // namespace attnlens
