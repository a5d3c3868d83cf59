#include "ui/widgets/difference_view.h"

#include "core/util/error.h"
#include "ui/render/difference_image.h"
#include "ui/render/string_lists.h"
#include "ui/widgets/heatmap_view.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

DifferenceView::DifferenceView(QWidget* parent) : QWidget(parent) {
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    auto make = [this](const char* name) {
        auto* v = new HeatmapView(this);
        v->setObjectName(QLatin1String(name));
        v->setRangeMode(HeatmapView::RangeMode::Fixed);
        return v;
    };
    m_a = make("differenceA");
    m_b = make("differenceB");
    m_delta = make("differenceDelta");
    m_delta->setColorMap(ColorMap::Diverging);
    m_titleA = new QLabel(this);
    m_titleB = new QLabel(this);
    m_titleDelta = new QLabel(tr("<b>A − B</b> (red: A larger, blue: B larger)"), this);
    for (QLabel* t : {m_titleA, m_titleB, m_titleDelta}) {
        t->setWordWrap(true);
        t->setTextFormat(Qt::RichText);
    }
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("differenceSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    grid->addWidget(m_titleA, 0, 0);
    grid->addWidget(m_titleB, 0, 1);
    grid->addWidget(m_titleDelta, 0, 2);
    grid->addWidget(m_a, 1, 0);
    grid->addWidget(m_b, 1, 1);
    grid->addWidget(m_delta, 1, 2);
    grid->addWidget(m_summary, 2, 0, 1, 3);
    grid->setRowStretch(1, 1);
    for (int c = 0; c < 3; ++c)
        grid->setColumnStretch(c, 1);
}

void DifferenceView::setDifference(const Shown& s, const AttentionDiff& diff) {
    const float hi = std::max({1e-6f, s.a.maxCoeff(), s.b.maxCoeff()});
    const float span = std::max(1e-6f, static_cast<float>(diff.maxAbs));
    for (HeatmapView* v : {m_a, m_b, m_delta})
        v->setAxisTitles(s.rowTitle, s.columnTitle);
    m_a->setColorMap(s.colorMap);
    m_b->setColorMap(s.colorMap);
    m_a->setFixedRange(0.0f, hi);
    m_b->setFixedRange(0.0f, hi);
    m_delta->setFixedRange(-span, span);
    m_a->setMatrix(s.a, s.rowLabels, s.columnLabels);
    m_b->setMatrix(s.b, s.rowLabels, s.columnLabels);
    m_delta->setMatrix(s.diff, s.rowLabels, s.columnLabels);
    m_titleA->setText(tr("<b>A</b> (pinned): %1").arg(s.titleA.toHtmlEscaped()));
    m_titleB->setText(tr("<b>B</b> (now): %1").arg(s.titleB.toHtmlEscaped()));
    m_summary->setText(differenceSummary(diff).join(QStringLiteral("\n")));
    m_has = true;
    for (QWidget* w :
         {static_cast<QWidget*>(m_a), static_cast<QWidget*>(m_b), static_cast<QWidget*>(m_delta)})
        w->setVisible(true);
}

QWidget* DifferenceView::buildTab(QWidget* parent, const QString& viewName, const QString& pinTip,
                                  const QString& hint, const std::function<void()>& pin,
                                  const std::function<void()>& unpin, DifferenceView*& view) {
    auto* tab = new QWidget(parent);
    auto* layout = new QVBoxLayout(tab);
    auto* row = new QHBoxLayout;
    auto* pinButton = new QPushButton(tr("Pin this matrix as A"), tab);
    pinButton->setObjectName(QStringLiteral("pinDifference"));
    pinButton->setToolTip(pinTip);
    auto* unpinButton = new QPushButton(tr("Unpin"), tab);
    unpinButton->setObjectName(QStringLiteral("unpinDifference"));
    connect(pinButton, &QPushButton::clicked, tab, pin);
    connect(unpinButton, &QPushButton::clicked, tab, unpin);
    row->addWidget(pinButton);
    row->addWidget(unpinButton);
    row->addStretch(1);
    layout->addLayout(row);
    view = new DifferenceView(tab);
    view->setObjectName(viewName);
    view->clear(hint);
    layout->addWidget(view, 1);
    return tab;
}

void DifferenceView::compareMatrices(const LabelledMatrix& a, const LabelledMatrix& b, const QString& titleA,
                                     const QString& titleB, const QString& rowTitle,
                                     const QString& columnTitle) {
    try {
        const AttentionDiff d = diffAttention(a, b);
        Shown shown;
        shown.a = d.a;
        shown.b = d.b;
        shown.diff = d.diff;
        shown.rowLabels = toQStringList(d.rowLabels);
        shown.columnLabels = toQStringList(d.columnLabels);
        shown.titleA = titleA;
        shown.titleB = titleB;
        shown.rowTitle = rowTitle;
        shown.columnTitle = columnTitle;
        setDifference(shown, d);
    } catch (const std::exception& e) {
        clear(
            tr("A (%1) and B (%2) cannot be compared: %3").arg(titleA, titleB, QString::fromUtf8(e.what())));
    }
}

void DifferenceView::setGridDifference(const RowMatrix& a, const RowMatrix& b, const QString& titleA,
                                       const QString& titleB, ColorMap map) {
    if (a.rows() != b.rows() || a.cols() != b.cols())
        throw Error("the maps have different grids (" + std::to_string(a.rows()) + "×" +
                    std::to_string(a.cols()) + " and " + std::to_string(b.rows()) + "×" +
                    std::to_string(b.cols()) + ")");
    const auto flat = [](const RowMatrix& m) {
        return RowMatrix(Eigen::Map<const RowMatrix>(m.data(), 1, m.size()));
    };
    const AttentionDiff d = diffAttention({flat(a), {}, {}}, {flat(b), {}, {}});
    Shown s;
    s.a = a;
    s.b = b;
    s.diff = a - b;
    s.titleA = titleA;
    s.titleB = titleB;
    s.rowTitle = tr("row");
    s.columnTitle = tr("column");
    s.colorMap = map;
    setDifference(s, d);
    m_summary->setText(
        tr("max |Δ| = %1 · Jensen–Shannon divergence of the two maps as distributions over the %2 cells: "
           "%3 bits (0 = the same, 1 = disjoint)")
            .arg(d.maxAbs, 0, 'f', 4)
            .arg(a.size())
            .arg(std::isnan(d.meanJs) ? QStringLiteral("—") : QString::number(d.meanJs, 'f', 4)));
}

void DifferenceView::clear(const QString& message) {
    m_has = false;
    for (QWidget* w :
         {static_cast<QWidget*>(m_a), static_cast<QWidget*>(m_b), static_cast<QWidget*>(m_delta)})
        w->setVisible(false);
    m_titleA->clear();
    m_titleB->clear();
    m_summary->setText(message);
}

QString DifferenceView::summary() const {
    return m_summary->text();
}

} // namespace attnlens::ui
