#pragma once
// ImageU8: the one 8-bit image type of the core — decoded files (vision/image_io.h), dataset records
// (io/idx_file.h), generated samples (diffusion) and rendered overlays share it. A plain value type
// with no dependencies, so io/ and vision/ both use it without depending on each other.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnlens {

// An 8-bit image, row-major, channels interleaved (RGB order when channels == 3), no row padding.
struct ImageU8 {
    int width = 0;
    int height = 0;
    int channels = 0; // 1 (grey) or 3 (RGB)
    std::vector<uint8_t> pixels;

    ImageU8() = default;
    ImageU8(int w, int h, int c) : width(w), height(h), channels(c), pixels(static_cast<size_t>(w) * h * c) {}
    bool empty() const { return width <= 0 || height <= 0; }
    uint8_t at(int x, int y, int c = 0) const {
        return pixels[(static_cast<size_t>(y) * width + x) * channels + c];
    }
    uint8_t& at(int x, int y, int c = 0) {
        return pixels[(static_cast<size_t>(y) * width + x) * channels + c];
    }
};

} // namespace attnlens
