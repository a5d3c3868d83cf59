#include "core/vision/image_io.h"

#include "core/util/error.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>

namespace attnlens {

namespace {

uint32_t be16(const uint8_t* p) {
    return (uint32_t(p[0]) << 8) | p[1];
}
uint32_t be32(const uint8_t* p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}
uint32_t le16(const uint8_t* p) {
    return (uint32_t(p[1]) << 8) | p[0];
}
uint32_t le32(const uint8_t* p) {
    return (uint32_t(p[3]) << 24) | (uint32_t(p[2]) << 16) | (uint32_t(p[1]) << 8) | p[0];
}

Error headerError(const std::string& name, const std::string& what) {
    return Error("'" + name + "': " + what);
}

ImageHeader pngHeader(std::span<const uint8_t> b, const std::string& name, bool checkChunks) {
    if (b.size() < 24 || std::memcmp(b.data() + 12, "IHDR", 4) != 0)
        throw headerError(name, "truncated or malformed PNG (no IHDR chunk)");
    if (checkChunks) {
        // Walk the chunk list to IEND: a truncated file is reported here, in our words, instead of by
        // libpng (which prints its own message to stderr before OpenCV gives up).
        size_t pos = 8;
        bool end = false;
        while (!end) {
            if (pos + 12 > b.size())
                throw headerError(name, "truncated PNG (the file ends before the IEND chunk)");
            const uint64_t length = be32(b.data() + pos);
            end = std::memcmp(b.data() + pos + 4, "IEND", 4) == 0;
            if (pos + 12 + length > b.size())
                throw headerError(name, "truncated PNG (the file ends inside a chunk)");
            pos += 12 + length;
        }
    }
    return {ImageFormat::Png, static_cast<int>(std::min<uint32_t>(be32(b.data() + 16), INT32_MAX)),
            static_cast<int>(std::min<uint32_t>(be32(b.data() + 20), INT32_MAX))};
}

// Walks the JPEG markers up to the first SOFn; also checks that an EOI marker follows the scan data,
// because libjpeg silently fills a truncated file with grey instead of failing.
ImageHeader jpegHeader(std::span<const uint8_t> b, const std::string& name, bool checkEoi) {
    size_t pos = 2;
    ImageHeader header{ImageFormat::Jpeg, 0, 0};
    bool haveSof = false;
    while (true) {
        while (pos < b.size() && b[pos] != 0xFF)
            ++pos; // tolerate garbage between segments
        while (pos < b.size() && b[pos] == 0xFF)
            ++pos; // fill bytes
        if (pos >= b.size()) throw headerError(name, "truncated JPEG (no frame header or scan)");
        const uint8_t marker = b[pos++];
        if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
        if (marker == 0xD9) throw headerError(name, "malformed JPEG (end of image before any scan)");
        if (pos + 2 > b.size()) throw headerError(name, "truncated JPEG segment");
        const size_t length = be16(b.data() + pos);
        if (length < 2 || pos + length > b.size()) throw headerError(name, "truncated JPEG segment");
        const bool isSof =
            marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (isSof && !haveSof) {
            if (length < 8) throw headerError(name, "malformed JPEG frame header");
            header.height = static_cast<int>(be16(b.data() + pos + 3));
            header.width = static_cast<int>(be16(b.data() + pos + 5));
            haveSof = true;
        }
        if (marker == 0xDA) {
            if (!haveSof) throw headerError(name, "malformed JPEG (scan before frame header)");
            if (checkEoi) {
                // Entropy-coded data stuffs 0xFF as FF 00, so FF D9 after the first scan is the EOI marker.
                bool eoi = false;
                for (size_t i = pos + length; i + 1 < b.size(); ++i)
                    if (b[i] == 0xFF && b[i + 1] == 0xD9) {
                        eoi = true;
                        break;
                    }
                if (!eoi)
                    throw headerError(name,
                                      "truncated JPEG (the image data ends before the end-of-image marker)");
            }
            return header;
        }
        pos += length;
    }
}

ImageHeader bmpHeader(std::span<const uint8_t> b, const std::string& name) {
    if (b.size() < 26) throw headerError(name, "truncated BMP header");
    const uint32_t dibSize = le32(b.data() + 14);
    if (dibSize == 12)
        return {ImageFormat::Bmp, static_cast<int>(le16(b.data() + 18)),
                static_cast<int>(le16(b.data() + 20))};
    const auto w = static_cast<int32_t>(le32(b.data() + 18));
    const auto h = static_cast<int32_t>(le32(b.data() + 22)); // negative: stored top-down
    if (w < 0 || h == INT32_MIN) throw headerError(name, "malformed BMP header (negative width)");
    return {ImageFormat::Bmp, w, h < 0 ? -h : h};
}

ImageHeader tiffHeader(std::span<const uint8_t> b, const std::string& name) {
    const bool le = b[0] == 'I';
    auto u16 = [&](size_t at) { return le ? le16(b.data() + at) : be16(b.data() + at); };
    auto u32 = [&](size_t at) { return le ? le32(b.data() + at) : be32(b.data() + at); };
    if (b.size() < 8) throw headerError(name, "truncated TIFF header");
    if (u16(2) != 42) throw headerError(name, "unsupported TIFF variant (BigTIFF or malformed header)");
    const size_t ifd = u32(4);
    if (ifd + 2 > b.size()) throw headerError(name, "truncated TIFF (first directory outside the file)");
    const size_t count = u16(ifd);
    if (ifd + 2 + count * 12 > b.size()) throw headerError(name, "truncated TIFF directory");
    ImageHeader header{ImageFormat::Tiff, -1, -1};
    for (size_t i = 0; i < count; ++i) {
        const size_t e = ifd + 2 + i * 12;
        const uint32_t tag = u16(e);
        const uint32_t type = u16(e + 2);
        if (tag != 256 && tag != 257) continue;
        const uint32_t value = type == 3 ? u16(e + 8) : type == 4 ? u32(e + 8) : 0;
        if (type != 3 && type != 4)
            throw headerError(name, "malformed TIFF (image size tag of unexpected type)");
        int& size = tag == 256 ? header.width : header.height;
        // libtiff keeps the first of repeated tags; reading the last, a file could pass the size check here
        // with one size and be decoded with another (found by fuzz_image: width 262 155 given first, then 1).
        if (size >= 0) throw headerError(name, "malformed TIFF (image width or length given twice)");
        size = static_cast<int>(std::min<uint32_t>(value, INT32_MAX));
    }
    if (header.width < 0 || header.height < 0)
        throw headerError(name, "malformed TIFF (no image width/length tag)");
    return header;
}

ImageHeader webpHeader(std::span<const uint8_t> b, const std::string& name) {
    if (b.size() < 30) throw headerError(name, "truncated WebP header");
    const uint8_t* p = b.data();
    if (std::memcmp(p + 12, "VP8 ", 4) == 0) {
        if (p[23] != 0x9D || p[24] != 0x01 || p[25] != 0x2A)
            throw headerError(name, "malformed WebP (VP8 start code)");
        return {ImageFormat::WebP, static_cast<int>(le16(p + 26) & 0x3FFF),
                static_cast<int>(le16(p + 28) & 0x3FFF)};
    }
    if (std::memcmp(p + 12, "VP8L", 4) == 0) {
        if (p[20] != 0x2F) throw headerError(name, "malformed WebP (VP8L signature)");
        const uint32_t bits = le32(p + 21);
        return {ImageFormat::WebP, static_cast<int>((bits & 0x3FFF) + 1),
                static_cast<int>(((bits >> 14) & 0x3FFF) + 1)};
    }
    if (std::memcmp(p + 12, "VP8X", 4) == 0) {
        const uint32_t w = uint32_t(p[24]) | (uint32_t(p[25]) << 8) | (uint32_t(p[26]) << 16);
        const uint32_t h = uint32_t(p[27]) | (uint32_t(p[28]) << 8) | (uint32_t(p[29]) << 16);
        return {ImageFormat::WebP, static_cast<int>(w + 1), static_cast<int>(h + 1)};
    }
    throw headerError(name, "malformed WebP (unknown first chunk)");
}

ImageHeader parseHeader(std::span<const uint8_t> b, const std::string& name, bool checkIntegrity) {
    static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (b.empty()) throw headerError(name, "empty file");
    if (b.size() >= 8 && std::memcmp(b.data(), kPng, 8) == 0) return pngHeader(b, name, checkIntegrity);
    if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF)
        return jpegHeader(b, name, checkIntegrity);
    if (b.size() >= 2 && b[0] == 'B' && b[1] == 'M') return bmpHeader(b, name);
    if (b.size() >= 4 && ((b[0] == 'I' && b[1] == 'I' && b[2] == 42 && b[3] == 0) ||
                          (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && (b[3] == 42 || b[3] == 43))))
        return tiffHeader(b, name);
    if (b.size() >= 12 && std::memcmp(b.data(), "RIFF", 4) == 0 && std::memcmp(b.data() + 8, "WEBP", 4) == 0)
        return webpHeader(b, name);
    throw headerError(name, "not a supported image (expected PNG, JPEG, BMP, TIFF or WebP)");
}

} // namespace

ImageHeader readImageHeader(std::span<const uint8_t> bytes, const std::string& name) {
    return parseHeader(bytes, name, false);
}

ImageU8 decodeImage(std::span<const uint8_t> bytes, const std::string& name, const LoadOptions& options) {
    const ImageHeader header = parseHeader(bytes, name, true);
    if (header.width <= 0 || header.height <= 0)
        throw Error("'" + name + "': image has no pixels (" + std::to_string(header.width) + "×" +
                    std::to_string(header.height) + ")");
    const int64_t pixels = int64_t(header.width) * header.height;
    if (pixels > options.maxPixels)
        throw Error("'" + name + "': image is too large (" + std::to_string(header.width) + "×" +
                    std::to_string(header.height) + " = " + std::to_string(pixels / 1'000'000) +
                    " megapixels; the limit is " + std::to_string(options.maxPixels / 1'000'000) + ")");

    // OpenCV picks its decoder by signature, not by our sniffing, and checks DICOM ("DICM" at byte 128)
    // before TIFF and after a WebP check stricter than ours: such a file reached GDCM, which allocated what
    // a length field claimed (2.4 GB; found by tests/fuzz/fuzz_image). We never decode DICOM.
    if ((header.format == ImageFormat::Tiff || header.format == ImageFormat::WebP) && bytes.size() >= 132 &&
        std::memcmp(bytes.data() + 128, "DICM", 4) == 0)
        throw Error("'" + name +
                    "': cannot decode image (it also carries a DICOM signature; DICOM is not supported)");

    cv::Mat decoded;
    try {
        // ANYDEPTH keeps 16-bit samples (we reduce them ourselves); ANYCOLOR keeps grey as grey and
        // turns colour (with or without alpha) into 3 channels; EXIF orientation is applied because the
        // flags are not IMREAD_UNCHANGED.
        const cv::Mat encoded(1, static_cast<int>(bytes.size()), CV_8U, const_cast<uint8_t*>(bytes.data()));
        decoded = cv::imdecode(encoded, cv::IMREAD_ANYDEPTH | cv::IMREAD_ANYCOLOR);
    } catch (const cv::Exception& e) {
        throw Error("'" + name + "': cannot decode image (" + e.err + ")");
    }
    if (decoded.empty()) throw Error("'" + name + "': cannot decode image (truncated or corrupt file)");
    if (decoded.depth() != CV_8U && decoded.depth() != CV_16U)
        throw Error("'" + name +
                    "': unsupported sample type (only 8- and 16-bit integer images are supported)");
    const int cn = decoded.channels();
    if (cn != 1 && cn != 3 && cn != 4)
        throw Error("'" + name + "': unsupported channel count " + std::to_string(cn));

    ImageU8 image(decoded.cols, decoded.rows, cn == 1 ? 1 : 3);
    const bool wide = decoded.depth() == CV_16U;
    for (int y = 0; y < image.height; ++y) {
        const auto* row8 = decoded.ptr<uint8_t>(y);
        const auto* row16 = decoded.ptr<uint16_t>(y);
        uint8_t* out = &image.pixels[static_cast<size_t>(y) * image.width * image.channels];
        for (int x = 0; x < image.width; ++x) {
            auto sample = [&](int c) -> uint8_t {
                const size_t i = static_cast<size_t>(x) * cn + c;
                return wide ? static_cast<uint8_t>(row16[i] >> 8) : row8[i];
            };
            if (cn == 1) {
                out[x] = sample(0);
            } else { // OpenCV stores BGR(A); alpha is dropped without compositing
                out[x * 3 + 0] = sample(2);
                out[x * 3 + 1] = sample(1);
                out[x * 3 + 2] = sample(0);
            }
        }
    }
    return image;
}

ImageU8 loadImage(const std::filesystem::path& path, const LoadOptions& options) {
    const std::string name = path.string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error("'" + name + "': image file not found");
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw Error("'" + name + "': cannot read image file (" + ec.message() + ")");
    if (static_cast<int64_t>(size) > options.maxFileBytes)
        throw Error("'" + name + "': image file is too large (" + std::to_string(size / (1024 * 1024)) +
                    " MiB)");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("'" + name + "': cannot open image file");
    std::vector<uint8_t> bytes(size);
    if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
        throw Error("'" + name + "': cannot read image file");
    return decodeImage(bytes, name, options);
}

ImageU8 toGrey(const ImageU8& image) {
    if (image.channels == 1) return image;
    if (image.channels != 3)
        throw Error("toGrey: expected a 1- or 3-channel image, got " + std::to_string(image.channels));
    ImageU8 grey(image.width, image.height, 1);
    const size_t n = static_cast<size_t>(image.width) * image.height;
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = &image.pixels[i * 3];
        grey.pixels[i] = static_cast<uint8_t>((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
    }
    return grey;
}

ImageU8 toRgb(const ImageU8& image) {
    if (image.channels == 3) return image;
    if (image.channels != 1)
        throw Error("toRgb: expected a 1- or 3-channel image, got " + std::to_string(image.channels));
    ImageU8 rgb(image.width, image.height, 3);
    const size_t n = static_cast<size_t>(image.width) * image.height;
    for (size_t i = 0; i < n; ++i)
        rgb.pixels[i * 3] = rgb.pixels[i * 3 + 1] = rgb.pixels[i * 3 + 2] = image.pixels[i];
    return rgb;
}

} // namespace attnlens
