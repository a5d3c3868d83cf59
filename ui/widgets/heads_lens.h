#pragma once
// HeadsLensView: the Heads lens (issue 21) — which heads of a model do what, for the input on screen. A
// layers × heads grid coloured by one statistic (core/analysis/head_stats.h; the value on hover), a table of
// every head and every statistic (click a column header to sort), and a line saying what the statistic means.
// Clicking a grid cell or double-clicking a table row emits headActivated(layer, head): the page opens that
// head in its matrix / overlay. Pages compute the statistics (they know the tokens and positions).
//
// Head ablation (pages that can re-run without some heads enable it): an "off" check box per head in the
// table; switched-off heads are hatched in the grid; ablationRequested() carries the new set. "Rank by
// importance" asks the page (importanceRequested()) for the drop of the original output when each head alone
// is off, shown with setImportance() as one more statistic.
//
// Object names for tests: "headsStatistic", "headsGrid", "headsTable", "headsCaption", "headsAblation",
// "headsAllOn", "headsRank".

#include "core/analysis/head_stats.h"

#include <QWidget>

#include <utility>
#include <vector>

class QComboBox;
class QLabel;
class QTableWidget;
class QTableWidgetItem;

namespace attnlens::ui {

class HeatmapView;

class HeadsLensView : public QWidget {
    Q_OBJECT
public:
    explicit HeadsLensView(QWidget* parent = nullptr);

    // `caption`: what the statistics are of ("Cross-attention at step 7, 12 target pieces"); `distanceUnit`:
    // "tokens" or "px".
    void setStats(const HeadStats& stats, const QString& caption, const QString& distanceUnit);
    void clear(const QString& message);
    bool hasStats() const { return m_hasStats; }
    const HeadStats& stats() const { return m_stats; }

    HeadStatistic statistic() const { return m_statistic; }
    void setStatistic(HeadStatistic statistic);
    void setCurrentHead(int layer, int head); // outlined in the grid

    // --- ablation ---------------------------------------------------------------------------
    void setAblationEnabled(bool enabled);
    // What the heads off apply to, in the line above the grid (default: "the maps and predictions are of this
    // run").
    void setAblationScope(const QString& scope) { m_ablationScope = scope; }
    void
    setAblated(const std::vector<std::pair<int, int>>& heads); // reflects the page's state; emits nothing
    const std::vector<std::pair<int, int>>& ablated() const { return m_ablated; }
    // [layers, heads]: how much the original output's log-probability drops with each head alone off.
    void setImportance(const RowMatrix& drop, const QString& description);
    bool hasImportance() const { return m_importance.size() > 0; }
    void clearImportance(); // the input changed: the ranking no longer applies
    // The statistic shown in the grid: one of HeadStatistic, or the importance (after setImportance).
    void showImportance();
    bool showingImportance() const { return m_showImportance; }

    HeatmapView* grid() const { return m_grid; }
    QTableWidget* table() const { return m_table; }
    // The table row (as sorted now) of a head, -1 when it has none.
    int tableRow(int layer, int head) const;
    QString caption() const;
    // What a statistic measures, one sentence (the combo's tooltip and the line under the grid).
    static QString describe(HeadStatistic statistic, const QString& distanceUnit);

signals:
    void headActivated(int layer, int head);
    void ablationRequested(std::vector<std::pair<int, int>> heads);
    void importanceRequested();

private:
    void refreshGrid();
    void refreshTable();
    void syncAblationLabel();
    void onTableItemChanged(QTableWidgetItem* item);

    QComboBox* m_statisticBox;
    QLabel* m_caption;
    QLabel* m_meaning;
    HeatmapView* m_grid;
    QTableWidget* m_table;
    HeadStats m_stats;
    bool m_hasStats = false;
    HeadStatistic m_statistic = HeadStatistic::Entropy;
    QString m_unit = QStringLiteral("tokens");
    int m_layer = -1, m_head = -1;
    bool m_ablationEnabled = false;
    std::vector<std::pair<int, int>> m_ablated;
    QWidget* m_ablationRow = nullptr;
    QLabel* m_ablationLabel = nullptr;
    QString m_ablationScope = tr("the maps and predictions are of this run");
    RowMatrix m_importance;
    QString m_importanceText;
    bool m_showImportance = false;
    bool m_rebuilding = false;
};

} // namespace attnlens::ui
