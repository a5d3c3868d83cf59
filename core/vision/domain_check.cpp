#include "core/vision/domain_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlens {

namespace {

double luminance(const ImageU8& im, int x, int y) {
    if (im.channels < 3) return im.at(x, y);
    return 0.299 * im.at(x, y, 0) + 0.587 * im.at(x, y, 1) + 0.114 * im.at(x, y, 2);
}

// Mean of max − min over the channels (0 for grey pictures), sampled on a grid of at most 256 × 256 points.
double colourSpread(const ImageU8& im) {
    if (im.channels < 3) return 0.0;
    const int sx = std::max(1, im.width / 256), sy = std::max(1, im.height / 256);
    double sum = 0;
    long n = 0;
    for (int y = 0; y < im.height; y += sy)
        for (int x = 0; x < im.width; x += sx) {
            const int r = im.at(x, y, 0), g = im.at(x, y, 1), b = im.at(x, y, 2);
            sum += std::max({r, g, b}) - std::min({r, g, b});
            ++n;
        }
    return n ? sum / static_cast<double>(n) : 0.0;
}

// Mean luminance of the outer tenth (at least one pixel) on every side.
double borderLuminance(const ImageU8& im) {
    const int bx = std::max(1, im.width / 10), by = std::max(1, im.height / 10);
    const int sx = std::max(1, im.width / 256), sy = std::max(1, im.height / 256);
    double sum = 0;
    long n = 0;
    for (int y = 0; y < im.height; y += sy)
        for (int x = 0; x < im.width; x += sx) {
            if (x >= bx && x < im.width - bx && y >= by && y < im.height - by) continue;
            sum += luminance(im, x, y);
            ++n;
        }
    return n ? sum / static_cast<double>(n) : 0.0;
}

} // namespace

DomainCheck checkFashionMnistLikeness(const ImageU8& image, float topProbability) {
    DomainCheck c;
    if (image.empty()) return c;
    if (colourSpread(image) > 12.0) c.reasons.push_back("in colour");
    if (borderLuminance(image) > 70.0) c.reasons.push_back("light background");
    const double aspect =
        static_cast<double>(std::max(image.width, image.height)) / std::min(image.width, image.height);
    if (aspect > 1.6) {
        char text[96];
        std::snprintf(text, sizeof text, "%.1f:1, not square", aspect);
        c.reasons.push_back(text);
    }
    if (topProbability < kLowTopProbability) {
        char text[96];
        std::snprintf(text, sizeof text, "unsure (top class %.0f %%)", 100.0 * topProbability);
        c.reasons.push_back(text);
    }
    return c;
}

} // namespace attnlens
