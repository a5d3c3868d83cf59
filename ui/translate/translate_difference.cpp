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
    QWidget* tab = DifferenceView::buildTab(
        m_tabs, QStringLiteral("differenceView"),
        tr("Keep the matrix the Matrix tab shows now as A; then change the sentence, step, kind, layer, head "
           "or "
           "model and compare"),
        tr("Pin a matrix as A, then change what the Matrix tab shows: A, B and A − B appear here."),
        [this] { pinDifference(); }, [this] { unpin(); }, m_differenceView);
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
    m_differenceView->compareMatrices(
        m_pinned->matrix, {m.values, toStdStrings(m.rowLabels), toStdStrings(m.columnLabels)},
        m_pinned->description, describeMatrix(), traceAxisTitle(m_doc->kind(), true),
        traceAxisTitle(m_doc->kind(), false));
}

} // namespace attnlens::ui
