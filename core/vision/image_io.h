#pragma once
// Image loading for the vision engine: PNG, JPEG, BMP, TIFF and WebP through OpenCV's imgcodecs,
// with bounded memory and errors that name the file.
//
// Contract of loadImage():
//   * The header is parsed by us BEFORE anything is decoded; an image whose width × height exceeds
//     LoadOptions::maxPixels (default 100 megapixels) is rejected without allocating its pixels.
//     The file itself is read into memory only if it is below LoadOptions::maxFileBytes.
//   * The result is 8-bit RGB (3 channels, R first) or 8-bit grey (1 channel), as the file stores it.
//     EXIF orientation is applied (the picture is shown upright, as PIL's exif_transpose does).
//   * Alpha is dropped without compositing (like PIL's convert("RGB")).
//   * 16-bit samples keep their high byte (v >> 8), as PIL does for 16-bit RGB PNGs.
//   * Truncated or unreadable files, 0×0 images and unsupported formats throw attnlens::Error.
//
// Thread-safety: free functions without shared state; safe from any thread.

#include "core/tensor/image.h"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace attnlens {

enum class ImageFormat { Png, Jpeg, Bmp, Tiff, WebP, Unknown };

struct ImageHeader {
    ImageFormat format = ImageFormat::Unknown;
    int width = 0; // as stored (before EXIF orientation)
    int height = 0;
};

struct LoadOptions {
    int64_t maxPixels = 100'000'000;            // width × height limit, checked on the header
    int64_t maxFileBytes = 512ll * 1024 * 1024; // file size limit
};

// Parses only the header of an encoded image (PNG IHDR, JPEG SOFn, BMP info header, TIFF IFD0,
// WebP VP8/VP8L/VP8X). `name` is used in error messages. Throws for unknown or malformed headers.
ImageHeader readImageHeader(std::span<const uint8_t> bytes, const std::string& name);

// Decodes an encoded image held in memory (see the contract above).
ImageU8 decodeImage(std::span<const uint8_t> bytes, const std::string& name, const LoadOptions& options = {});
// Reads and decodes a file (see the contract above).
ImageU8 loadImage(const std::filesystem::path& path, const LoadOptions& options = {});

// RGB → grey exactly as PIL's convert("L"): L = (R·19595 + G·38470 + B·7471 + 0x8000) >> 16,
// i.e. ITU-R 601-2 luma 299/587/114 in 16-bit fixed point. A grey image is returned unchanged.
ImageU8 toGrey(const ImageU8& image);
// Grey → RGB by replicating the channel; an RGB image is returned unchanged.
ImageU8 toRgb(const ImageU8& image);

} // namespace attnlens
