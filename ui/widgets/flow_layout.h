#pragma once
// FlowLayout: a row of widgets that wraps onto further rows when its width runs out — the pages' top bars
// and setup rows, so that a small window (1024×640) shows every control instead of drawing them over each
// other. Items keep their size hints; on each row the space left goes to the items added with a stretch
// (an input field), in proportion. Rows are as tall as their tallest item, items centred in them.
//
//   auto* row = new FlowLayout(bar);
//   row->addWidget(label);
//   row->addWidget(input, 1); // takes what is left of its row
//   row->addSpacing(6);
//
// Threading: GUI thread only.

#include <QLayout>
#include <QList>

namespace attnlens::ui {

class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent = nullptr);
    ~FlowLayout() override;

    void addWidget(QWidget* widget, int stretch = 0);
    void addSpacing(int width);

    void addItem(QLayoutItem* item) override;
    int count() const override { return static_cast<int>(m_items.size()); }
    QLayoutItem* itemAt(int index) const override;
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override { return Qt::Horizontal; }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize minimumSize() const override;
    QSize sizeHint() const override;
    void setGeometry(const QRect& rect) override;

private:
    struct Entry {
        QLayoutItem* item;
        int stretch;
    };
    // Lays the items out in `rect` (only measures when `apply` is false); returns the height used.
    int arrange(const QRect& rect, bool apply) const;
    QList<Entry> m_items;
};

} // namespace attnlens::ui
