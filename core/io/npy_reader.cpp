#include "core/io/npy_reader.h"

#include "core/util/error.h"

#include <bit>
#include <cctype>
#include <fstream>
#include <string>

namespace attnlens {

namespace {

// The value of 'key' in the header dict, as raw text up to the next top-level ',' or '}'
// (a tuple counts as one value).
std::string headerValue(const std::string& header, const std::string& key, const std::string& file) {
    for (const char quote : {'\'', '"'}) {
        const std::string k = std::string(1, quote) + key + std::string(1, quote);
        const auto pos = header.find(k);
        if (pos == std::string::npos) continue;
        auto i = header.find(':', pos + k.size());
        if (i == std::string::npos) break;
        ++i;
        int depth = 0;
        std::string out;
        for (; i < header.size(); ++i) {
            const char c = header[i];
            if (c == '(') ++depth;
            if (c == ')') --depth;
            if (depth == 0 && (c == ',' || c == '}')) break;
            out.push_back(c);
            if (depth < 0) break;
        }
        const auto b = out.find_first_not_of(" \t"), e = out.find_last_not_of(" \t");
        return b == std::string::npos ? std::string() : out.substr(b, e - b + 1);
    }
    throw Error("'" + file + "': not a .npy file (header has no '" + key + "')");
}

} // namespace

Tensor readNpy(const std::filesystem::path& path, int64_t maxElements) {
    static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");
    const std::string file = path.string();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("'" + file + "': cannot open file");
    char pre[8];
    if (!in.read(pre, 8) || std::string(pre, 6) != "\x93NUMPY")
        throw Error("'" + file + "': not a .npy file (no NUMPY magic)");
    const int major = static_cast<unsigned char>(pre[6]);
    uint32_t headerLen = 0;
    unsigned char len[4] = {0, 0, 0, 0};
    if (major == 1) {
        if (!in.read(reinterpret_cast<char*>(len), 2)) throw Error("'" + file + "': truncated .npy header");
        headerLen = len[0] | (len[1] << 8);
    } else if (major == 2 || major == 3) {
        if (!in.read(reinterpret_cast<char*>(len), 4)) throw Error("'" + file + "': truncated .npy header");
        headerLen = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<uint32_t>(len[3]) << 24);
    } else {
        throw Error("'" + file + "': unsupported .npy format version " + std::to_string(major));
    }
    if (headerLen > (1u << 20))
        throw Error("'" + file + "': .npy header of " + std::to_string(headerLen) + " bytes is implausible");
    std::string header(headerLen, '\0');
    if (!in.read(header.data(), headerLen)) throw Error("'" + file + "': truncated .npy header");

    const std::string descr = headerValue(header, "descr", file);
    if (descr != "'<f4'" && descr != "\"<f4\"")
        throw Error("'" + file + "': dtype " + descr +
                    ", expected float32 ('<f4'; np.save(path, x.astype(np.float32)))");
    if (headerValue(header, "fortran_order", file) != "False")
        throw Error("'" + file + "': Fortran-ordered array; save it in C order (np.ascontiguousarray)");
    const std::string shapeText = headerValue(header, "shape", file);
    if (shapeText.size() < 2 || shapeText.front() != '(' || shapeText.back() != ')')
        throw Error("'" + file + "': malformed shape " + shapeText);
    Shape shape;
    std::string num;
    int64_t total = 1;
    for (size_t i = 1; i < shapeText.size(); ++i) {
        const char c = shapeText[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            num.push_back(c);
            if (num.size() > 12) throw Error("'" + file + "': shape " + shapeText + " is implausibly large");
        } else if (c == ',' || c == ')') {
            if (!num.empty()) {
                shape.push_back(std::stoll(num));
                total *= shape.back();
                if (total > maxElements)
                    throw Error("'" + file + "': shape " + shapeText + " holds more than " +
                                std::to_string(maxElements) + " values");
                num.clear();
            }
        } else if (c != ' ' && c != 'L') {
            throw Error("'" + file + "': malformed shape " + shapeText);
        }
    }
    Tensor t(shape);
    if (!in.read(reinterpret_cast<char*>(t.data()),
                 static_cast<std::streamsize>(sizeof(float) * static_cast<size_t>(t.numel()))))
        throw Error("'" + file + "': file ends before the " + std::to_string(t.numel()) +
                    " values of shape " + shapeToString(shape));
    return t;
}

} // namespace attnlens
