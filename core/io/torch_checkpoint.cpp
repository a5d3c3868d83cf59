#include "core/io/torch_checkpoint.h"

#include "core/io/mapped_file.h"
#include "core/io/pickle.h"
#include "core/util/checked_size.h"
#include "core/util/error.h"

#include <minizip/unzip.h>

#include <limits>
#include <map>

namespace attnlens {

namespace {

// Largest data.pkl read into memory: a state dict's pickle is a few bytes per tensor.
constexpr uint64_t kMaxPickleBytes = 256ull * 1024 * 1024;
constexpr uint64_t kMaxZipEntries = 1u << 20;

// The name → tensor pairs of the unpickled object: a dict of tensors, or such a dict under "state_dict" /
// "model".
std::vector<std::pair<std::string, size_t>> stateDictTensors(const pickle::Reader& reader, size_t top,
                                                             const std::string& where) {
    auto collect = [&](size_t dictIndex) {
        std::vector<std::pair<std::string, size_t>> out;
        const pickle::Value& dict = reader.value(dictIndex);
        for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
            const pickle::Value& key = reader.value(dict.items[i]);
            const pickle::Value& value = reader.value(dict.items[i + 1]);
            if (key.kind == pickle::Kind::String && value.kind == pickle::Kind::Tensor)
                out.emplace_back(key.text, static_cast<size_t>(value.integer));
        }
        return out;
    };
    const pickle::Value& root = reader.value(top);
    if (root.kind != pickle::Kind::Dict)
        throw Error(where + ": the checkpoint holds no state dict (its object is not a dict)");
    auto tensors = collect(top);
    if (!tensors.empty()) return tensors;
    for (size_t i = 0; i + 1 < root.items.size(); i += 2) {
        const pickle::Value& key = reader.value(root.items[i]);
        const pickle::Value& value = reader.value(root.items[i + 1]);
        if (key.kind == pickle::Kind::String && (key.text == "state_dict" || key.text == "model") &&
            value.kind == pickle::Kind::Dict)
            return collect(root.items[i + 1]);
    }
    throw Error(where + ": the checkpoint's dict holds no tensors (not a state dict)");
}

// TensorInfos for the state dict's tensors; the reader's storage i is the file's storage fileStorage[i] (one
// per distinct storage, so that tensors tied to one storage point at the same bytes).
std::vector<TensorInfo> tensorInfos(const pickle::Reader& reader, size_t top, const std::string& where,
                                    const std::vector<size_t>& fileStorage) {
    std::vector<TensorInfo> infos;
    for (const auto& [name, index] : stateDictTensors(reader, top, where)) {
        const pickle::TensorRef& ref = reader.tensors()[index];
        const pickle::StorageRef& storage = reader.storages()[ref.storage];
        TensorInfo info;
        info.name = name;
        info.dtype = storage.dtype;
        info.shape = ref.shape;
        info.strides = ref.strides;
        info.storage = fileStorage[ref.storage];
        if (!mulSize(static_cast<uint64_t>(ref.offset), static_cast<uint64_t>(dtypeSize(storage.dtype)),
                     info.begin))
            throw Error(where + ": tensor '" + name + "': storage offset " + std::to_string(ref.offset) +
                        " is too large");
        infos.push_back(std::move(info));
    }
    return infos;
}

// Checks that `storage` (numel elements of its dtype) fits in `available` bytes.
void checkStorageSize(const pickle::StorageRef& storage, uint64_t available, const std::string& where) {
    uint64_t bytes = 0;
    if (!mulSize(static_cast<uint64_t>(storage.numel), static_cast<uint64_t>(dtypeSize(storage.dtype)),
                 bytes) ||
        bytes > available)
        throw Error(where + ": storage '" + storage.key + "' of " + std::to_string(storage.numel) + " " +
                    std::string(dtypeName(storage.dtype)) + " elements needs more than the " +
                    std::to_string(available) + " bytes the file holds for it (truncated file?)");
}

// --- zip ---------------------------------------------------------------------------------------------------

struct ZipEntry {
    uint64_t dataOffset = 0; // where the stored bytes begin in the file
    uint64_t size = 0;       // uncompressed
    bool stored = true;
    unz64_file_pos position{};
};

class ZipReader {
public:
    ZipReader(const std::filesystem::path& path, std::string where) : m_where(std::move(where)) {
        m_zip = unzOpen64(path.c_str());
        if (!m_zip)
            throw Error(m_where +
                        ": not a readable zip archive (a PyTorch checkpoint written by torch.save is one)");
    }
    ~ZipReader() {
        if (m_zip) unzClose(m_zip);
    }
    ZipReader(const ZipReader&) = delete;
    ZipReader& operator=(const ZipReader&) = delete;

    std::map<std::string, ZipEntry> entries(uint64_t fileSize) {
        unz_global_info64 global{};
        if (unzGetGlobalInfo64(m_zip, &global) != UNZ_OK) throw Error(m_where + ": unreadable zip directory");
        if (global.number_entry > kMaxZipEntries)
            throw Error(m_where + ": " + std::to_string(global.number_entry) +
                        " zip entries, more than any checkpoint has");
        std::map<std::string, ZipEntry> out;
        for (int r = unzGoToFirstFile(m_zip); r == UNZ_OK; r = unzGoToNextFile(m_zip)) {
            unz_file_info64 info{};
            char name[1024];
            if (unzGetCurrentFileInfo64(m_zip, &info, name, sizeof name, nullptr, 0, nullptr, 0) != UNZ_OK)
                throw Error(m_where + ": unreadable zip entry");
            if (info.size_filename >= sizeof name) continue; // longer than any torch.save entry name
            ZipEntry entry;
            entry.size = info.uncompressed_size;
            entry.stored = info.compression_method == 0;
            if (unzGetFilePos64(m_zip, &entry.position) != UNZ_OK)
                throw Error(m_where + ": unreadable zip entry");
            if (entry.stored) {
                if (unzOpenCurrentFile(m_zip) != UNZ_OK)
                    throw Error(m_where + ": zip entry '" + name + "' cannot be opened");
                entry.dataOffset = unzGetCurrentFileZStreamPos64(m_zip);
                unzCloseCurrentFile(m_zip);
                if (info.compressed_size != info.uncompressed_size || entry.dataOffset > fileSize ||
                    entry.size > fileSize - entry.dataOffset)
                    throw Error(m_where + ": zip entry '" + std::string(name) +
                                "' runs past the end of the file (truncated?)");
            }
            out[name] = entry;
        }
        return out;
    }

    // The entry's bytes, decompressed, at most `limit`; the CRC is checked.
    std::vector<unsigned char> read(const std::string& name, ZipEntry entry, uint64_t limit) {
        if (entry.size > limit)
            throw Error(m_where + ": zip entry '" + name + "' of " + std::to_string(entry.size) +
                        " bytes is larger than "
                        "any state dict's pickle");
        if (unzGoToFilePos64(m_zip, &entry.position) != UNZ_OK || unzOpenCurrentFile(m_zip) != UNZ_OK)
            throw Error(m_where + ": zip entry '" + name + "' cannot be opened");
        std::vector<unsigned char> bytes(static_cast<size_t>(entry.size));
        const int n =
            bytes.empty() ? 0 : unzReadCurrentFile(m_zip, bytes.data(), static_cast<unsigned>(bytes.size()));
        const int closed = unzCloseCurrentFile(m_zip);
        if (n < 0 || static_cast<uint64_t>(n) != entry.size || closed != UNZ_OK)
            throw Error(m_where + ": zip entry '" + name + "' is damaged (" +
                        (closed == UNZ_CRCERROR ? std::string("CRC mismatch") : "short read") + ")");
        return bytes;
    }

private:
    std::string m_where;
    unzFile m_zip = nullptr;
};

} // namespace

TensorFile readTorchZip(const std::filesystem::path& path, std::shared_ptr<MappedFile> mapping) {
    const std::string where = quoted(path);
    ZipReader zip(path, where);
    const auto entries = zip.entries(mapping->size());
    // <archive>/data.pkl: the archive folder is named after the file torch.save wrote ("archive" since 1.13).
    std::string prefix;
    for (const auto& [name, entry] : entries) {
        const auto slash = name.find('/');
        if (slash != std::string::npos && name.substr(slash) == "/data.pkl") {
            prefix = name.substr(0, slash + 1);
            break;
        }
    }
    if (prefix.empty()) throw Error(where + ": a zip archive without data.pkl (not a PyTorch checkpoint)");
    if (const auto order = entries.find(prefix + "byteorder"); order != entries.end()) {
        const auto text = zip.read(order->first, order->second, 16);
        if (std::string(text.begin(), text.end()) != "little")
            throw Error(where + ": a big-endian checkpoint; only little-endian storages are read");
    }
    const auto pickleBytes = zip.read(prefix + "data.pkl", entries.at(prefix + "data.pkl"), kMaxPickleBytes);
    pickle::Reader reader(pickleBytes.data(), pickleBytes.size(), where + " (data.pkl)");
    const size_t top = reader.run();

    std::vector<TensorFile::Storage> storages;
    std::vector<size_t> fileStorage;
    std::map<std::string, size_t> byKey;
    for (const auto& ref : reader.storages()) {
        if (const auto known = byKey.find(ref.key); known != byKey.end()) {
            checkStorageSize(ref, storages[known->second].size, where);
            fileStorage.push_back(known->second);
            continue;
        }
        const std::string name = prefix + "data/" + ref.key;
        const auto it = entries.find(name);
        if (it == entries.end())
            throw Error(where + ": storage '" + ref.key + "' is missing (no entry " + name + ")");
        if (!it->second.stored)
            throw Error(where + ": storage '" + ref.key +
                        "' is compressed; torch.save stores storages uncompressed "
                        "(re-save the checkpoint with torch.save)");
        checkStorageSize(ref, it->second.size, where);
        byKey[ref.key] = storages.size();
        fileStorage.push_back(storages.size());
        storages.push_back({mapping->bytes() + it->second.dataOffset, it->second.size, mapping});
    }
    auto infos = tensorInfos(reader, top, where, fileStorage);
    return TensorFile(path, TensorFile::Format::TorchZip, mapping->size(), std::move(storages),
                      std::move(infos));
}

namespace {

// The legacy format's three leading pickles: the magic number, the protocol version (1001) and the system
// information (little-endian only).
void readLegacyHeader(pickle::Reader& reader, const std::string& where) {
    // 0x1950a86a20f9469cfc6c, little-endian, as LONG1 writes it.
    static const std::string kMagic("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10);
    const pickle::Value& magic = reader.value(reader.run());
    if (magic.kind != pickle::Kind::BigInt || magic.text != kMagic)
        throw Error(where + ": a Python pickle, but not a PyTorch checkpoint (its magic number is missing)");
    const pickle::Value& protocol = reader.value(reader.run());
    if (protocol.kind != pickle::Kind::Int || protocol.integer != 1001)
        throw Error(
            where + ": PyTorch legacy checkpoint of protocol version " +
            (protocol.kind == pickle::Kind::Int ? std::to_string(protocol.integer) : std::string("?")) +
            ", expected 1001");
    const size_t sysInfoIndex = reader.run();
    const pickle::Value& sysInfo = reader.value(sysInfoIndex);
    if (sysInfo.kind != pickle::Kind::Dict) throw Error(where + ": its system information is not a dict");
    for (size_t i = 0; i + 1 < sysInfo.items.size(); i += 2) {
        const pickle::Value& key = reader.value(sysInfo.items[i]);
        const pickle::Value& value = reader.value(sysInfo.items[i + 1]);
        if (key.kind == pickle::Kind::String && key.text == "little_endian" &&
            !(value.kind == pickle::Kind::Bool && value.integer))
            throw Error(where + ": a big-endian checkpoint; only little-endian storages are read");
    }
}

struct LegacyRoot {
    const unsigned char* bytes = nullptr;
    uint64_t size = 0;
};

// The storages after the pickles, in the order of the key list: an 8-byte element count, then the elements.
std::map<std::string, LegacyRoot> legacyRoots(const pickle::Reader& reader, const pickle::Value& keys,
                                              const MappedFile& mapping, const std::string& where) {
    std::map<std::string, DType> dtypeOf;
    for (const auto& ref : reader.storages())
        dtypeOf.emplace(ref.key, ref.dtype);
    std::map<std::string, LegacyRoot> roots;
    uint64_t pos = reader.position();
    const uint64_t fileSize = mapping.size();
    for (const size_t k : keys.items) {
        const pickle::Value& key = reader.value(k);
        if (key.kind != pickle::Kind::String) throw Error(where + ": a storage key that is not a string");
        const auto dtype = dtypeOf.find(key.text);
        if (dtype == dtypeOf.end())
            throw Error(where + ": storage '" + key.text + "' is listed but no tensor uses it");
        if (fileSize - pos < 8)
            throw Error(where + ": storage '" + key.text + "' is cut off (truncated file?)");
        uint64_t numel = 0;
        for (int b = 7; b >= 0; --b)
            numel = (numel << 8) | mapping.bytes()[pos + static_cast<uint64_t>(b)];
        pos += 8;
        uint64_t bytes = 0;
        if (!mulSize(numel, static_cast<uint64_t>(dtypeSize(dtype->second)), bytes) || bytes > fileSize - pos)
            throw Error(where + ": storage '" + key.text + "' of " + std::to_string(numel) +
                        " elements runs past the end of the file (truncated?)");
        roots[key.text] = {mapping.bytes() + pos, bytes};
        pos += bytes;
    }
    return roots;
}

// One storage per root or view the tensors use (a view shared by several tensors once); fileStorage: the
// index of each pickled storage reference's storage.
std::vector<TensorFile::Storage> legacyStorages(const pickle::Reader& reader,
                                                const std::map<std::string, LegacyRoot>& roots,
                                                const std::shared_ptr<MappedFile>& mapping,
                                                const std::string& where, std::vector<size_t>& fileStorage) {
    std::vector<TensorFile::Storage> storages;
    std::map<std::string, size_t> byKey; // key, or key@offset+size for a view
    for (const auto& ref : reader.storages()) {
        const std::string id =
            ref.view ? ref.key + "@" + std::to_string(ref.viewOffset) + "+" + std::to_string(ref.viewNumel)
                     : ref.key;
        if (const auto known = byKey.find(id); known != byKey.end()) {
            fileStorage.push_back(known->second);
            continue;
        }
        byKey[id] = storages.size();
        fileStorage.push_back(storages.size());
        const auto root = roots.find(ref.key);
        if (root == roots.end())
            throw Error(where + ": storage '" + ref.key + "' is used but not in the file");
        checkStorageSize(ref, root->second.size, where);
        const uint64_t elem = static_cast<uint64_t>(dtypeSize(ref.dtype));
        if (!ref.view) // a view lies inside its root: checked by the reader against numel, numel against the
                       // root
            storages.push_back({root->second.bytes, root->second.size, mapping});
        else
            storages.push_back({root->second.bytes + static_cast<uint64_t>(ref.viewOffset) * elem,
                                static_cast<uint64_t>(ref.viewNumel) * elem, mapping});
    }
    return storages;
}

} // namespace

TensorFile readTorchLegacy(const std::filesystem::path& path, std::shared_ptr<MappedFile> mapping) {
    const std::string where = quoted(path);
    pickle::Reader reader(mapping->bytes(), mapping->size(), where);
    readLegacyHeader(reader, where);
    const size_t top = reader.run();
    (void)stateDictTensors(reader, top, where); // a state dict, before anything is said about its storages
    const size_t keysIndex = reader.run();
    const pickle::Value& keys = reader.value(keysIndex);
    if (keys.kind != pickle::Kind::List) throw Error(where + ": the list of storage keys is missing");
    const auto roots = legacyRoots(reader, keys, *mapping, where);
    std::vector<size_t> fileStorage;
    auto storages = legacyStorages(reader, roots, mapping, where, fileStorage);
    auto infos = tensorInfos(reader, top, where, fileStorage);
    return TensorFile(path, TensorFile::Format::TorchLegacy, mapping->size(), std::move(storages),
                      std::move(infos));
}

} // namespace attnlens
