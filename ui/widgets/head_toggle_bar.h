#pragma once
// HeadToggleBar: the legend and switches of a Lines view — "Heads:", one toggle per head in the head's line
// colour (headColor, numbered from 0), All, None and a hint. Translate's and Text's Lines views share it.
// Toggle object names "headToggle<h>". GUI thread only.
//
//   auto* bar = new HeadToggleBar(tr("Hover a token to see only its lines."), parent);
//   bar->setHeadCount(4);            // all on
//   bar->followSelection(2);         // the page's selector chose head 2: it alone; -1 (mean, max): all
//   connect(bar, &HeadToggleBar::changed, view, &View::refresh);

#include <QWidget>

#include <vector>

class QHBoxLayout;
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

signals:
    void changed();

private:
    void setAll(bool on);
    QHBoxLayout* m_row;
    std::vector<QToolButton*> m_toggles;
    std::vector<bool> m_enabled;
};

} // namespace attnlens::ui
