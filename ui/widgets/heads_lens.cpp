#include "ui/widgets/heads_lens.h"

#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace attnlens::ui {

namespace {

QString statisticTitle(HeadStatistic s) {
    switch (s) {
    case HeadStatistic::Entropy: return QObject::tr("Entropy (normalised)");
    case HeadStatistic::Distance: return QObject::tr("Mean attention distance");
    case HeadStatistic::Sink: return QObject::tr("Share on sink tokens");
    case HeadStatistic::Diagonal: return QObject::tr("Share on itself (diagonal)");
    case HeadStatistic::Previous: return QObject::tr("Share on the previous token");
    case HeadStatistic::Alignment: return QObject::tr("Agreement with the word alignment");
    }
    return {};
}

// A table cell that sorts by its number (Qt::UserRole; NaN: "—", no number, sorted last).
class NumberItem : public QTableWidgetItem {
public:
    NumberItem(float v, int decimals) {
        if (std::isnan(v)) {
            setData(Qt::DisplayRole, QStringLiteral("—"));
        } else {
            setData(Qt::DisplayRole, QString::number(static_cast<double>(v), 'f', decimals));
            setData(Qt::UserRole, static_cast<double>(v));
        }
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override {
        const QVariant a = data(Qt::UserRole), b = other.data(Qt::UserRole);
        if (!a.isValid()) return false;
        if (!b.isValid()) return true;
        return a.toDouble() < b.toDouble();
    }
};

QTableWidgetItem* sortableNumber(float v, int decimals) { return new NumberItem(v, decimals); }

} // namespace

QString HeadsLensView::describe(HeadStatistic s, const QString& unit) {
    switch (s) {
    case HeadStatistic::Entropy:
        return tr("How spread out each row is: 0 = every query looks at one key, 1 = evenly at all it may see.");
    case HeadStatistic::Distance:
        return tr("How far queries look, in %1, weighted by attention: small = local (neighbours), large = global.").arg(unit);
    case HeadStatistic::Sink:
        return tr("The share of attention parked on special tokens (</s>, the start token, CLS): a head with nothing "
                  "to do often looks there.");
    case HeadStatistic::Diagonal:
        return tr("The share each token gives itself (self-attention only).");
    case HeadStatistic::Previous:
        return tr("The share each token gives the one before it: \"previous-token heads\" (self-attention only).");
    case HeadStatistic::Alignment:
        return tr("How often a target token's strongest source token is the word it translates (needs an alignment).");
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
    top->addWidget(new QLabel(tr("Colour by"), this));
    top->addWidget(m_statisticBox);
    top->addSpacing(10);
    top->addWidget(m_caption, 1);
    layout->addLayout(top);
    m_meaning = hint(QString(), this);
    layout->addWidget(m_meaning);

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
        setStatistic(static_cast<HeadStatistic>(m_statisticBox->itemData(index).toInt()));
    });
    connect(m_grid, &HeatmapView::cellClicked, this, [this](int layer, int head) { emit headActivated(layer, head); });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        emit headActivated(m_table->item(row, 0)->data(Qt::UserRole).toInt(), m_table->item(row, 1)->data(Qt::UserRole).toInt());
    });
    clear(tr("Translate a sentence or open a picture: the statistics of its heads appear here."));
}

QString HeadsLensView::caption() const { return m_caption->text(); }

void HeadsLensView::setStats(const HeadStats& stats, const QString& caption, const QString& distanceUnit) {
    m_stats = stats;
    m_hasStats = stats.layers() > 0;
    m_unit = distanceUnit;
    m_caption->setText(caption);
    for (int i = 0; i < m_statisticBox->count(); ++i)
        m_statisticBox->setItemData(i, describe(static_cast<HeadStatistic>(m_statisticBox->itemData(i).toInt()), m_unit),
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
    m_statisticBox->setCurrentIndex(m_statisticBox->findData(static_cast<int>(statistic)));
    refreshGrid();
}

void HeadsLensView::setCurrentHead(int layer, int head) {
    m_layer = layer;
    m_head = head;
    m_grid->setMarkedCell({layer, head});
}

void HeadsLensView::refreshGrid() {
    m_meaning->setText(describe(m_statistic, m_unit));
    if (!m_hasStats) return;
    const RowMatrix& values = m_stats.get(m_statistic);
    QStringList layers, heads;
    for (int l = 0; l < m_stats.layers(); ++l) layers << QString::number(l);
    for (int h = 0; h < m_stats.heads(); ++h) heads << QString::number(h);
    if (values.array().isNaN().all()) {
        m_grid->setMatrix(RowMatrix());
        m_meaning->setText(describe(m_statistic, m_unit) + tr(" — does not apply to this attention."));
        return;
    }
    // NaN cells (e.g. a row with no positions) are drawn as masked.
    RowMatrix keep = RowMatrix::Ones(values.rows(), values.cols());
    RowMatrix shown = values;
    for (Eigen::Index r = 0; r < values.rows(); ++r)
        for (Eigen::Index c = 0; c < values.cols(); ++c)
            if (std::isnan(values(r, c))) keep(r, c) = 0.0f, shown(r, c) = 0.0f;
    m_grid->setValueDecimals(m_statistic == HeadStatistic::Distance ? 1 : 2);
    m_grid->setMatrix(shown, layers, heads);
    if ((keep.array() == 0).any()) m_grid->setMask(keep);
    else m_grid->clearMask();
    if (m_layer >= 0) m_grid->setMarkedCell({m_layer, m_head});
}

void HeadsLensView::refreshTable() {
    m_table->setSortingEnabled(false);
    m_table->clear();
    QStringList headers = {tr("layer"), tr("head")};
    std::vector<HeadStatistic> shown;
    for (HeadStatistic s : kAllHeadStatistics)
        if (!m_stats.get(s).array().isNaN().all()) {
            shown.push_back(s);
            headers << QString::fromLatin1(headStatisticId(s).data(), static_cast<int>(headStatisticId(s).size()));
        }
    m_table->setColumnCount(static_cast<int>(headers.size()));
    m_table->setHorizontalHeaderLabels(headers);
    m_table->setRowCount(m_stats.layers() * m_stats.heads());
    int row = 0;
    for (int l = 0; l < m_stats.layers(); ++l)
        for (int h = 0; h < m_stats.heads(); ++h, ++row) {
            auto* layer = sortableNumber(static_cast<float>(l), 0);
            layer->setData(Qt::UserRole, l);
            auto* head = sortableNumber(static_cast<float>(h), 0);
            head->setData(Qt::UserRole, h);
            m_table->setItem(row, 0, layer);
            m_table->setItem(row, 1, head);
            for (size_t i = 0; i < shown.size(); ++i)
                m_table->setItem(row, static_cast<int>(i) + 2,
                                 sortableNumber(m_stats.get(shown[i])(l, h), shown[i] == HeadStatistic::Distance ? 2 : 3));
        }
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
}

} // namespace attnlens::ui
