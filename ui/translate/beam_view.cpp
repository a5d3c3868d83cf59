#include "ui/translate/beam_view.h"
#include "ui/widgets/page_parts.h"

#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QVBoxLayout>
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
    setFixedSize(m_layout.size.expandedTo(QSize(200, 60)));
    update();
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
    paintBeamTree(p, m_items, m_layout, selected);
}

void BeamTreeCanvas::mousePressEvent(QMouseEvent* event) {
    const int i = m_layout.nodeAt(event->position());
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
    layout->addWidget(m_info);
    auto* scroll = new QScrollArea(this);
    scroll->setFrameShape(QFrame::NoFrame);
    m_canvas = new BeamTreeCanvas(document, scroll);
    scroll->setWidget(m_canvas);
    layout->addWidget(scroll, 1);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &BeamView::refresh);
    refresh();
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
