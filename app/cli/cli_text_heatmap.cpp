#include "cli_text_heatmap.h"

#include "cli_heatmap.h"
#include "cli_overlay.h"
#include "core/export/npy.h"

#include <algorithm>
#include <cctype>

namespace cli {

std::optional<TextHeatmapRequest> parseTextHeatmap(const Args& args, const attnlens::TextFolder& folder) {
    const auto path = args.value("--heatmap");
    const auto npy = args.value("--npy");
    if (!path && !npy) {
        for (const char* flag : {"--layer", "--head", "--scale", "--ignore-first", "--colormap", "--cell"})
            if (args.has(flag))
                throw UsageError(std::string(flag) +
                                 " only applies with --heatmap OUT.png|svg or --npy OUT.npy");
        return std::nullopt;
    }
    if (!path)
        for (const char* flag : {"--scale", "--ignore-first", "--colormap", "--cell"})
            if (args.has(flag))
                throw UsageError(std::string(flag) + " only applies with --heatmap OUT.png|svg");
    if (path) checkHeatmapPath("--heatmap", *path);
    if (npy && (npy->size() < 4 || !std::equal(npy->end() - 4, npy->end(), ".npy", [](char a, char b) {
                    return std::tolower(static_cast<unsigned char>(a)) == b;
                })))
        throw UsageError("--npy: expected a .npy path, got '" + *npy + "'");
    TextHeatmapRequest r;
    r.path = path.value_or("");
    r.npy = npy.value_or("");
    r.layer = args.intValue("--layer", folder.layers() - 1, 0, folder.layers() - 1);
    r.heads = parseHead(args.value("--head", "mean"), folder.heads());
    const std::string scale = args.value("--scale", "linear");
    const auto kind = attnlens::parseMapScale(scale);
    if (!kind) throw UsageError("--scale: expected linear, log or clip, got '" + scale + "'");
    r.scale.kind = *kind;
    r.scale.ignoredKeys = args.has("--ignore-first") ? 1 : 0;
    r.colorMap = parseColorMapOption(args, r.colorMap);
    r.cell = args.intValue("--cell", 0, 1, 128);
    return r;
}

void writeTextHeatmap(const TextHeatmapRequest& request, const attnlens::TextFolder& folder,
                      const std::vector<int>& ids, const attnlens::AttentionStore& attention) {
    const attnlens::RowMatrix map = attnlens::layerAttention(attention, request.layer, request.heads);
    if (!request.npy.empty()) attnlens::writeNpy(request.npy, map.data(), {map.rows(), map.cols()});
    if (request.path.empty()) return;
    const attnlens::ScaledMap scaled = attnlens::scaleMap(map, request.scale);
    attnlens::ui::HeatmapScene scene;
    scene.values = scaled.values;
    scene.mask = scaled.keep;
    scene.maskedText = QStringLiteral("off");
    for (int id : ids) {
        const QString label = QString::fromStdString(folder.tokenText(id));
        scene.rowLabels << label;
        scene.columnLabels << label;
    }
    scene.rowTitle = QStringLiteral("query (attends)");
    scene.columnTitle = QStringLiteral("key (attended to)");
    scene.colorMap = request.colorMap;
    scene.lo = scaled.lo;
    scene.hi = scaled.hi;
    scene.scale = scaled.colorScale;
    scene.sinks = scaled.sinks;
    scene.updateImage();
    writeHeatmap(request.path, scene, request.cell);
}

} // namespace cli
