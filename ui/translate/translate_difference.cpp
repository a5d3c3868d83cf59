// The Translate page's difference maps (issue 22, M12): pin the matrix on screen as A, then compare whatever
// the Matrix tab shows later (B) — another sentence, step, kind, layer, head or model — in the Difference
// tab.
#include "ui/render/string_lists.h"
#include "ui/render/trace_heatmap.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"
#include "ui/widgets/difference_view.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>

namespace attnlens::ui {

QWidget* TranslatePage::buildDifferenceTab() {
    auto* tab = new QWidget(m_tabs);
    auto* layout = new QVBoxLayout(tab);
    auto* row = new QHBoxLayout;
    auto* pin = new QPushButton(tr("Pin this matrix as A"), tab);
    pin->setObjectName(QStringLiteral("pinDifference"));
    pin->setToolTip(
        tr("Keep the matrix the Matrix tab shows now as A; then change the sentence, step, kind, layer, "
           "head or model and compare"));
    auto* clear = new QPushButton(tr("Unpin"), tab);
    clear->setObjectName(QStringLiteral("unpinDifference"));
    connect(pin, &QPushButton::clicked, this, &TranslatePage::pinDifference);
    connect(clear, &QPushButton::clicked, this, &TranslatePage::unpin);
    row->addWidget(pin);
    row->addWidget(clear);
    row->addStretch(1);
    layout->addLayout(row);
    m_differenceView = new DifferenceView(tab);
    m_differenceView->setObjectName(QStringLiteral("differenceView"));
    m_differenceView->clear(
        tr("Pin a matrix as A, then change what the Matrix tab shows: A, B and A − B appear here."));
    layout->addWidget(m_differenceView, 1);
    connect(m_doc, &TranslationDocument::selectionChanged, this, &TranslatePage::refreshDifference);
    connect(m_doc, &TranslationDocument::snapshotChanged, this, &TranslatePage::refreshDifference);
    connect(m_doc, &TranslationDocument::modelChanged, this, &TranslatePage::refreshDifference);
    return tab;
}

QString TranslatePage::describeMatrix() const {
    const auto trace = m_doc->trace();
    QString head;
    if (m_doc->showsThrough())
        head = m_doc->through() == TranslationDocument::Through::Rollout
                   ? tr("rollout 0–%1").arg(m_doc->layer())
                   : tr("flow 0–%1").arg(m_doc->layer());
    else
        head = tr("layer %1 · %2")
                   .arg(m_doc->layer())
                   .arg(m_doc->head() >= 0 ? tr("head %1").arg(m_doc->head())
                                           : (m_doc->fusion() == HeadFusion::Max ? tr("max") : tr("mean")));
    return tr("“%1” · %2 · %3 · step %4 · %5")
        .arg(trace ? QString::fromStdString(trace->source) : QString(), attentionKindName(m_doc->kind()),
             head)
        .arg(m_doc->snapshot() ? m_doc->snapshot()->step : 0)
        .arg(QFileInfo(m_doc->modelDir()).fileName());
}

void TranslatePage::pinDifference() {
    const AttentionMatrix m = m_doc->currentMatrix();
    if (m.empty()) {
        showStatus(tr("Nothing to pin yet: translate a sentence first."), true);
        return;
    }
    m_pinned = Pinned{{m.values, toStdStrings(m.rowLabels), toStdStrings(m.columnLabels)}, describeMatrix()};
    refreshDifference();
    showView(View::Difference);
}

void TranslatePage::unpin() {
    m_pinned.reset();
    refreshDifference();
}

void TranslatePage::refreshDifference() {
    if (!m_differenceView) return;
    if (!m_pinned) {
        m_differenceView->clear(
            tr("Pin a matrix as A, then change what the Matrix tab shows: A, B and A − B appear here."));
        return;
    }
    const AttentionMatrix m = m_doc->currentMatrix();
    if (m.empty()) {
        m_differenceView->clear(
            tr("A is pinned (%1); B appears when there is a matrix to compare.").arg(m_pinned->description));
        return;
    }
    try {
        const AttentionDiff d = diffAttention(
            m_pinned->matrix, {m.values, toStdStrings(m.rowLabels), toStdStrings(m.columnLabels)});
        DifferenceView::Shown shown;
        shown.a = d.a;
        shown.b = d.b;
        shown.diff = d.diff;
        shown.rowLabels = toQStringList(d.rowLabels);
        shown.columnLabels = toQStringList(d.columnLabels);
        shown.titleA = m_pinned->description;
        shown.titleB = describeMatrix();
        shown.rowTitle = traceAxisTitle(m_doc->kind(), true);
        shown.columnTitle = traceAxisTitle(m_doc->kind(), false);
        m_differenceView->setDifference(shown, d);
    } catch (const std::exception& e) {
        m_differenceView->clear(
            tr("A (%1) and B (%2) cannot be compared: %3")
                .arg(m_pinned->description, describeMatrix(), QString::fromUtf8(e.what())));
    }
}

} // namespace attnlens::ui
