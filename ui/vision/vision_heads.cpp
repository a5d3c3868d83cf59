// The Vision page's Heads lens (issue 21): statistics of every head on the picture on screen, in a window
// that follows the picture and the chosen layer and head.
#include "ui/vision/vision_page.h"

#include "core/analysis/head_stats.h"
#include "ui/vision/vision_document.h"
#include "ui/widgets/heads_lens.h"

#include <QDialog>
#include <QVBoxLayout>

namespace attnlens::ui {

void VisionPage::showHeadStats() {
    if (!m_headsDialog) {
        m_headsDialog = new QDialog(this);
        m_headsDialog->setObjectName(QStringLiteral("headsDialog"));
        m_headsDialog->setWindowTitle(tr("Head statistics — Vision"));
        auto* layout = new QVBoxLayout(m_headsDialog);
        layout->setContentsMargins(4, 4, 4, 4);
        m_headsLens = new HeadsLensView(m_headsDialog);
        layout->addWidget(m_headsLens);
        m_headsDialog->resize(760, 460);
        connect(m_headsLens, &HeadsLensView::headActivated, this, [this](int layer, int head) {
            m_doc->setRollout(false);
            m_doc->setLayer(layer);
            m_doc->setHead(head);
        });
        connect(m_doc, &VisionDocument::imageChanged, this, &VisionPage::refreshHeadStats);
        connect(m_doc, &VisionDocument::modelChanged, this, &VisionPage::refreshHeadStats);
        connect(m_doc, &VisionDocument::viewChanged, this, [this] {
            if (m_headsLens->hasStats()) m_headsLens->setCurrentHead(m_doc->layer(), m_doc->head());
        });
    }
    m_headsDialog->show();
    m_headsDialog->raise();
    refreshHeadStats();
}

void VisionPage::refreshHeadStats() {
    if (!m_headsDialog || !m_headsDialog->isVisible()) return;
    const auto& image = m_doc->image();
    if (!image || !m_doc->model()) {
        m_headsLens->clear(tr("Open a picture: the statistics of every head appear here."));
        return;
    }
    const auto& grid = image->result.grid;
    const int patch = m_doc->model()->config().patchSize;
    const HeadStats stats = computeHeadStats(image->result.output.attentions,
                                             patchGridHeadStatsOptions(grid.rows(), grid.cols(), patch));
    m_headsLens->setStats(stats,
                          tr("%1: CLS + %2×%3 patches of %4 px; every layer and head")
                              .arg(image->source)
                              .arg(grid.rows())
                              .arg(grid.cols())
                              .arg(patch),
                          tr("px"));
    m_headsLens->setCurrentHead(m_doc->layer(), m_doc->head());
}

} // namespace attnlens::ui
