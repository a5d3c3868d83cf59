#include "cli_overlay.h"

#include <charconv>

namespace cli {

attnlens::HeadSelection parseHead(const std::string& text, int heads) {
    if (auto fusion = attnlens::parseHeadFusion(text)) return {-1, *fusion};
    int h = -1;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), h);
    if (ec != std::errc() || ptr != text.data() + text.size())
        throw UsageError("--head: expected a head index or mean|max|min, got '" + text + "'");
    if (h < 0 || h >= heads)
        throw UsageError("--head: " + text + " is out of range (the model has " + std::to_string(heads) +
                         " heads, numbered from 0)");
    return {h, attnlens::HeadFusion::Mean};
}

attnlens::OverlayOptions parseOverlayOptions(const Args& args) {
    attnlens::OverlayOptions options;
    if (const auto cmap = args.value("--colormap")) {
        const auto parsed = attnlens::parseColorMap(*cmap);
        if (!parsed) throw UsageError("--colormap: unknown colour map '" + *cmap + "'");
        options.colorMap = *parsed;
    }
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
