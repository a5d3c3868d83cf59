#pragma once
// TranslateViews: the Translate page's view tabs — Matrix, Model (layers × heads; a click shows the head in
// the Matrix), Lines, Embeddings, Beam, then the lenses' tabs (Heads, Difference) — with the step panel
// beside them (it scrolls when the window is short). Reads the page's TranslationDocument.
//
// Object names: "translateSplitter" (sizes remembered by the window), "views" (the tabs), "stepPanelScroll".

#include "core/contract/run_controls.h"

#include <QSplitter>
#include <QString>

#include <optional>

class QTabWidget;

namespace attnlens::ui {

class AttentionLineView;
class AttentionMatrixView;
class BeamView;
class EmbeddingsView;
class ModelGridView;
class StepPanel;
class TranslationDocument;

// Help → What am I looking at? (translate_help.cpp): one text per view and attention kind.
enum class TranslateView {
    Matrix = 0,
    Model = 1,
    Lines = 2,
    Embeddings = 3,
    Beam = 4,
    Heads = 5,
    Difference = 6,
    Lens = 7
};
QString translateHelpTitle(TranslateView view);
QString translateHelpText(TranslateView view, AttentionKind kind);

class TranslateViews : public QSplitter {
    Q_OBJECT
public:
    TranslateViews(TranslationDocument* doc, QWidget* parent);
    QTabWidget* tabs() const { return m_tabs; }
    // The lenses' tabs; `differenceView` is what the Difference tab exports (its tab holds buttons too).
    void addLensTabs(QWidget* heads, QWidget* differenceTab, QWidget* differenceView);
    void addLogitLensTab(QWidget* lens); // after the Difference tab

    void showView(TranslateView view);
    TranslateView currentView() const;
    // The view on screen as .png or .svg (the Matrix with its title); throws attnlens::Error.
    void exportView(const QString& path) const;

    AttentionMatrixView* matrixView() const { return m_matrix; }
    ModelGridView* modelView() const { return m_model; }
    AttentionLineView* lineView() const { return m_lines; }
    EmbeddingsView* embeddingsView() const { return m_embeddings; }
    BeamView* beamView() const { return m_beam; }
    StepPanel* stepPanel() const { return m_stepPanel; }

signals:
    void neuronRequested(int row, int column); // "Inside this score…" on a matrix cell

private:
    TranslationDocument* m_doc;
    QTabWidget* m_tabs;
    AttentionMatrixView* m_matrix;
    ModelGridView* m_model;
    AttentionLineView* m_lines;
    EmbeddingsView* m_embeddings;
    BeamView* m_beam;
    StepPanel* m_stepPanel = nullptr;
    QWidget* m_differenceView = nullptr;
};

// "matrix", "model", "lines", "embeddings", "beam", "heads", "difference", "lens" (any case; "line", "diff"
// too).
std::optional<TranslateView> parseTranslateView(const QString& name);

} // namespace attnlens::ui
