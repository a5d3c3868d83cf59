#include "ui/widgets/heatmap_find.h"

#include "ui/widgets/heatmap_view.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QToolButton>

#include <algorithm>

namespace attnlens::ui {
namespace {

// A label as it is matched: word markers and surrounding spaces off, case folded.
QString matchForm(QString label) {
    label.remove(QChar(0x2581)).remove(QChar(0x0120)).remove(QChar(0x2423)); // ▁ Ġ and the views' ␣
    return label.trimmed().toCaseFolded();
}

void collect(const QStringList& labels, const QString& needle, bool row, std::vector<HeatmapHit>& hits) {
    for (int i = 0; i < labels.size(); ++i)
        if (matchForm(labels[i]).contains(needle)) hits.push_back({row, i});
}

} // namespace

std::vector<HeatmapHit> heatmapFindLabels(const HeatmapScene& scene, const QString& text) {
    std::vector<HeatmapHit> hits;
    const QString needle = matchForm(text);
    if (needle.isEmpty()) return hits;
    const auto labelsOf = [](const QStringList& labels, int count) {
        if (labels.size() == count) return labels;
        QStringList indices; // no labels: the indices are what the view shows
        for (int i = 0; i < count; ++i)
            indices << QString::number(i);
        return indices;
    };
    const QStringList rows = labelsOf(scene.rowLabels, scene.rows());
    const QStringList columns = labelsOf(scene.columnLabels, scene.columns());
    collect(rows, needle, true, hits);
    if (columns != rows) collect(columns, needle, false, hits);
    return hits;
}

HeatmapFind::HeatmapFind(HeatmapView* view) : QFrame(view), m_view(view) {
    setObjectName(QStringLiteral("heatmapFind"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(6, 3, 3, 3);
    row->setSpacing(4);
    m_text = new QLineEdit(this);
    m_text->setObjectName(QStringLiteral("findText"));
    m_text->setPlaceholderText(tr("Find token"));
    m_text->setClearButtonEnabled(true);
    m_text->setToolTip(tr("Part of a token; Enter: next, Shift+Enter: previous, Esc: close"));
    m_text->installEventFilter(this);
    m_count = new QLabel(this);
    m_count->setObjectName(QStringLiteral("findCount"));
    auto button = [this](const QString& text, const QString& tip) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        return b;
    };
    auto* previous = button(QStringLiteral("\u2191"), tr("Previous match (Shift+Enter)"));
    auto* next = button(QStringLiteral("\u2193"), tr("Next match (Enter)"));
    auto* closeButton = button(QStringLiteral("\u00d7"), tr("Close (Esc)"));
    row->addWidget(m_text);
    row->addWidget(m_count);
    row->addWidget(previous);
    row->addWidget(next);
    row->addWidget(closeButton);
    connect(m_text, &QLineEdit::textEdited, this, &HeatmapFind::search);
    connect(previous, &QToolButton::clicked, this, [this] { step(false); });
    connect(next, &QToolButton::clicked, this, [this] { step(true); });
    connect(closeButton, &QToolButton::clicked, this, &HeatmapFind::close);
    hide();
}

void HeatmapFind::open() {
    place();
    show();
    raise();
    m_text->setFocus(Qt::ShortcutFocusReason);
    m_text->selectAll();
    search(); // the matrix may have changed since the bar was last open
}

void HeatmapFind::place() {
    const QSize hint = sizeHint().boundedTo(QSize(m_view->width() - 8, sizeHint().height()));
    const int right = m_view->width() - m_view->verticalScrollBar()->sizeHint().width() - 4;
    setGeometry(std::max(4, right - hint.width()), 4, hint.width(), hint.height());
}

void HeatmapFind::search() {
    m_hits = heatmapFindLabels(m_view->scene(), m_text->text());
    m_current = -1;
    if (m_text->text().trimmed().isEmpty())
        m_count->clear();
    else if (m_hits.empty())
        m_count->setText(tr("no match"));
    else
        m_count->setText(m_hits.size() == 1 ? tr("1 match") : tr("%1 matches").arg(m_hits.size()));
}

bool HeatmapFind::find(const QString& text) {
    m_text->setText(text);
    search();
    return step(true);
}

bool HeatmapFind::step(bool forward) {
    if (m_hits.empty()) return false;
    const int n = static_cast<int>(m_hits.size());
    m_current = m_current < 0 ? (forward ? 0 : n - 1) : (m_current + (forward ? 1 : n - 1)) % n;
    const HeatmapHit hit = m_hits[static_cast<size_t>(m_current)];
    m_view->reveal(hit.row, hit.index);
    m_count->setText(tr("%1 of %2").arg(m_current + 1).arg(n));
    return true;
}

void HeatmapFind::close() {
    hide();
    m_view->setFocus(Qt::OtherFocusReason);
}

bool HeatmapFind::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_text && event->type() == QEvent::KeyPress) {
        const auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            step(!(key->modifiers() & Qt::ShiftModifier));
            return true;
        }
        if (key->key() == Qt::Key_Escape) {
            close();
            return true;
        }
    }
    return QFrame::eventFilter(watched, event);
}

} // namespace attnlens::ui
