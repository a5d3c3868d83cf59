#include "core/export/gif_writer.h"
#include "core/export/npy.h"
#include "core/export/overlay.h"
#include "core/util/error.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/diffusion/u_shape_view.h"
#include "ui/shell/inference_worker.h"
#include "ui/vision/map_grid_view.h"

#include <QFileDialog>
#include <QLabel>

#include <cstdio>
#include <optional>

namespace attnlens::ui {

namespace {
constexpr int kTileMinSide = 112;   // exported U view and strip tiles, as on screen
constexpr int kExportMinSide = 256; // exported views, as `attnlens-cli diffuse --overlay` draws them
} // namespace

// --- exports --------------------------------------------------------------------------------

bool DiffusionPage::exportView(const QString& path) const {
    try {
        if (m_doc->currentStep() < 0) throw Error("nothing to export yet: generate an image first");
        writePng(path.toStdString(), m_doc->renderView(m_doc->currentStep(), kExportMinSide));
        return true;
    } catch (const std::exception& e) {
        const_cast<DiffusionPage*>(this)->showError(QString::fromUtf8(e.what()));
        return false;
    }
}

bool DiffusionPage::exportUView(const QString& path) const {
    if (m_uView->count() == 0 || m_doc->currentStep() < 0) return false;
    if (m_uView->renderImage(kTileMinSide).save(path, "PNG")) return true;
    const_cast<DiffusionPage*>(this)->showError(tr("'%1': cannot write the file").arg(path));
    return false;
}

bool DiffusionPage::exportStrip(const QString& path) const {
    if (m_strip->count() == 0) return false;
    if (m_strip->renderImage(kTileMinSide).save(path, "PNG")) return true;
    const_cast<DiffusionPage*>(this)->showError(tr("'%1': cannot write the file").arg(path));
    return false;
}

bool DiffusionPage::exportMap(const QString& path) const {
    const RowMatrix map = m_doc->currentMap(); // [h, w] of the layer
    if (map.size() == 0) return false;
    try {
        writeMatrix(path.toStdString(), map);
        return true;
    } catch (const std::exception& e) {
        const_cast<DiffusionPage*>(this)->showError(QString::fromUtf8(e.what()));
        return false;
    }
}

void DiffusionPage::exportTrajectory(const QString& path) {
    if (!m_doc->hasRun() || m_doc->running()) {
        showError(tr("Export the trajectory once a run has finished."));
        return;
    }
    std::vector<std::shared_ptr<const DiffusionFrame>> frames;
    std::vector<std::shared_ptr<const StepAttention>> cached;
    for (int s = 0; s < m_doc->completedSteps(); ++s) {
        frames.push_back(m_doc->frameShared(s));
        cached.push_back(m_doc->attention(s));
    }
    const bool gif = path.endsWith(QStringLiteral(".gif"), Qt::CaseInsensitive);
    attnlens::UNetView view = m_doc->view();
    view.minSide = kExportMinSide;
    const int layer = m_doc->layers().empty() ? -1 : m_doc->layer();
    worker()->run<int>(
        gif ? tr("Writing the GIF") : tr("Writing the PNG sequence"),
        [model = m_doc->model(), label = m_doc->settings().classLabel, frames, cached, view, layer, gif,
         out = path.toStdString()](const Callbacks& cb) {
            std::optional<GifWriter> writer;
            if (gif)
                writer.emplace(out, 10);
            else
                std::filesystem::create_directories(out);
            for (size_t i = 0; i < frames.size(); ++i) {
                cb.checkCancel();
                auto attention = cached[i];
                if (!attention && layer >= 0)
                    attention = DiffusionDocument::computeAttention(*model, label, *frames[i], cb);
                const UNetAttentionMap* map =
                    layer >= 0 ? &attention->layers[static_cast<size_t>(layer)] : nullptr;
                const RgbImage px = renderUNetView(frames[i]->step, map, view);
                if (writer) {
                    writer->addFrame(px);
                } else {
                    char name[32];
                    std::snprintf(name, sizeof name, "step_%03d.png", static_cast<int>(i));
                    writePng(std::filesystem::path(out) / name, px);
                }
                cb.report(static_cast<double>(i + 1) / frames.size(), "frame " + std::to_string(i + 1));
            }
            if (writer) writer->finish();
            return static_cast<int>(frames.size());
        },
        [this, path](int count) {
            showNotice(tr("Wrote %n frame(s) to %1.", nullptr, count).arg(path));
            emit exported(path);
        });
}

void DiffusionPage::chooseExport(Export what) {
    if (!m_doc->hasRun()) {
        showError(tr("Nothing to export yet: generate an image first."));
        return;
    }
    if (what == Export::PngSequence) {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder for the PNG sequence"));
        if (!dir.isEmpty()) exportTrajectory(dir);
        return;
    }
    struct Target {
        const char* filter;
        const char* suffix;
    };
    const Target target = what == Export::View     ? Target{"PNG image (*.png)", "-view.png"}
                          : what == Export::UView  ? Target{"PNG image (*.png)", "-u.png"}
                          : what == Export::Strip  ? Target{"PNG image (*.png)", "-strip.png"}
                          : what == Export::Gif    ? Target{"GIF image (*.gif)", "-trajectory.gif"}
                          : what == Export::MapNpy ? Target{"NumPy array (*.npy)", "-map.npy"}
                                                   : Target{"CSV (*.csv)", "-map.csv"};
    const QString base = QStringLiteral("%1-step%2").arg(m_doc->modelName()).arg(m_doc->currentStep());
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export"), base + QString::fromLatin1(target.suffix), tr(target.filter));
    if (path.isEmpty()) return;
    bool ok = false;
    switch (what) {
    case Export::View:
        ok = exportView(path);
        break;
    case Export::UView:
        ok = exportUView(path);
        break;
    case Export::Strip:
        ok = exportStrip(path);
        break;
    case Export::Gif:
        exportTrajectory(path);
        return; // reports when the worker has written it
    case Export::MapNpy:
    case Export::MapCsv:
        ok = exportMap(path);
        break;
    case Export::PngSequence:
        return;
    }
    if (ok) {
        showNotice(tr("Exported %1.").arg(path));
        emit exported(path);
    }
}

} // namespace attnlens::ui
