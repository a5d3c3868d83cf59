#include "ui/playground/stage_panel.h"

#include "ui/widgets/heatmap_view.h"
#include "ui/widgets/page_parts.h"

#include <QLabel>
#include <QVBoxLayout>

namespace attnlens::ui {

StagePanel::StagePanel(const QString& title, QWidget* parent)
    : QFrame(parent), m_title(new QLabel(title, this)), m_formula(new QLabel(this)),
      m_detail(new QLabel(this)), m_view(new HeatmapView(this)) {
    setObjectName(QStringLiteral("stagePanel"));
    setStyleSheet(
        QStringLiteral("QFrame#stagePanel { background: palette(base); border: 1px solid palette(mid);"
                       " border-radius: 6px; }"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 6);
    layout->setSpacing(2);
    QFont titleFont = m_title->font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() + 1.0);
    m_title->setFont(titleFont);
    QFont formulaFont(QStringLiteral("DejaVu Serif"));
    formulaFont.setPointSizeF(m_formula->font().pointSizeF() + 0.5);
    m_formula->setFont(formulaFont);
    m_formula->setTextFormat(Qt::RichText);
    m_detail->setTextFormat(Qt::RichText);
    m_detail->setWordWrap(true);
    m_formula->setWordWrap(true);
    mute(m_detail);
    for (QLabel* label : {m_title, m_formula, m_detail})
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_title);
    layout->addWidget(m_formula);
    layout->addWidget(m_detail);
    layout->addWidget(m_view, 1);
}

void StagePanel::setFormula(const QString& html) {
    m_formula->setText(html);
}
void StagePanel::setDetail(const QString& html) {
    m_detail->setText(html);
}
QString StagePanel::formula() const {
    return m_formula->text();
}
QString StagePanel::detail() const {
    return m_detail->text();
}

} // namespace attnlens::ui
