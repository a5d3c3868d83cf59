#pragma once
// ElidedLabel: a one-line label that may be narrower than its text; it then ends in "…" instead of being cut
// mid-word, and the whole text is its tooltip. For long descriptions in crowded rows (a model's name and
// sizes).

#include <QLabel>
#include <QPainter>
#include <QStyle>

namespace attnlens::ui {

class ElidedLabel : public QLabel {
public:
    explicit ElidedLabel(QWidget* parent = nullptr) : QLabel(parent) {
        setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        setMinimumWidth(40);
    }
    QSize sizeHint() const override {
        return QSize(fontMetrics().horizontalAdvance(text()) + 4, QLabel::sizeHint().height());
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        p.setPen(palette().color(foregroundRole()));
        const QString shown = fontMetrics().elidedText(text(), Qt::ElideRight, contentsRect().width());
        p.drawText(contentsRect(), static_cast<int>(alignment()) | Qt::TextSingleLine, shown);
    }
};

} // namespace attnlens::ui
