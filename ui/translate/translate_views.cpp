#include "ui/translate/translate_views.h"

#include "core/util/error.h"
#include "ui/translate/beam_view.h"
#include "ui/translate/embeddings_view.h"
#include "ui/translate/line_view.h"
#include "ui/translate/matrix_view.h"
#include "ui/translate/model_grid_view.h"
#include "ui/translate/step_panel.h"
#include "ui/translate/translation_export.h"
#include "ui/widgets/heatmap_view.h"

#include <QFrame>
#include <QMenu>
#include <QScrollArea>
#include <QTabWidget>

namespace attnlens::ui {

TranslateViews::TranslateViews(TranslationDocument* doc, QWidget* parent)
    : QSplitter(Qt::Horizontal, parent), m_doc(doc), m_tabs(new QTabWidget(this)),
      m_matrix(new AttentionMatrixView(doc, m_tabs)), m_model(new ModelGridView(doc, m_tabs)),
      m_lines(new AttentionLineView(doc, m_tabs)), m_embeddings(new EmbeddingsView(doc, m_tabs)),
      m_beam(new BeamView(doc, m_tabs)) {
    setObjectName(QStringLiteral("translateSplitter"));
    m_tabs->setObjectName(QStringLiteral("views"));
    m_matrix->heatmap()->setContextMenuHook([this](QMenu& menu, HeatmapCell cell) {
        if (!cell.isValid() || !m_doc->trace()) return;
        menu.addSeparator();
        menu.addAction(tr("Inside this score…"), this,
                       [this, cell] { emit neuronRequested(cell.row, cell.col); });
    });
    m_tabs->addTab(m_matrix, tr("Matrix"));
    m_tabs->addTab(m_model, tr("Model"));
    m_tabs->addTab(m_lines, tr("Lines"));
    m_tabs->addTab(m_embeddings, tr("Embeddings"));
    m_tabs->addTab(m_beam, tr("Beam"));
    connect(m_model, &ModelGridView::headActivated, this, [this] { showView(TranslateView::Matrix); });
    auto* stepScroll = new QScrollArea(this);
    stepScroll->setObjectName(QStringLiteral("stepPanelScroll"));
    stepScroll->setWidgetResizable(true);
    stepScroll->setFrameShape(QFrame::NoFrame);
    stepScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_stepPanel = new StepPanel(m_doc, stepScroll);
    stepScroll->setWidget(m_stepPanel);
    addWidget(m_tabs);
    addWidget(stepScroll);
    setStretchFactor(0, 3);
    setStretchFactor(1, 1);
    setSizes({900, 330});
}

void TranslateViews::addLensTabs(QWidget* heads, QWidget* differenceTab, QWidget* differenceView) {
    m_tabs->addTab(heads, tr("Heads"));
    m_tabs->addTab(differenceTab, tr("Difference"));
    m_differenceView = differenceView;
}

void TranslateViews::addLogitLensTab(QWidget* lens) {
    m_tabs->addTab(lens, tr("Logit lens"));
}

void TranslateViews::showView(TranslateView view) {
    m_tabs->setCurrentIndex(static_cast<int>(view));
}

TranslateView TranslateViews::currentView() const {
    return static_cast<TranslateView>(m_tabs->currentIndex());
}

void TranslateViews::exportView(const QString& path) const {
    QWidget* widget = m_tabs->currentWidget();
    switch (currentView()) {
    case TranslateView::Matrix:
        if (m_doc->currentMatrix().empty()) throw Error(path.toStdString() + ": the matrix view is empty");
        return saveView(path, *m_matrix->heatmap(), m_matrix->title());
    case TranslateView::Model:
        widget = m_model->canvas();
        break;
    case TranslateView::Lines:
        widget = m_lines->canvas();
        break;
    case TranslateView::Beam:
        widget = m_beam->canvas();
        break;
    case TranslateView::Difference:
        widget = m_differenceView;
        break;
    default:
        break;
    }
    saveView(path, widget, m_tabs->tabText(m_tabs->currentIndex()));
}

std::optional<TranslateView> parseTranslateView(const QString& name) {
    const QString n = name.toLower();
    if (n == QLatin1String("matrix")) return TranslateView::Matrix;
    if (n == QLatin1String("model")) return TranslateView::Model;
    if (n == QLatin1String("lines") || n == QLatin1String("line")) return TranslateView::Lines;
    if (n == QLatin1String("embeddings")) return TranslateView::Embeddings;
    if (n == QLatin1String("beam")) return TranslateView::Beam;
    if (n == QLatin1String("heads")) return TranslateView::Heads;
    if (n == QLatin1String("difference") || n == QLatin1String("diff")) return TranslateView::Difference;
    if (n == QLatin1String("lens")) return TranslateView::Lens;
    return std::nullopt;
}

} // namespace attnlens::ui
