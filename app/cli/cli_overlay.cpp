#include "cli_overlay.h"

#include "core/util/error.h"

#include <charconv>

namespace cli {

attnlens::HeadSelection parseHead(const std::string& text, int heads) {
    try {
        return attnlens::parseHeadSelection(text, heads);
    } catch (const attnlens::Error& e) {
        throw UsageError(std::string("--") + e.what());
    }
}

attnlens::ColorMap parseColorMapOption(const Args& args, attnlens::ColorMap fallback) {
    const auto cmap = args.value("--colormap");
    if (!cmap) return fallback;
    const auto parsed = attnlens::parseColorMap(*cmap);
    if (!parsed) throw UsageError("--colormap: unknown colour map '" + *cmap + "'");
    return *parsed;
}

attnlens::OverlayOptions parseOverlayOptions(const Args& args) {
    attnlens::OverlayOptions options;
    options.colorMap = parseColorMapOption(args, options.colorMap);
    if (const auto op = args.value("--opacity")) {
        float v = -1;
        const auto [ptr, ec] = std::from_chars(op->data(), op->data() + op->size(), v);
        if (ec != std::errc() || ptr != op->data() + op->size() || !(v >= 0.0f && v <= 1.0f))
            throw UsageError("--opacity: expected a number in [0, 1], got '" + *op + "'");
        options.opacity = v;
    }
    return options;
}

} // namespace cli
