#include "core/export/npy.h"

#include "core/util/error.h"

#include <bit>
#include <cctype>
#include <cstdio>
#include <fstream>

namespace attnlens {

void writeNpy(const std::filesystem::path& path, const float* data, const Shape& shape) {
    static_assert(std::endian::native == std::endian::little, "the .npy writer assumes a little-endian host");
    std::string dims; // Python tuple syntax: (), (n,), (a, b, ...)
    for (size_t i = 0; i < shape.size(); ++i)
        dims += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) dims += ",";
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    // magic (6) + version (2) + header length (2) + header, padded with spaces and '\n' to 64 bytes.
    const size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header.push_back('\n');
    std::ofstream out(path, std::ios::binary);
    if (!out) throw Error("'" + path.string() + "': cannot create file");
    const char preamble[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
    out.write(preamble, 8);
    const uint16_t len = static_cast<uint16_t>(header.size());
    const char lenBytes[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
    out.write(lenBytes, 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(shapeNumel(shape) * sizeof(float)));
    if (!out) throw Error("'" + path.string() + "': write failed");
}

void writeNpy(const std::filesystem::path& path, const Tensor& tensor) {
    writeNpy(path, tensor.data(), tensor.shape());
}

void writeCsv(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values) {
    std::ofstream out(path);
    if (!out) throw Error("'" + path.string() + "': cannot create file");
    char buf[32];
    for (Eigen::Index r = 0; r < values.rows(); ++r) {
        for (Eigen::Index c = 0; c < values.cols(); ++c) {
            std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(values(r, c)));
            if (c) out << ',';
            out << buf;
        }
        out << '\n';
    }
    if (!out) throw Error("'" + path.string() + "': write failed");
}

namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string out = "\"";
    for (char c : text)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + '"';
}

std::vector<std::string> indexNames(Eigen::Index n) {
    std::vector<std::string> names;
    for (Eigen::Index i = 0; i < n; ++i)
        names.push_back(std::to_string(i));
    return names;
}

} // namespace

void writeLabelledCsv(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values,
                      const std::string& corner, const std::vector<std::string>& rowNames,
                      const std::vector<std::string>& columnNames) {
    if (static_cast<Eigen::Index>(rowNames.size()) != values.rows() ||
        static_cast<Eigen::Index>(columnNames.size()) != values.cols())
        throw Error("'" + path.string() + "': CSV labels do not match the matrix shape");
    std::ofstream out(path);
    if (!out) throw Error("'" + path.string() + "': cannot create file");
    out << csvField(corner);
    for (const std::string& name : columnNames)
        out << ',' << csvField(name);
    out << '\n';
    char buf[32];
    for (Eigen::Index r = 0; r < values.rows(); ++r) {
        out << csvField(rowNames[static_cast<size_t>(r)]);
        for (Eigen::Index c = 0; c < values.cols(); ++c) {
            std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(values(r, c)));
            out << ',' << buf;
        }
        out << '\n';
    }
    if (!out) throw Error("'" + path.string() + "': write failed");
}

void writeMatrix(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values) {
    std::string ext = path.extension().string();
    for (char& c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".csv") {
        writeLabelledCsv(path, values, "row\\col", indexNames(values.rows()), indexNames(values.cols()));
    } else {
        const RowMatrix copy = values; // contiguous row-major
        writeNpy(path, copy.data(), {copy.rows(), copy.cols()});
    }
}

} // namespace attnlens
