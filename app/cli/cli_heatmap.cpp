#include "cli_heatmap.h"

#include "cli_common.h"
#include "core/util/error.h"

#include <QGuiApplication>
#include <QString>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>

namespace cli {

namespace {

std::string lowerExtension(const std::string& path) {
    const auto dot = path.find_last_of('.');
    if (dot == std::string::npos || path.find_first_of("/\\", dot) != std::string::npos) return {};
    std::string ext = path.substr(dot + 1);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext;
}

// Qt's own diagnostics (runtime directory, SVG engine) are not for CLI users: failures surface as one
// "error: …" line from the caller instead.
void quietQtMessages(QtMsgType type, const QMessageLogContext&, const QString& message) {
    if (type == QtFatalMsg) std::fprintf(stderr, "error: %s\n", qPrintable(message));
}

} // namespace

void ensureGuiApplication() {
    if (QGuiApplication::instance()) return;
    qInstallMessageHandler(quietQtMessages);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "attnlens-cli";
    static char* argv[] = {name, nullptr};
    static const auto app = std::make_unique<QGuiApplication>(argc, argv);
}

void checkHeatmapPath(const std::string& flag, const std::string& path) {
    const std::string ext = lowerExtension(path);
    if (ext != "png" && ext != "svg")
        throw UsageError(flag + ": expected a .png or .svg file, got '" + path + "'");
    const auto folder = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
        throw UsageError(flag + ": folder '" + folder.string() + "' does not exist");
}

void writeHeatmap(const std::string& path, const attnlens::ui::HeatmapScene& scene, int cell) {
    checkHeatmapPath("--heatmap", path);
    ensureGuiApplication();
    const auto style = attnlens::ui::defaultHeatmapStyle();
    const QString file = QString::fromStdString(path);
    const bool ok = lowerExtension(path) == "svg" ? attnlens::ui::saveHeatmapSvg(scene, style, file, cell)
                                                  : attnlens::ui::saveHeatmapPng(scene, style, file, cell);
    if (!ok) throw attnlens::Error("cannot write " + path);
}

} // namespace cli
