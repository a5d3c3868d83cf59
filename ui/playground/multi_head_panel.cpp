#include "ui/playground/multi_head_panel.h"

#include "ui/playground/matrix_editor.h"
#include "ui/playground/matrix_table_model.h"
#include "ui/playground/playground_model.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace attnlens::ui {

namespace {

QString number(float v) {
    return withMinusSign(QString::number(static_cast<double>(v), 'f', 2));
}

QLabel* operatorLabel(const QString& text, QWidget* parent) {
    auto* label = new QLabel(QStringLiteral("<span style='font-size:18pt'>%1</span>").arg(text), parent);
    label->setAlignment(Qt::AlignCenter);
    return label;
}

} // namespace

MultiHeadPanel::MultiHeadPanel(PlaygroundModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(4, 4, 4, 4);
    column->setSpacing(6);
    m_formula = new QLabel(this);
    m_formula->setObjectName(QStringLiteral("multiHeadFormula"));
    m_formula->setTextFormat(Qt::RichText);
    m_formula->setWordWrap(true);
    column->addWidget(m_formula);

    // Every head's output, side by side; scrolls sideways when there are many heads.
    // Every head's output, side by side (the tab scrolls when they need more room than it has).
    auto* heads = new QWidget(this);
    m_headRow = new QHBoxLayout(heads);
    m_headRow->setContentsMargins(0, 0, 0, 0);
    m_headRow->setSpacing(6);
    m_headRow->addStretch(1);
    column->addWidget(heads, 2);

    // Concat · W_O = result.
    auto* product = new QGridLayout;
    product->setHorizontalSpacing(6);
    m_concat = makeView(QStringLiteral("concatOutput"));
    m_concat->setToolTip(tr("The heads' outputs side by side: feature i·d_v/h + j is feature j of head i"));
    m_projection = new MatrixEditor(model, PlaygroundModel::Input::OutputProjection, this);
    m_projection->setObjectName(QStringLiteral("outputProjection"));
    m_projection->setToolTip(
        tr("The output projection W_O, [d_v, d_v]: row r says how concatenated feature r "
           "feeds each output feature. Double-click or type to edit; arrows and the wheel "
           "change a value live. Row colours: the head a feature comes from."));
    m_result = makeView(QStringLiteral("projectedOutput"));
    m_result->setToolTip(tr("The layer's output: Concat(heads) · W_O"));
    product->addWidget(new QLabel(tr("<b>Concat</b>(head<sub>0</sub>, …) [n, d_v]"), this), 0, 0);
    product->addWidget(new QLabel(tr("<b>W<sub>O</sub></b> [d_v, d_v] — editable"), this), 0, 2);
    product->addWidget(new QLabel(tr("<b>Result</b> [n, d_v]"), this), 0, 4);
    product->addWidget(m_concat, 1, 0);
    product->addWidget(operatorLabel(QStringLiteral("·"), this), 1, 1);
    product->addWidget(m_projection, 1, 2, Qt::AlignTop);
    product->addWidget(operatorLabel(QStringLiteral("="), this), 1, 3);
    product->addWidget(m_result, 1, 4);
    product->setColumnStretch(0, 3);
    product->setColumnStretch(2, 3);
    product->setColumnStretch(4, 3);
    product->setRowStretch(1, 1);
    column->addLayout(product, 3);

    m_detail = new QLabel(this);
    m_detail->setObjectName(QStringLiteral("projectionDetail"));
    m_detail->setTextFormat(Qt::RichText);
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    column->addWidget(m_detail);

    for (HeatmapView* v : {m_concat, m_result})
        connect(v, &HeatmapView::cellClicked, this,
                [this](int row, int) { m_model->setFocus(row, m_model->focusKey()); });
}

HeatmapView* MultiHeadPanel::makeView(const QString& name) {
    auto* view = new HeatmapView(this);
    view->setObjectName(name);
    view->setAxisTitles(tr("query"), tr("feature"));
    view->setColorBarPlacement(HeatmapFrame::Bar::Below); // as every heatmap of the playground
    view->setColorMap(m_colorMap);
    view->setAnnotationsEnabled(m_annotate);
    view->setMinimumSize(120, 110);
    return view;
}

HeatmapView* MultiHeadPanel::headView(int head) const {
    return head >= 0 && head < headViewCount() ? m_heads[static_cast<size_t>(head)] : nullptr;
}

QString MultiHeadPanel::formula() const {
    return m_formula->text();
}
QString MultiHeadPanel::detail() const {
    return m_detail->text();
}

void MultiHeadPanel::setColorMap(ColorMap map) {
    m_colorMap = map;
    for (HeatmapView* v : m_heads)
        v->setColorMap(map);
    m_concat->setColorMap(map);
    m_result->setColorMap(map);
}

void MultiHeadPanel::setAnnotationsEnabled(bool on) {
    m_annotate = on;
    for (HeatmapView* v : m_heads)
        v->setAnnotationsEnabled(on);
    m_concat->setAnnotationsEnabled(on);
    m_result->setAnnotationsEnabled(on);
}

// One card per head: a title tinted like the head's columns in Q, K, V, and the head's output.
void MultiHeadPanel::syncHeadViews() {
    const int h = m_model->heads();
    while (headViewCount() > h) {
        delete m_headCards.back();
        m_headCards.pop_back();
        m_heads.pop_back();
    }
    while (headViewCount() < h) {
        const int i = headViewCount();
        auto* card = new QWidget(m_headRow->parentWidget());
        auto* layout = new QVBoxLayout(card);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->setSpacing(2);
        auto* title = new QLabel(
            tr("head<sub>%1</sub> = softmax(Q<sub>%1</sub>K<sub>%1</sub>ᵀ/√d<sub>k</sub>)V<sub>%1</sub>")
                .arg(i),
            card);
        title->setStyleSheet(
            QStringLiteral("background: %1; color: black; padding: 1px 4px; border-radius: 3px;")
                .arg(MatrixTableModel::headTint(i, true).name()));
        layout->addWidget(title);
        HeatmapView* view = makeView(QStringLiteral("headOutput%1").arg(i));
        view->setToolTip(
            tr("Head %1's output: its weights times its columns of V. Click to show this head's stages.")
                .arg(i));
        connect(view, &HeatmapView::cellClicked, this, [this, i](int row, int) {
            m_model->setSelectedHead(i);
            m_model->setFocus(row, m_model->focusKey());
        });
        layout->addWidget(view, 1);
        m_headRow->insertWidget(i, card, 1);
        m_headCards.push_back(card);
        m_heads.push_back(view);
    }
}

void MultiHeadPanel::refresh() {
    const PlaygroundModel& m = *m_model;
    syncHeadViews();
    const int h = m.heads(), dv = m.dV(), fq = m.focusQuery();
    const QStringList tokens = m.tokens();
    const RowMatrix concat = m.output();
    const RowMatrix& result = m.projected();
    if (concat.size() == 0 || result.size() == 0) return;
    const float lo = concat.minCoeff(), hi = std::max(concat.maxCoeff(), lo + 1e-6f);
    for (int i = 0; i < h; ++i) {
        QStringList features;
        for (int c = 0; c < dv; ++c)
            features << QString::number(i * dv + c);
        HeatmapView* v = m_heads[static_cast<size_t>(i)];
        v->setRangeMode(HeatmapView::RangeMode::Fixed);
        v->setFixedRange(lo, hi);
        v->setMatrix(m.stage(PlaygroundModel::Stage::Output, i), tokens, features);
        v->selectRow(fq);
        v->setMinimumSize(v->labelledMinimumSize());
    }
    QStringList all;
    for (int c = 0; c < m.dValue(); ++c)
        all << QString::number(c);
    m_concat->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_concat->setFixedRange(lo, hi);
    m_concat->setMatrix(concat, tokens, all);
    m_concat->selectRow(fq);
    m_result->setRangeMode(HeatmapView::RangeMode::Auto);
    m_result->setMatrix(result, tokens, all);
    m_result->selectRow(fq);
    for (HeatmapView* v : {m_concat, m_result})
        v->setMinimumSize(v->labelledMinimumSize());

    m_formula->setText(
        tr("<b>MultiHead(Q, K, V) = Concat(head<sub>0</sub>, …, head<sub>%1</sub>) · W<sub>O</sub></b> — %2 "
           "head%3, "
           "each [n, d_v/h] = [%4, %5]; the concatenation and the result are [n, d_v] = [%4, %6]. (Here head "
           "i "
           "reads its own columns of Q, K, V; a trained layer first projects them with W<sub>Q</sub>, "
           "W<sub>K</sub>, W<sub>V</sub>.)")
            .arg(h - 1)
            .arg(h)
            .arg(h == 1 ? QString() : QStringLiteral("s"))
            .arg(m.sequenceLength())
            .arg(dv)
            .arg(m.dValue()));

    // The arithmetic of one result cell: the focused query, output feature 0.
    const RowMatrix wo = m.input(PlaygroundModel::Input::OutputProjection);
    QStringList terms;
    const int shown = std::min(m.dValue(), 6);
    for (int r = 0; r < shown; ++r)
        terms << QStringLiteral("%1·%2").arg(number(concat(fq, r)), number(wo(r, 0)));
    if (m.dValue() > shown) terms << QStringLiteral("… (%1 more)").arg(m.dValue() - shown);
    m_detail->setText(
        tr("Result[<b>%1</b>, 0] = Σ<sub>r</sub> Concat[%1, r] · W<sub>O</sub>[r, 0] = %2 = <b>%3</b>")
            .arg(tokens.value(fq).toHtmlEscaped(), terms.join(QStringLiteral(" + ")), number(result(fq, 0))));
}

} // namespace attnlens::ui
