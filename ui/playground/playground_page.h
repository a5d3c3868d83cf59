#pragma once
// PlaygroundPage: the "Attention" page. Inputs on the left (preset, tokens, sizes, heads, mask,
// editable Q, K, V), the five stages of scaled dot-product attention on the right as annotated
// heatmaps, and below them the arithmetic behind one focused cell. The page is thin: all state is in
// PlaygroundModel; the page turns model changes into view updates and user actions into setters.
//
// Child widgets carry object names for tests and style sheets: "preset", "seed", "tokens",
// "sequenceLength", "dModel", "heads", "maskMode", "paddingCount", "colorMap", "weightsAutoRange",
// "annotations", "explanation".

#include "core/export/colormap.h"
#include "ui/playground/playground_model.h"
#include "ui/shell/help_dialogs.h"
#include "ui/shell/session.h"

#include <QWidget>

#include <array>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTabWidget;
class QScrollArea;
class QGridLayout;

namespace attnlens::ui {

class HeadStrip;
class MultiHeadPanel;
class HeatmapView;
class MatrixEditor;
class StagePanel;

// Help → What am I looking at? (playground_help.cpp)
QString playgroundHelpTitle();
QString playgroundHelpText();

class PlaygroundPage : public QWidget, public ExplainedPage, public SessionPage {
    Q_OBJECT
public:
    explicit PlaygroundPage(QWidget* parent = nullptr);

    // Help → What am I looking at? (ui/…/*_help.cpp)
    QString viewTitle() const override { return playgroundHelpTitle(); }
    QString viewExplanation() const override { return playgroundHelpText(); }

    // SessionPage (playground_session.cpp): tokens, sizes, heads, Q / K / V / W_O (or the preset and seed
    // that make them), the mask, the focused head, query and key, the tab and the look. Restored at once.
    QString sessionKey() const override { return QStringLiteral("attention"); }
    QJsonObject saveSession() const override;
    QString checkSession(const QJsonObject& state) const override;
    void restoreSession(const QJsonObject& state) override;
    bool restoringSession() const override { return false; }

    PlaygroundModel* model() const { return m_model; }
    StagePanel* stagePanel(PlaygroundModel::Stage stage) const;
    HeatmapView* stageView(PlaygroundModel::Stage stage) const;
    HeatmapView* maskView() const { return m_maskView; }
    MatrixEditor* editor(PlaygroundModel::Input input) const;
    HeadStrip* headStrip() const { return m_headStrip; }
    MultiHeadPanel* multiHeadPanel() const { return m_multiHead; }
    QTabWidget* stageTabs() const { return m_stageTabs; }
    QString explanationText() const;

private:
    QWidget* buildSetup();
    QWidget* buildInputs();
    QWidget* buildMaskBox(QWidget* panel);
    QWidget* buildInputEditors(QWidget* panel);
    QWidget* buildStages();
    QLayout* buildStageToolbar(QWidget* area);
    QWidget* buildExplainCard(QWidget* area);
    void refresh();
    void syncControls();
    void setAllColorMaps(ColorMap map);
    int stageColumns() const;
    void reflowStages(int columns);
    bool eventFilter(QObject* watched, QEvent* event) override;

    PlaygroundModel* m_model;
    std::array<StagePanel*, 5> m_stages{};
    std::array<MatrixEditor*, 3> m_editors{}; // Q, K, V (W_O's editor is in the multi-head panel)
    HeatmapView* m_maskView = nullptr;
    HeadStrip* m_headStrip = nullptr;
    MultiHeadPanel* m_multiHead = nullptr;
    QTabWidget* m_stageTabs = nullptr;
    QScrollArea* m_stagesScroll = nullptr;
    QGridLayout* m_stageGrid = nullptr;
    QWidget* m_explainCard = nullptr;
    int m_stageColumns = 0;
    int m_widestStage = 0; // the widest stage card's minimum (every label drawn)
    QWidget* m_headRow = nullptr;
    QLabel* m_explanation = nullptr;
    QComboBox* m_preset = nullptr;
    QSpinBox* m_seed = nullptr;
    QLabel* m_edited = nullptr;
    QLineEdit* m_tokens = nullptr;
    QSpinBox* m_length = nullptr;
    QSpinBox* m_dModel = nullptr;
    QSpinBox* m_dValue = nullptr;
    QComboBox* m_heads = nullptr;
    QLabel* m_dK = nullptr;
    QComboBox* m_maskMode = nullptr;
    QSpinBox* m_padding = nullptr;
    QLabel* m_maskHint = nullptr;
    QComboBox* m_colorMap = nullptr;
    QCheckBox* m_weightsAuto = nullptr;
    QCheckBox* m_valueWeighted = nullptr; // stage ④ shows the weights value-weighted
    QCheckBox* m_annotations = nullptr;
};

} // namespace attnlens::ui
