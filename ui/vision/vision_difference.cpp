// The Vision page's difference maps (issue 22, M12): the map on screen pinned as A, compared with the map
// shown now (another picture, layer, head, query or model with the same patch grid) in a window beside the
// page.
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"
#include "ui/widgets/map_difference_window.h"

#include <QFileInfo>

namespace attnlens::ui {

QString VisionPage::describeMap() const {
    const auto& image = m_doc->image();
    const QString model = QFileInfo(loadedModelDir()).fileName();
    return tr("%1 · %2 · %3")
        .arg(image ? image->source : QString(), m_doc->mapDescription(),
             model.isEmpty() ? tr("built-in model") : model);
}

void VisionPage::pinMap() {
    const RowMatrix map = m_doc->currentMap();
    if (map.size() == 0 || m_doc->flowPending()) {
        showError(tr("Nothing to pin yet: open a picture (and wait for the flow map)."));
        return;
    }
    pinMapAs(map, describeMap());
}

void VisionPage::pinMapAs(const RowMatrix& map, const QString& description) {
    if (!m_difference) {
        m_difference = new MapDifferenceWindow(tr("Difference — Vision"), this);
        connect(m_difference, &MapDifferenceWindow::pinRequested, this, &VisionPage::pinMap);
        for (auto signal :
             {&VisionDocument::imageChanged, &VisionDocument::modelChanged, &VisionDocument::viewChanged,
              &VisionDocument::selectionChanged, &VisionDocument::lookChanged})
            connect(m_doc, signal, this, &VisionPage::refreshDifference);
    }
    m_difference->pin(map, description);
    refreshDifference();
    m_difference->show();
    m_difference->raise();
}

void VisionPage::refreshDifference() {
    if (!m_difference || !m_difference->hasPin()) return;
    m_difference->setCurrent(m_doc->flowPending() ? RowMatrix() : m_doc->currentMap(), describeMap(),
                             m_doc->colorMap());
}

} // namespace attnlens::ui
