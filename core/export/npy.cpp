#include "core/export/npy.h"

#include <cctype>

#include "core/util/error.h"

#include <bit>
#include <cstdio>
#include <fstream>

namespace attnlens {

void writeNpy(const std::filesystem::path& path, const float* data, const Shape& shape) {
    static_assert(std::endian::native == std::endian::little, "the .npy writer assumes a little-endian host");
    std::string dims; // Python tuple syntax: (), (n,), (a, b, ...)
    for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
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
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(shapeNumel(shape) * sizeof(float)));
    if (!out) throw Error("'" + path.string() + "': write failed");
}

void writeNpy(const std::filesystem::path& path, const Tensor& tensor) { writeNpy(path, tensor.data(), tensor.shape()); }

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

void writeMatrix(const std::filesystem::path& path, const Eigen::Ref<const RowMatrix>& values) {
    std::string ext = path.extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".csv") {
        writeCsv(path, values);
    } else {
        const RowMatrix copy = values; // contiguous row-major
        writeNpy(path, copy.data(), {copy.rows(), copy.cols()});
    }
}

} // namespace attnlens
