#include "ui/widgets/heads_lens.h"

#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/number_item.h"
#include "ui/widgets/page_parts.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace attnlens::ui {

namespace {

QString statisticTitle(HeadStatistic s) {
    switch (s) {
    case HeadStatistic::Entropy:
        return QObject::tr("Entropy (normalised)");
    case HeadStatistic::Distance:
        return QObject::tr("Mean attention distance");
    case HeadStatistic::Sink:
        return QObject::tr("Share on sink tokens");
    case HeadStatistic::Delimiter:
        return QObject::tr("Share on punctuation and line breaks");
    case HeadStatistic::Local:
        return QObject::tr("Share on the local window (±4)");
    case HeadStatistic::Diagonal:
        return QObject::tr("Share on itself (diagonal)");
    case HeadStatistic::Previous:
        return QObject::tr("Share on the previous token");
    case HeadStatistic::Alignment:
        return QObject::tr("Agreement with the word alignment");
    }
    return {};
}

// Every row's first item carries its head: (layer, head) in these roles.
constexpr int kLayerRole = Qt::UserRole + 1;
constexpr int kHeadRole = Qt::UserRole + 2;

} // namespace

QString HeadsLensView::describe(HeadStatistic s, const QString& unit) {
    switch (s) {
    case HeadStatistic::Entropy:
        return tr(
            "How spread out each row is: 0 = every query looks at one key, 1 = evenly at all it may see.");
    case HeadStatistic::Distance:
        return tr("How far queries look, in %1, weighted by attention: small = local (neighbours), large = "
                  "global.")
            .arg(unit);
    case HeadStatistic::Sink:
        return tr("The share of attention parked on special tokens (</s>, the start token, CLS): a head with "
                  "nothing "
                  "to do often looks there.");
    case HeadStatistic::Delimiter:
        return tr(
            "The share of attention on punctuation and line breaks (\".\", \",\", \"\\n\"): the second place "
            "heads park attention in long texts.");
    case HeadStatistic::Local:
        return tr("The share on the 4 %1 either side of the query and itself (text self-attention only): "
                  "local "
                  "heads score near 1.")
            .arg(unit);
    case HeadStatistic::Diagonal:
        return tr("The share each token gives itself (self-attention only).");
    case HeadStatistic::Previous:
        return tr(
            "The share each token gives the one before it: \"previous-token heads\" (self-attention only).");
    case HeadStatistic::Alignment:
        return tr("How often a target token's strongest source token is the word it translates (needs an "
                  "alignment).");
    }
    return {};
}

HeadsLensView::HeadsLensView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    auto* top = new QHBoxLayout;
    m_statisticBox = new QComboBox(this);
    m_statisticBox->setObjectName(QStringLiteral("headsStatistic"));
    for (HeadStatistic s : kAllHeadStatistics) {
        m_statisticBox->addItem(statisticTitle(s), static_cast<int>(s));
        m_statisticBox->setItemData(m_statisticBox->count() - 1, describe(s, tr("tokens")), Qt::ToolTipRole);
    }
    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("headsCaption"));
    mute(m_caption);
    m_caption->setWordWrap(true); // a long caption wraps instead of widening the page (1024-px windows)
    top->addWidget(new QLabel(tr("Colour by"), this));
    top->addWidget(m_statisticBox);
    top->addSpacing(10);
    top->addWidget(m_caption, 1);
    layout->addLayout(top);
    m_meaning = hint(QString(), this);
    layout->addWidget(m_meaning);
    // Ablation: which heads are off, and the two actions (hidden unless the page can re-run).
    m_ablationRow = new QWidget(this);
    auto* ablation = new QHBoxLayout(m_ablationRow);
    ablation->setContentsMargins(0, 0, 0, 0);
    m_ablationLabel = new QLabel(m_ablationRow);
    m_ablationLabel->setObjectName(QStringLiteral("headsAblation"));
    m_ablationLabel->setWordWrap(true);
    auto* allOn = new QPushButton(tr("Switch all on"), m_ablationRow);
    allOn->setObjectName(QStringLiteral("headsAllOn"));
    auto* rank = new QPushButton(tr("Rank by importance"), m_ablationRow);
    rank->setObjectName(QStringLiteral("headsRank"));
    rank->setToolTip(
        tr("Switch each head off alone and measure how much the original output's log-probability "
           "drops (one run per head, on the worker)"));
    ablation->addWidget(m_ablationLabel, 1);
    ablation->addWidget(allOn);
    ablation->addWidget(rank);
    layout->addWidget(m_ablationRow);
    m_ablationRow->hide();
    connect(allOn, &QPushButton::clicked, this, [this] { emit ablationRequested({}); });
    connect(rank, &QPushButton::clicked, this, &HeadsLensView::importanceRequested);

    auto* split = new QSplitter(Qt::Horizontal, this);
    m_grid = new HeatmapView(split);
    m_grid->setObjectName(QStringLiteral("headsGrid"));
    m_grid->setAxisTitles(tr("layer"), tr("head"));
    m_grid->setRangeMode(HeatmapView::RangeMode::Auto);
    m_grid->setColorBarPlacement(HeatmapFrame::Bar::Right);
    m_grid->setMaximumCellSize(56);
    m_grid->setToolTip(tr("Click a head to open it in the matrix"));
    m_table = new QTableWidget(split);
    m_table->setObjectName(QStringLiteral("headsTable"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->setToolTip(tr("Click a column header to sort; double-click a row to open that head"));
    split->addWidget(m_grid);
    split->addWidget(m_table);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    connect(m_statisticBox, &QComboBox::activated, this, [this](int index) {
        const int id = m_statisticBox->itemData(index).toInt();
        if (id < 0)
            showImportance();
        else
            setStatistic(static_cast<HeadStatistic>(id));
    });
    connect(m_table, &QTableWidget::itemChanged, this, &HeadsLensView::onTableItemChanged);
    connect(m_grid, &HeatmapView::cellClicked, this,
            [this](int layer, int head) { emit headActivated(layer, head); });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        const QTableWidgetItem* first = m_table->item(row, 0);
        emit headActivated(first->data(kLayerRole).toInt(), first->data(kHeadRole).toInt());
    });
    clear(tr("Translate a sentence or open a picture: the statistics of its heads appear here."));
}

QString HeadsLensView::caption() const {
    return m_caption->text();
}

void HeadsLensView::setStats(const HeadStats& stats, const QString& caption, const QString& distanceUnit) {
    const bool anotherModel = stats.layers() != m_stats.layers() || stats.heads() != m_stats.heads();
    m_stats = stats;
    if (anotherModel) clearImportance();
    m_hasStats = stats.layers() > 0;
    m_unit = distanceUnit;
    m_caption->setText(caption);
    for (int i = 0; i < m_statisticBox->count(); ++i)
        m_statisticBox->setItemData(
            i, describe(static_cast<HeadStatistic>(m_statisticBox->itemData(i).toInt()), m_unit),
            Qt::ToolTipRole);
    refreshGrid();
    refreshTable();
}

void HeadsLensView::clear(const QString& message) {
    m_hasStats = false;
    m_stats = {};
    m_caption->setText(message);
    m_grid->setMatrix(RowMatrix());
    m_table->clear();
    m_table->setRowCount(0);
    m_table->setColumnCount(0);
}

void HeadsLensView::setStatistic(HeadStatistic statistic) {
    m_statistic = statistic;
    m_showImportance = false;
    m_statisticBox->setCurrentIndex(m_statisticBox->findData(static_cast<int>(statistic)));
    refreshGrid();
}

void HeadsLensView::setCurrentHead(int layer, int head) {
    m_layer = layer;
    m_head = head;
    m_grid->setMarkedCell({layer, head});
}

void HeadsLensView::refreshGrid() {
    m_meaning->setText(m_showImportance ? m_importanceText : describe(m_statistic, m_unit));
    if (!m_hasStats) return;
    const RowMatrix& values = m_showImportance ? m_importance : m_stats.get(m_statistic);
    QStringList layers, heads;
    for (int l = 0; l < m_stats.layers(); ++l)
        layers << QString::number(l);
    for (int h = 0; h < m_stats.heads(); ++h)
        heads << QString::number(h);
    if (values.size() == 0 || values.array().isNaN().all()) {
        m_grid->setMatrix(RowMatrix());
        m_meaning->setText(describe(m_statistic, m_unit) + tr(" — does not apply to this attention."));
        return;
    }
    // NaN cells (e.g. a row with no positions) and switched-off heads are hatched.
    RowMatrix keep = RowMatrix::Ones(values.rows(), values.cols());
    RowMatrix shown = values;
    for (Eigen::Index r = 0; r < values.rows(); ++r)
        for (Eigen::Index c = 0; c < values.cols(); ++c)
            if (std::isnan(values(r, c))) keep(r, c) = 0.0f, shown(r, c) = 0.0f;
    if (!m_showImportance)
        for (const auto& [l, h] : m_ablated)
            if (l < keep.rows() && h < keep.cols()) keep(l, h) = 0.0f;
    m_grid->setMaskedText(tr("off"));
    m_grid->setValueDecimals(m_statistic == HeadStatistic::Distance && !m_showImportance ? 1 : 2);
    m_grid->setMatrix(shown, layers, heads);
    if ((keep.array() == 0).any())
        m_grid->setMask(keep);
    else
        m_grid->clearMask();
    if (m_layer >= 0) m_grid->setMarkedCell({m_layer, m_head});
}

void HeadsLensView::refreshTable() {
    m_rebuilding = true;
    m_table->setSortingEnabled(false);
    m_table->clear();
    QStringList headers;
    if (m_ablationEnabled) headers << tr("off");
    headers << tr("layer") << tr("head");
    std::vector<HeadStatistic> shown;
    for (HeadStatistic s : kAllHeadStatistics)
        if (!m_stats.get(s).array().isNaN().all()) {
            shown.push_back(s);
            headers << QString::fromLatin1(headStatisticId(s).data(),
                                           static_cast<int>(headStatisticId(s).size()));
        }
    const bool importance = m_importance.rows() == m_stats.layers() &&
                            m_importance.cols() == m_stats.heads() && m_importance.size() > 0;
    if (importance) headers << tr("importance");
    m_table->setColumnCount(static_cast<int>(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    // A layer with fewer heads than the widest (U-Net levels) has NaN entropy for the heads it lacks: no row.
    m_table->setRowCount(static_cast<int>((!m_stats.entropy.array().isNaN()).count()));
    int row = 0;
    for (int l = 0; l < m_stats.layers(); ++l)
        for (int h = 0; h < m_stats.heads(); ++h) {
            if (std::isnan(m_stats.entropy(l, h))) continue;
            int col = 0;
            const bool isOff =
                std::find(m_ablated.begin(), m_ablated.end(), std::pair(l, h)) != m_ablated.end();
            if (m_ablationEnabled) {
                auto* off = new QTableWidgetItem;
                off->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled | Qt::ItemIsSelectable);
                off->setCheckState(isOff ? Qt::Checked : Qt::Unchecked);
                off->setToolTip(tr("Switch head %1 of layer %2 off and run again").arg(h).arg(l));
                m_table->setItem(row, col++, off);
            }
            m_table->setItem(row, col++, new NumberItem(l, 0));
            m_table->setItem(row, col++, new NumberItem(h, 0));
            m_table->item(row, 0)->setData(kLayerRole, l);
            m_table->item(row, 0)->setData(kHeadRole, h);
            // A switched-off head's attention is not used (it reads as zeros): its statistics are "—", not
            // 0.000.
            for (HeadStatistic st : shown) {
                auto* item = new NumberItem(isOff ? std::nan("") : m_stats.get(st)(l, h),
                                            st == HeadStatistic::Distance ? 2 : 3);
                if (isOff) item->setToolTip(tr("Head %1 of layer %2 is switched off").arg(h).arg(l));
                m_table->setItem(row, col++, item);
            }
            if (importance) m_table->setItem(row, col++, new NumberItem(m_importance(l, h), 3));
            ++row;
        }
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
    m_rebuilding = false;
}

void HeadsLensView::onTableItemChanged(QTableWidgetItem* item) {
    if (m_rebuilding || !m_ablationEnabled || item->column() != 0) return;
    std::vector<std::pair<int, int>> off;
    for (int r = 0; r < m_table->rowCount(); ++r)
        if (const QTableWidgetItem* i = m_table->item(r, 0); i && i->checkState() == Qt::Checked)
            off.emplace_back(i->data(kLayerRole).toInt(), i->data(kHeadRole).toInt());
    std::sort(off.begin(), off.end());
    emit ablationRequested(off);
}

int HeadsLensView::tableRow(int layer, int head) const {
    for (int r = 0; r < m_table->rowCount(); ++r)
        if (const QTableWidgetItem* i = m_table->item(r, 0);
            i && i->data(kLayerRole).toInt() == layer && i->data(kHeadRole).toInt() == head)
            return r;
    return -1;
}

void HeadsLensView::setAblationEnabled(bool enabled) {
    m_ablationEnabled = enabled;
    m_ablationRow->setVisible(enabled);
    syncAblationLabel();
    if (m_hasStats) refreshTable();
}

void HeadsLensView::setAblated(const std::vector<std::pair<int, int>>& heads) {
    m_ablated = heads;
    syncAblationLabel();
    if (!m_hasStats) return;
    refreshGrid();
    refreshTable();
}

void HeadsLensView::syncAblationLabel() {
    if (m_ablated.empty()) {
        m_ablationLabel->setText(
            tr("All heads on. Tick \"off\" in the table to switch heads off and run again."));
        return;
    }
    QStringList names;
    for (const auto& [l, h] : m_ablated)
        names << QStringLiteral("%1:%2").arg(l).arg(h);
    const int n = static_cast<int>(m_ablated.size());
    m_ablationLabel->setText((n == 1 ? tr("<b>1 head off</b>") : tr("<b>%1 heads off</b>").arg(n)) +
                             tr(" (layer:head %1) — %2; the hatched cells are off.")
                                 .arg(names.join(QStringLiteral(", ")), m_ablationScope));
}

void HeadsLensView::setImportance(const RowMatrix& drop, const QString& description) {
    m_importance = drop;
    m_importanceText = description;
    if (m_statisticBox->findData(-1) < 0) {
        m_statisticBox->addItem(tr("Importance (drop with the head off)"), -1);
        m_statisticBox->setItemData(m_statisticBox->count() - 1, description, Qt::ToolTipRole);
    }
    refreshTable();
    showImportance();
}

void HeadsLensView::clearImportance() {
    if (!hasImportance()) return;
    m_importance = RowMatrix();
    if (const int i = m_statisticBox->findData(-1); i >= 0) m_statisticBox->removeItem(i);
    if (m_showImportance) setStatistic(HeadStatistic::Entropy);
    if (m_hasStats) refreshTable();
}

void HeadsLensView::showImportance() {
    if (!hasImportance()) return;
    m_showImportance = true;
    m_statisticBox->setCurrentIndex(m_statisticBox->findData(-1));
    refreshGrid();
}

} // namespace attnlens::ui
