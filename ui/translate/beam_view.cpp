#include "ui/translate/beam_view.h"

#include "ui/widgets/page_parts.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <set>

namespace attnlens::ui {

BeamTreeCanvas::BeamTreeCanvas(TranslationDocument* document, QWidget* parent)
    : QWidget(parent), m_doc(document) {
    setObjectName(QStringLiteral("beamTree"));
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &BeamTreeCanvas::rebuild);
    rebuild();
}

void BeamTreeCanvas::showEvent(QShowEvent*) {
    if (m_dirty) rebuild();
}

void BeamTreeCanvas::rebuild() {
    if (!isVisible()) {
        m_dirty = true;
        return;
    }
    m_dirty = false;
    m_items.clear();
    const auto snap = m_doc->snapshot();
    if (snap && m_doc->hasModel()) {
        const auto& nodes = snap->nodes;
        auto pathOf = [&](int n, std::set<int>& into) {
            while (n > 0 && n < static_cast<int>(nodes.size())) {
                into.insert(n);
                n = nodes[static_cast<size_t>(n)].parent;
            }
        };
        std::set<int> live, best;
        for (int n : snap->liveBeams)
            pathOf(n, live);
        for (int n : snap->finishedHypotheses)
            pathOf(n, live);
        pathOf(snap->bestNode, best);
        for (const BeamNode& n : nodes) {
            BeamTreeItem it;
            it.id = n.id;
            it.parent = n.parent;
            it.depth = n.depth;
            it.token = n.parent < 0 ? QStringLiteral("<start>")
                                    : QString::fromStdString(m_doc->model().tokenizer->idToPiece(n.token));
            it.score = n.score;
            it.logprob = n.logprob;
            it.finished = n.finished;
            it.live = n.parent < 0 || live.count(n.id) > 0;
            it.best = n.parent < 0 || best.count(n.id) > 0;
            m_items.push_back(it);
        }
    }
    m_layout = layoutBeamTree(m_items);
    applySize();
    emit rebuilt();
}

void BeamTreeCanvas::applySize() {
    const QSize scaled(static_cast<int>(std::ceil(m_layout.size.width() * m_zoom)),
                       static_cast<int>(std::ceil(m_layout.size.height() * m_zoom)));
    setFixedSize(scaled.expandedTo(QSize(200, 60)));
    update();
}

void BeamTreeCanvas::setZoom(double zoom) {
    zoom = std::clamp(zoom, 0.05, 4.0);
    if (zoom == m_zoom) return;
    m_zoom = zoom;
    applySize();
}

QRect BeamTreeCanvas::nodeRect(int index) const {
    if (index < 0 || index >= static_cast<int>(m_layout.boxes.size())) return {};
    const QRectF& b = m_layout.boxes[static_cast<size_t>(index)];
    return QRectF(b.x() * m_zoom, b.y() * m_zoom, b.width() * m_zoom, b.height() * m_zoom).toAlignedRect();
}

int BeamTreeCanvas::focusIndex() const {
    const auto snap = m_doc->snapshot();
    const int id = m_doc->selectedBeamNode() > 0 ? m_doc->selectedBeamNode() : (snap ? snap->bestNode : 0);
    for (size_t i = 0; i < m_items.size(); ++i)
        if (m_items[i].id == id) return static_cast<int>(i);
    return -1;
}

void BeamTreeCanvas::wheelEvent(QWheelEvent* event) {
    if (event->modifiers() & Qt::ControlModifier) {
        if (const int dy = event->angleDelta().y(); dy != 0) emit zoomRequested(dy > 0 ? 1 : -1);
        event->accept();
        return;
    }
    QWidget::wheelEvent(event);
}

void BeamTreeCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (m_items.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(10, 10, -10, -10), Qt::AlignLeft | Qt::AlignTop,
                   tr("No search tree yet."));
        return;
    }
    int selected = -1;
    for (size_t i = 0; i < m_items.size(); ++i)
        if (m_items[i].id == m_doc->selectedBeamNode()) selected = static_cast<int>(i);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.scale(m_zoom, m_zoom);
    paintBeamTree(p, m_items, m_layout, selected);
}

void BeamTreeCanvas::mousePressEvent(QMouseEvent* event) {
    const int i = m_layout.nodeAt(event->position() / m_zoom);
    if (i < 0) return;
    m_doc->setSelectedBeamNode(m_items[static_cast<size_t>(i)].id); // the root (0) = best hypothesis
    update();
}

BeamView::BeamView(TranslationDocument* document, QWidget* parent) : QWidget(parent), m_doc(document) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    m_info = new QLabel(this);
    m_info->setWordWrap(true);
    mute(m_info);
    auto* top = new QHBoxLayout;
    top->addWidget(m_info, 1);
    top->addWidget(zoomButtons(
                       this, QStringLiteral("beamZoom"), [this] { zoomOut(); }, [this] { zoomIn(); },
                       [this] { fitToView(); }),
                   0, Qt::AlignTop);
    layout->addLayout(top);
    m_scroll = new QScrollArea(this);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_canvas = new BeamTreeCanvas(document, m_scroll);
    m_scroll->setWidget(m_canvas);
    layout->addWidget(m_scroll, 1);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &BeamView::refresh);
    connect(m_canvas, &BeamTreeCanvas::zoomRequested, this,
            [this](int steps) { steps > 0 ? zoomIn() : zoomOut(); });
    connect(m_canvas, &BeamTreeCanvas::rebuilt, this, [this] {
        if (m_fit) applyFit();
        follow();
    });
    refresh();
}

void BeamView::zoomBy(double factor) {
    m_fit = false;
    m_canvas->setZoom(m_canvas->zoom() * factor);
    follow();
}

void BeamView::zoomIn() {
    zoomBy(1.25);
}
void BeamView::zoomOut() {
    zoomBy(0.8);
}

void BeamView::fitToView() {
    m_fit = true;
    applyFit();
    follow();
}

// The whole tree in the pane, never drawn larger than its layout.
void BeamView::applyFit() {
    const QSize tree = m_canvas->treeLayout().size;
    const QSize room = m_scroll->viewport()->size();
    if (tree.isEmpty() || room.isEmpty()) return;
    const double zoom =
        std::min({1.0, room.width() / double(tree.width()), room.height() / double(tree.height())});
    m_canvas->setZoom(zoom);
}

void BeamView::follow() {
    const QRect box = m_canvas->nodeRect(m_canvas->focusIndex());
    if (!box.isNull()) m_scroll->ensureVisible(box.center().x(), box.center().y(), box.width(), box.height());
}

void BeamView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (m_fit) applyFit();
}

void BeamView::refresh() {
    const auto snap = m_doc->snapshot();
    if (!snap) {
        m_info->setText(tr("The beam search tree appears here after Translate."));
        return;
    }
    QString text =
        snap->numBeams > 1
            ? tr("Beam search, width %1: every node shows its token, the cumulative log-probability and "
                 "(in brackets) its own. Blue: the best hypothesis; green border: finished; grey: pruned.")
                  .arg(snap->numBeams)
            : tr("Greedy decoding: the tree is a single chain. Choose beam search (width > 1) to see the "
                 "alternatives the search kept.");
    if (m_doc->selectedBeamNode() > 0)
        text += tr(" <b>Showing node %1's hypothesis: \"%2\"</b> (click the start node for the best one).")
                    .arg(m_doc->selectedBeamNode())
                    .arg(QString::fromStdString(m_doc->trace()->translation).toHtmlEscaped());
    else
        text += tr(" Click a node to show its attention in every view.");
    m_info->setText(text);
}

} // namespace attnlens::ui
