#include "ui/playground/playground_page.h"

#include "ui/playground/explanation.h"
#include "ui/playground/head_strip.h"
#include "ui/playground/matrix_editor.h"
#include "ui/playground/multi_head_panel.h"
#include "ui/playground/playground_session.h"
#include "ui/playground/stage_panel.h"
#include "ui/render/heatmap_image.h"
#include "ui/widgets/flow_layout.h"
#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/page_parts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace attnlens::ui {

using Stage = PlaygroundModel::Stage;
using Input = PlaygroundModel::Input;
using MaskMode = PlaygroundModel::MaskMode;

namespace {

constexpr std::array<Stage, 5> kStages = {Stage::Scores, Stage::Scaled, Stage::Masked, Stage::Weights,
                                          Stage::Output};

QStringList splitTokens(const QString& text) {
    return text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
}

// The stages grid in its scroll area: rows as tall as their panels' minimum (or the viewport allows), not
// as tall as the wrapped formula labels would make them at some narrower width (height-for-width).
class FixedRowsGrid : public QGridLayout {
public:
    using QGridLayout::QGridLayout;
    bool hasHeightForWidth() const override { return false; }
};

} // namespace

PlaygroundPage::PlaygroundPage(QWidget* parent) : QWidget(parent), m_model(new PlaygroundModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 8);
    layout->setSpacing(6);
    layout->addWidget(buildSetup());
    auto* body = new QHBoxLayout;
    body->setSpacing(10);
    body->addWidget(buildInputs());
    body->addWidget(buildStages(), 1);
    layout->addLayout(body, 1);
    connect(m_model, &PlaygroundModel::changed, this, &PlaygroundPage::refresh);
    connect(m_model, &PlaygroundModel::focusChanged, this, &PlaygroundPage::refresh);
    refresh();
}

StagePanel* PlaygroundPage::stagePanel(Stage stage) const {
    return m_stages[static_cast<size_t>(stage)];
}
HeatmapView* PlaygroundPage::stageView(Stage stage) const {
    return stagePanel(stage)->view();
}
MatrixEditor* PlaygroundPage::editor(Input input) const {
    if (input == Input::OutputProjection) return m_multiHead->projectionEditor();
    return m_editors[static_cast<size_t>(input)];
}
QString PlaygroundPage::explanationText() const {
    return m_explanation->text();
}

// --- construction ----------------------------------------------------------------------------

QWidget* PlaygroundPage::buildSetup() {
    auto* setup = panelFrame(this, QStringLiteral("setupBar"));
    auto* row = new FlowLayout(setup); // wraps in a narrow window
    row->setContentsMargins(10, 5, 10, 5);
    row->setSpacing(6);
    m_preset = new QComboBox(setup);
    m_preset->setObjectName(QStringLiteral("preset"));
    m_preset->addItem(tr("Worked example"));
    m_preset->addItem(tr("Random"));
    m_preset->addItem(tr("Identity"));
    m_preset->setToolTip(tr("Fill Q, K and V from a preset"));
    m_seed = new QSpinBox(setup);
    m_seed->setObjectName(QStringLiteral("seed"));
    m_seed->setRange(0, 99999);
    m_seed->setPrefix(tr("seed "));
    m_seed->setToolTip(tr("Seed of the random preset: the same seed gives the same matrices"));
    auto* reset = new QToolButton(setup);
    reset->setText(QStringLiteral("↺"));
    reset->setToolTip(tr("Apply the preset again (undo your edits)"));
    m_edited = new QLabel(tr("<i>edited</i>"), setup);
    m_edited->setStyleSheet(QStringLiteral("color: palette(dark);"));
    row->addWidget(new QLabel(tr("Preset"), setup));
    row->addWidget(m_preset);
    row->addWidget(m_seed);
    row->addWidget(reset);
    row->addWidget(m_edited);
    row->addSpacing(10);
    m_tokens = new QLineEdit(setup);
    m_tokens->setObjectName(QStringLiteral("tokens"));
    m_tokens->setToolTip(tr("One token per word; the number of tokens sets the sequence length n"));
    m_tokens->setMinimumWidth(150);
    row->addWidget(new QLabel(tr("Tokens"), setup));
    row->addWidget(m_tokens, 1);
    row->addSpacing(10);
    m_length = new QSpinBox(setup);
    m_length->setObjectName(QStringLiteral("sequenceLength"));
    m_length->setRange(1, PlaygroundModel::kMaxLength);
    m_length->setPrefix(QStringLiteral("n = "));
    m_length->setToolTip(tr("Sequence length: number of tokens (rows of Q, K, V)"));
    m_dModel = new QSpinBox(setup);
    m_dModel->setObjectName(QStringLiteral("dModel"));
    m_dModel->setRange(1, PlaygroundModel::kMaxDModel);
    m_dModel->setPrefix(QStringLiteral("d_model = "));
    m_dModel->setToolTip(tr("Width of the query and key vectors (columns of Q and K)"));
    m_dValue = new QSpinBox(setup);
    m_dValue->setObjectName(QStringLiteral("dValue"));
    m_dValue->setRange(1, PlaygroundModel::kMaxDModel);
    m_dValue->setPrefix(QStringLiteral("d_v = "));
    m_dValue->setToolTip(
        tr("Width of the value vectors (columns of V) and so of the output; may differ from d_model"));
    m_heads = new QComboBox(setup);
    m_heads->setObjectName(QStringLiteral("heads"));
    m_heads->setToolTip(tr("Number of heads h; only common divisors of d_model and d_v split both evenly"));
    m_dK = new QLabel(setup);
    row->addWidget(m_length);
    row->addWidget(m_dModel);
    row->addWidget(m_dValue);
    row->addSpacing(10);
    row->addWidget(new QLabel(tr("Heads"), setup));
    row->addWidget(m_heads);
    row->addWidget(m_dK);

    connect(m_preset, &QComboBox::activated, this, [this](int index) {
        if (index == 0)
            m_model->applyWorkedExample();
        else if (index == 1)
            m_model->applyRandom(m_seed->value());
        else
            m_model->applyIdentity();
    });
    connect(reset, &QToolButton::clicked, this,
            [this] { emit m_preset->activated(m_preset->currentIndex()); });
    connect(m_seed, &QSpinBox::valueChanged, this, [this](int seed) { m_model->applyRandom(seed); });
    connect(m_tokens, &QLineEdit::textEdited, this, [this](const QString& text) {
        const QStringList tokens = splitTokens(text);
        if (tokens.isEmpty()) return;
        m_model->setSequenceLength(
            static_cast<int>(std::min<qsizetype>(tokens.size(), PlaygroundModel::kMaxLength)));
        m_model->setTokens(tokens);
    });
    connect(m_length, &QSpinBox::valueChanged, m_model, &PlaygroundModel::setSequenceLength);
    connect(m_dModel, &QSpinBox::valueChanged, m_model, &PlaygroundModel::setDModel);
    connect(m_dValue, &QSpinBox::valueChanged, m_model, &PlaygroundModel::setDValue);
    connect(m_heads, &QComboBox::activated, this,
            [this](int index) { m_model->setHeads(m_heads->itemData(index).toInt()); });
    return setup;
}

// Mask mode, padding count and the clickable mask grid.
QWidget* PlaygroundPage::buildMaskBox(QWidget* panel) {
    auto* maskBox = new QGroupBox(tr("Mask"), panel);
    // Controls above the grid, so that the grid has the panel's whole width (16 labelled rows).
    auto* maskLayout = new QVBoxLayout(maskBox);
    maskLayout->setContentsMargins(8, 6, 8, 6);
    auto* maskControls = new QHBoxLayout;
    m_maskMode = new QComboBox(maskBox);
    m_maskMode->setObjectName(QStringLiteral("maskMode"));
    m_maskMode->addItem(tr("None"), static_cast<int>(MaskMode::None));
    m_maskMode->addItem(tr("Causal"), static_cast<int>(MaskMode::Causal));
    m_maskMode->addItem(tr("Padding"), static_cast<int>(MaskMode::Padding));
    m_maskMode->addItem(tr("Custom"), static_cast<int>(MaskMode::Custom));
    m_maskMode->setItemData(1, tr("Each query sees itself and earlier tokens only (decoders)"),
                            Qt::ToolTipRole);
    m_maskMode->setItemData(2, tr("The last keys are padding and hidden from every query"), Qt::ToolTipRole);
    m_maskMode->setItemData(3, tr("Click cells of the grid to block or allow single pairs"), Qt::ToolTipRole);
    m_padding = new QSpinBox(maskBox);
    m_padding->setObjectName(QStringLiteral("paddingCount"));
    m_padding->setPrefix(tr("padded keys: "));
    m_padding->setToolTip(tr("Number of padded keys at the end of the sequence"));
    maskControls->addWidget(m_maskMode);
    maskControls->addWidget(m_padding);
    maskControls->addStretch(1);
    m_maskHint = hint(tr("1 = may attend, 0 = blocked. Click a cell to toggle it."), maskBox);
    m_maskView = new HeatmapView(maskBox);
    m_maskView->setObjectName(QStringLiteral("maskGrid"));
    m_maskView->setColorMap(ColorMap::Grey);
    m_maskView->setRangeMode(HeatmapView::RangeMode::Fixed);
    m_maskView->setColorBarVisible(false);
    m_maskView->setValueDecimals(0);
    m_maskView->setMaskedText(QStringLiteral("0"));
    m_maskView->setAxisTitles(tr("query"), tr("key"));
    m_maskView->setMaximumCellSize(24);
    m_maskView->setFixedHeight(150);
    maskLayout->addLayout(maskControls);
    maskLayout->addWidget(m_maskHint);
    maskLayout->addWidget(m_maskView);
    return maskBox;
}

// One editor per input, Q, K and V; selecting a row focuses that token.
QWidget* PlaygroundPage::buildInputEditors(QWidget* panel) {
    auto* inputs = new QGroupBox(tr("Inputs (one row per token)"), panel);
    auto* inputsLayout = new QVBoxLayout(inputs);
    inputsLayout->setContentsMargins(8, 6, 8, 6);
    inputsLayout->setSpacing(3);
    const std::array<QString, 3> captions = {tr("<b>Q</b> queries: what each token looks for"),
                                             tr("<b>K</b> keys: what each token offers"),
                                             tr("<b>V</b> values: what each token passes on")};
    for (Input input : {Input::Query, Input::Key, Input::Value}) {
        const auto i = static_cast<size_t>(input);
        inputsLayout->addWidget(new QLabel(captions[i], inputs));
        m_editors[i] = new MatrixEditor(m_model, input, inputs);
        inputsLayout->addWidget(m_editors[i]);
        // Selecting a row of Q focuses that query; a row of K or V focuses that key.
        connect(m_editors[i]->selectionModel(), &QItemSelectionModel::currentChanged, this,
                [this, input](const QModelIndex& current) {
                    if (!current.isValid()) return;
                    if (input == Input::Query)
                        m_model->setFocus(current.row(), m_model->focusKey());
                    else
                        m_model->setFocus(m_model->focusQuery(), current.row());
                });
    }
    inputs->setToolTip(tr("Double-click or type to edit; arrows and the mouse wheel change a value live. "
                          "Column colours show which head owns a feature."));
    return inputs;
}

QWidget* PlaygroundPage::buildInputs() {
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFixedWidth(384);
    auto* panel = new QWidget(scroll);
    auto* column = new QVBoxLayout(panel);
    column->setContentsMargins(0, 0, 6, 0);
    column->setSpacing(8);

    auto* heading = new QLabel(tr("<b style='font-size:12pt'>Scaled dot-product attention</b>"), panel);
    column->addWidget(heading);
    column->addWidget(hint(tr("Edit Q, K, V or the mask: every stage updates live. Click any cell to follow "
                              "one number through the computation."),
                           panel));

    column->addWidget(buildMaskBox(panel));

    column->addWidget(buildInputEditors(panel));
    column->addStretch(1);
    scroll->setWidget(panel);

    // Wiring of the input controls.
    connect(m_maskMode, &QComboBox::activated, this, [this](int index) {
        m_model->setMaskMode(static_cast<MaskMode>(m_maskMode->itemData(index).toInt()));
    });
    connect(m_padding, &QSpinBox::valueChanged, m_model, &PlaygroundModel::setPaddingCount);
    connect(m_maskView, &HeatmapView::cellClicked, m_model, &PlaygroundModel::toggleMaskCell);
    return scroll;
}

// Toolbar: heads strip, colours, range, value weighting, annotations (wrapping in a narrow window).
QLayout* PlaygroundPage::buildStageToolbar(QWidget* area) {
    auto* bar = new FlowLayout;
    m_headRow = new QWidget(area);
    auto* headRow = new QHBoxLayout(m_headRow);
    headRow->setContentsMargins(0, 0, 0, 0);
    headRow->addWidget(new QLabel(tr("<b>Heads</b> (weights)"), m_headRow));
    m_headStrip = new HeadStrip(m_headRow);
    headRow->addWidget(m_headStrip);
    bar->addWidget(m_headRow, 1);
    m_colorMap = new QComboBox(area);
    m_colorMap->setObjectName(QStringLiteral("colorMap"));
    for (ColorMap map : allColorMaps())
        m_colorMap->addItem(colorMapDisplayName(map), static_cast<int>(map));
    m_colorMap->setToolTip(tr("Colour map of the stage heatmaps"));
    m_weightsAuto = new QCheckBox(tr("Auto range for weights"), area);
    m_weightsAuto->setObjectName(QStringLiteral("weightsAutoRange"));
    m_weightsAuto->setToolTip(tr("Off: weights use the fixed range 0…1. On: their own min…max."));
    m_valueWeighted =
        valueWeightedBox(area, tr("key"),
                         tr("Stage ④ so: its columns of V through the head's rows of W_O. The output "
                            "⑤ is still A·V."),
                         tr("Value-weighted ④"));
    connect(m_valueWeighted, &QCheckBox::toggled, this, &PlaygroundPage::refresh);
    m_annotations = new QCheckBox(tr("Values on cells"), area);
    m_annotations->setObjectName(QStringLiteral("annotations"));
    m_annotations->setChecked(true);
    bar->addWidget(new QLabel(tr("Colours"), area));
    bar->addWidget(m_colorMap);
    bar->addSpacing(8);
    bar->addWidget(m_weightsAuto);
    bar->addWidget(m_valueWeighted);
    bar->addWidget(m_annotations);
    return bar;
}

// The "follow one number" card beside the stages.
QWidget* PlaygroundPage::buildExplainCard(QWidget* area) {
    auto* explainCard = new QFrame(area);
    explainCard->setObjectName(QStringLiteral("explainCard"));
    // A fixed light card with dark text, readable under a dark palette as well.
    explainCard->setStyleSheet(QStringLiteral(
        "QFrame#explainCard { background: palette(alternate-base); border: 1px solid palette(mid);"
        " border-radius: 6px; }"));
    explainCard->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    auto* explainLayout = new QVBoxLayout(explainCard);
    explainLayout->setContentsMargins(10, 8, 10, 8);
    auto* explainTitle = new QLabel(tr("<b style='font-size:11pt'>Follow one number</b>"), explainCard);
    m_explanation = new QLabel(explainCard);
    m_explanation->setObjectName(QStringLiteral("explanation"));
    m_explanation->setWordWrap(true);
    m_explanation->setTextFormat(Qt::RichText);
    m_explanation->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_explanation->setTextInteractionFlags(Qt::TextSelectableByMouse);
    explainLayout->addWidget(explainTitle);
    // The arithmetic grows with n and d_model: it scrolls inside the card (and its wrapped height does not
    // stretch the stages grid).
    auto* explainScroll = new QScrollArea(explainCard);
    explainScroll->setWidgetResizable(true);
    explainScroll->setFrameShape(QFrame::NoFrame);
    explainScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    explainScroll->setStyleSheet(
        QStringLiteral("QScrollArea, QScrollArea > QWidget > QWidget { background: transparent; }"));
    explainScroll->setWidget(m_explanation);
    explainLayout->addWidget(explainScroll, 1);
    explainLayout->addWidget(
        hint(tr("Click a cell or a label in any stage to follow another pair."), explainCard));
    return explainCard;
}

QWidget* PlaygroundPage::buildStages() {
    auto* area = new QWidget(this);
    auto* column = new QVBoxLayout(area);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(8);

    column->addLayout(buildStageToolbar(area));

    // The five stages, then the explanation, in a 3 × 2 grid read left to right; the second tab the rest of
    // the multi-head formula (every head, concatenation, W_O).
    m_stageTabs = new QTabWidget(area);
    m_stageTabs->setObjectName(QStringLiteral("stageTabs"));
    m_stageTabs->setDocumentMode(true);
    auto* stagesTab = new QWidget(m_stageTabs);
    auto* grid = new FixedRowsGrid(stagesTab);
    grid->setContentsMargins(0, 6, 0, 0);
    grid->setSpacing(8);
    const std::array<QString, 5> titles = {tr("① Scores"), tr("② Scaled"), tr("③ Masked"),
                                           tr("④ Weights (softmax)"), tr("⑤ Output")};
    for (Stage stage : kStages) {
        const auto i = static_cast<size_t>(stage);
        auto* panel = new StagePanel(titles[i], area);
        // Equal thirds whatever the contents: the grid's stretch factors alone decide the widths.
        panel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
        HeatmapView* view = panel->view();
        view->setObjectName(QStringLiteral("stage%1").arg(i));
        // Every colour bar of the page under its grid, low values left: the narrow stage panels keep their
        // width for the cells (and their values).
        view->setColorBarPlacement(HeatmapFrame::Bar::Below);
        if (stage == Stage::Output) {
            view->setAxisTitles(tr("query"), tr("feature"));
            view->setRangeMode(HeatmapView::RangeMode::Auto);
        } else {
            view->setAxisTitles(tr("query"), tr("key"));
            view->setRangeMode(stage == Stage::Weights ? HeatmapView::RangeMode::Fixed
                                                       : HeatmapView::RangeMode::Auto);
            connect(view, &HeatmapView::cellClicked, m_model, &PlaygroundModel::setFocus);
            connect(view, &HeatmapView::columnSelected, this,
                    [this](int col) { m_model->setFocus(m_model->focusQuery(), col); });
        }
        if (stage == Stage::Weights) view->setMaskedText(QStringLiteral("0"));
        connect(view, &HeatmapView::rowSelected, this,
                [this](int row) { m_model->setFocus(row, m_model->focusKey()); });
        if (stage == Stage::Output)
            connect(view, &HeatmapView::cellClicked, this,
                    [this](int row, int) { m_model->setFocus(row, m_model->focusKey()); });
        m_stages[i] = panel;
        grid->addWidget(panel, static_cast<int>(i) / 3, static_cast<int>(i) % 3);
    }
    m_explainCard = buildExplainCard(area);
    grid->addWidget(m_explainCard, 1, 2);
    m_stageGrid = grid;
    reflowStages(3);
    // Each tab scrolls when its maps need more room than the window has (every label kept at 16 tokens).
    auto scrolled = [this](QWidget* content) {
        auto* scroll = new QScrollArea(m_stageTabs);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setWidget(content);
        return scroll;
    };
    m_stagesScroll = scrolled(stagesTab);
    m_stagesScroll->viewport()->installEventFilter(this); // reflow the grid when the width changes
    m_stageTabs->addTab(m_stagesScroll, tr("Five stages of one head"));
    m_multiHead = new MultiHeadPanel(m_model, m_stageTabs);
    m_stageTabs->addTab(scrolled(m_multiHead), tr("All heads → Concat · W_O"));
    column->addWidget(m_stageTabs, 1);

    connect(m_headStrip, &HeadStrip::headClicked, m_model, &PlaygroundModel::setSelectedHead);
    connect(m_colorMap, &QComboBox::activated, this, [this](int index) {
        setAllColorMaps(static_cast<ColorMap>(m_colorMap->itemData(index).toInt()));
    });
    connect(m_weightsAuto, &QCheckBox::toggled, this, [this](bool on) {
        stageView(Stage::Weights)
            ->setRangeMode(on ? HeatmapView::RangeMode::Auto : HeatmapView::RangeMode::Fixed);
    });
    connect(m_annotations, &QCheckBox::toggled, this, [this](bool on) {
        for (StagePanel* panel : m_stages)
            panel->view()->setAnnotationsEnabled(on);
        m_multiHead->setAnnotationsEnabled(on);
    });
    return area;
}

// Three stages per row while they fit the tab's width with every label, else two (or one): the tab then
// scrolls down instead of sideways.
int PlaygroundPage::stageColumns() const {
    const int width = m_stagesScroll->viewport()->width();
    const int spacing = m_stageGrid->horizontalSpacing();
    for (int columns = 3; columns > 1; --columns)
        if (columns * m_widestStage + (columns - 1) * spacing <= width) return columns;
    return 1;
}

void PlaygroundPage::reflowStages(int columns) {
    if (columns == m_stageColumns) return;
    m_stageColumns = columns;
    QList<QWidget*> cards;
    for (StagePanel* panel : m_stages)
        cards << panel;
    cards << m_explainCard;
    for (QWidget* card : cards)
        m_stageGrid->removeWidget(card);
    for (int i = 0; i < cards.size(); ++i)
        m_stageGrid->addWidget(cards[i], i / columns, i % columns);
    for (int c = 0; c < 3; ++c)
        m_stageGrid->setColumnStretch(c, c < columns ? 1 : 0);
    for (int r = 0; r < 6; ++r)
        m_stageGrid->setRowStretch(r, r < (cards.size() + columns - 1) / columns ? 1 : 0);
}

bool PlaygroundPage::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_stagesScroll->viewport() && event->type() == QEvent::Resize)
        reflowStages(stageColumns());
    return QWidget::eventFilter(watched, event);
}

void PlaygroundPage::setAllColorMaps(ColorMap map) {
    for (StagePanel* panel : m_stages)
        panel->view()->setColorMap(map);
    m_headStrip->setColorMap(map);
    m_multiHead->setColorMap(map);
}

// --- model → view ----------------------------------------------------------------------------

void PlaygroundPage::refresh() {
    syncControls();
    const PlaygroundModel& m = *m_model;
    const QStringList tokens = m.tokens();
    const int head = m.selectedHead();
    const int fq = m.focusQuery(), fk = m.focusKey();
    const RowMatrix keep = m.effectiveMask();
    const bool masking = m.maskMode() != MaskMode::None;

    int widest = 0;
    for (Stage stage : kStages) {
        StagePanel* panel = stagePanel(stage);
        HeatmapView* view = panel->view();
        if (stage == Stage::Output) {
            QStringList features;
            for (int c = 0; c < m.dV(); ++c)
                features << QString::number(head * m.dV() + c);
            view->setMatrix(m.stage(stage, head), tokens, features);
            view->selectRow(fq);
        } else {
            const bool weighted = stage == Stage::Weights && m_valueWeighted->isChecked();
            view->setMatrix(weighted ? m.valueWeightedWeights(head) : m.stage(stage, head), tokens, tokens);
            view->selectRow(fq);
            view->setMarkedCell({fq, fk});
        }
        if (stage == Stage::Masked || stage == Stage::Weights) {
            if (!masking) {
                view->clearMask();
            } else {
                RowMatrix shown = keep;
                // A fully masked row gets uniform weights, not zeros: do not draw them as masked.
                if (stage == Stage::Weights)
                    for (int row : m.fullyMaskedRows())
                        shown.row(row).setOnes();
                view->setMask(shown);
            }
        }
        // Never cells smaller than a label line: the tab scrolls instead, so every row and column keeps its
        // label (values that do not fit on the cells are in the hover tooltip).
        view->setMinimumSize(view->labelledMinimumSize());
        panel->setMinimumSize(panel->layout()->minimumSize()); // the panel's size policy alone ignores it
        widest = std::max(widest, panel->minimumWidth());
        const bool weighted = stage == Stage::Weights && m_valueWeighted->isChecked();
        panel->setFormula(weighted ? valueWeightedFormula() : stageFormula(m, stage));
        panel->setDetail(weighted ? valueWeightedDetail(m) : stageDetail(m, stage));
    }

    m_widestStage = widest;
    reflowStages(stageColumns());

    m_maskView->setMatrix(keep, tokens, tokens);
    m_maskView->setFixedHeight(std::max(150, m_maskView->labelledMinimumSize().height()));
    m_maskView->setMask(keep);
    m_maskView->setMarkedCell({fq, fk});

    m_headRow->setVisible(m.heads() > 1);
    if (m.heads() > 1) {
        std::vector<RowMatrix> perHead;
        for (int h = 0; h < m.heads(); ++h)
            perHead.push_back(m.stage(Stage::Weights, h));
        m_headStrip->setWeights(perHead);
        m_headStrip->setSelectedHead(head);
    }
    m_explanation->setText(explainFocus(m));
    m_multiHead->refresh();
}

void PlaygroundPage::syncControls() {
    const PlaygroundModel& m = *m_model;
    const QSignalBlocker b1(m_preset), b2(m_seed), b3(m_length), b4(m_dModel), b5(m_heads), b6(m_maskMode),
        b7(m_padding), b8(m_dValue);
    switch (m.preset()) {
    case PlaygroundModel::Preset::WorkedExample:
        m_preset->setCurrentIndex(0);
        break;
    case PlaygroundModel::Preset::Random:
        m_preset->setCurrentIndex(1);
        break;
    case PlaygroundModel::Preset::Identity:
        m_preset->setCurrentIndex(2);
        break;
    case PlaygroundModel::Preset::Edited:
        break;
    }
    m_edited->setVisible(m.preset() == PlaygroundModel::Preset::Edited);
    m_seed->setValue(m.seed());
    if (splitTokens(m_tokens->text()) != m.tokens()) m_tokens->setText(m.tokens().join(QLatin1Char(' ')));
    m_length->setValue(m.sequenceLength());
    m_dModel->setValue(m.dModel());
    m_dValue->setValue(m.dValue());
    m_heads->clear();
    for (int h : PlaygroundModel::validHeadCounts(m.dModel(), m.dValue()))
        m_heads->addItem(QString::number(h), h);
    m_heads->setCurrentIndex(m_heads->findData(m.heads()));
    QString widths =
        tr("d<sub>k</sub> = d_model / h = %1 / %2 = <b>%3</b>").arg(m.dModel()).arg(m.heads()).arg(m.dK());
    if (m.dValue() != m.dModel() || m.heads() > 1)
        widths += tr(" · d_v / h = %1 / %2 = <b>%3</b>").arg(m.dValue()).arg(m.heads()).arg(m.dV());
    m_dK->setText(widths);
    m_maskMode->setCurrentIndex(m_maskMode->findData(static_cast<int>(m.maskMode())));
    m_padding->setRange(m.sequenceLength() > 1 ? 1 : 0, std::max(0, m.sequenceLength() - 1));
    m_padding->setValue(m.paddingCount());
    m_padding->setEnabled(m.maskMode() == MaskMode::Padding && m.sequenceLength() > 1);
    const QList<int> blocked = m.fullyMaskedRows();
    if (!blocked.isEmpty())
        m_maskHint->setText(
            tr("<span style='color:%2'>Row %1 blocks every key: its weights become uniform.</span>")
                .arg(m.tokens().value(blocked.front()).toHtmlEscaped(), errorColor(palette()).name()));
    else
        m_maskHint->setText(tr("1 = may attend, 0 = blocked. Click a cell to toggle it."));
}

QJsonObject PlaygroundPage::saveSession() const {
    QJsonObject s;
    PlaygroundSession::writeModel(*m_model, s);
    s.insert("tab", m_stageTabs->currentIndex());
    s.insert("color_map", colorMapId(static_cast<ColorMap>(m_colorMap->currentData().toInt())));
    s.insert("weights_auto_range", m_weightsAuto->isChecked());
    s.insert("value_weighted", m_valueWeighted->isChecked());
    return s;
}

QString PlaygroundPage::checkSession(const QJsonObject& state) const {
    SessionReader r(state, QStringLiteral("pages.attention"));
    (void)PlaygroundSession::parse(state, r);
    return r.error();
}

void PlaygroundPage::restoreSession(const QJsonObject& state) {
    SessionReader r(state, QStringLiteral("pages.attention"));
    const PlaygroundSession s = PlaygroundSession::parse(state, r);
    if (!r.ok()) return; // checked before: not reached
    s.applyTo(*m_model);
    m_stageTabs->setCurrentIndex(std::min(s.tab, m_stageTabs->count() - 1));
    const int mapIndex = m_colorMap->findData(static_cast<int>(s.colorMap));
    if (mapIndex >= 0) m_colorMap->setCurrentIndex(mapIndex);
    m_weightsAuto->setChecked(s.weightsAuto);
    m_valueWeighted->setChecked(s.valueWeighted);
}

} // namespace attnlens::ui
