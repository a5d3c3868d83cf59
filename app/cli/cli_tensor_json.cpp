#include "cli_tensor_json.h"

#include "core/util/error.h"

#include <charconv>
#include <fstream>

namespace cli {

void appendFloat(std::string& out, float v) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? end : buf);
}

namespace {

void appendLevel(std::string& out, const float*& data, const attnlens::Shape& shape, size_t axis) {
    if (axis == shape.size()) {
        appendFloat(out, *data++);
        return;
    }
    out += '[';
    for (int64_t i = 0; i < shape[axis]; ++i) {
        if (i) out += ',';
        appendLevel(out, data, shape, axis + 1);
    }
    out += ']';
}

} // namespace

void appendNested(std::string& out, const float* data, const attnlens::Shape& shape) {
    appendLevel(out, data, shape, 0);
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw attnlens::Error("'" + path + "': cannot create file");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw attnlens::Error("'" + path + "': write failed");
}

} // namespace cli
