#pragma once
// HeadToggleBar: the legend and switches of a Lines view — "Heads:", one toggle per head in the head's line
// colour (headColor, numbered from 0), All, None, the "Lines: top N" slider (each query's strongest N lines
// per head, or all: long texts, issue 40) and a hint. Translate's and Text's Lines views share it.
// Object names "headToggle<h>", "linksPerQuery". GUI thread only.
//
//   auto* bar = new HeadToggleBar(tr("Hover a token to see only its lines."), parent);
//   bar->setHeadCount(4);            // all on
//   bar->followSelection(2);         // the page's selector chose head 2: it alone; -1 (mean, max): all
//   connect(bar, &HeadToggleBar::changed, view, &View::refresh);

#include <QWidget>

#include <vector>

class QHBoxLayout;
class QSlider;
class QToolButton;

namespace attnlens::ui {

class HeadToggleBar : public QWidget {
    Q_OBJECT
public:
    HeadToggleBar(const QString& hint, QWidget* parent);
    void setHeadCount(int heads); // rebuilds the toggles, every head on; emits nothing
    int headCount() const { return static_cast<int>(m_enabled.size()); }
    const std::vector<bool>& enabled() const { return m_enabled; }
    bool isEnabled(int head) const;         // a head beyond the toggles counts as on
    void setHeadEnabled(int head, bool on); // emits changed() when it changes
    // The page's head selector: one head (≥ 0) shows alone, an aggregate (-1) shows all. Emits nothing.
    void followSelection(int head);
    static constexpr int kMostLinksPerQuery = 10; // the slider's steps before "all"
    int linksPerQuery() const;                    // 1–10, or 0: all
    void setLinksPerQuery(int most);              // emits changed() when it changes

signals:
    void changed();

private:
    void setAll(bool on);
    void addLinksSlider(QHBoxLayout* row);
    QHBoxLayout* m_row;
    QSlider* m_links = nullptr;
    std::vector<QToolButton*> m_toggles;
    std::vector<bool> m_enabled;
};

} // namespace attnlens::ui
