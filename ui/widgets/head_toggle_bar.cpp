#include "ui/widgets/head_toggle_bar.h"

#include "ui/render/attention_lines.h"
#include "ui/widgets/page_parts.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QToolButton>

namespace attnlens::ui {

HeadToggleBar::HeadToggleBar(const QString& hint, QWidget* parent) : QWidget(parent), m_row(new QHBoxLayout) {
    auto* top = new QHBoxLayout(this);
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(new QLabel(tr("Heads:"), this));
    m_row->setSpacing(3);
    top->addLayout(m_row);
    auto* all = new QToolButton(this);
    all->setText(tr("All"));
    auto* none = new QToolButton(this);
    none->setText(tr("None"));
    top->addSpacing(8);
    top->addWidget(all);
    top->addWidget(none);
    top->addSpacing(12);
    addLinksSlider(top);
    top->addStretch(1);
    auto* note = new QLabel(hint, this);
    note->setWordWrap(true);
    mute(note);
    top->addWidget(note, 2);
    connect(all, &QToolButton::clicked, this, [this] { setAll(true); });
    connect(none, &QToolButton::clicked, this, [this] { setAll(false); });
}

// "Lines: top N": each query's strongest N lines per head, 1–10, or all of them (the slider's last step).
void HeadToggleBar::addLinksSlider(QHBoxLayout* row) {
    constexpr int kAll = kMostLinksPerQuery + 1;
    m_links = new QSlider(Qt::Horizontal, this);
    m_links->setObjectName(QStringLiteral("linksPerQuery"));
    m_links->setRange(1, kAll);
    m_links->setValue(kAll);
    m_links->setFixedWidth(90);
    m_links->setToolTip(tr("How many lines each token draws per head: its strongest few, or all of at least "
                           "%1 %")
                            .arg(static_cast<double>(kLineThreshold) * 100.0));
    auto* value = new QLabel(this);
    value->setMinimumWidth(value->fontMetrics().horizontalAdvance(tr("top %1").arg(88)));
    const auto show = [this, value] {
        value->setText(linksPerQuery() == 0 ? tr("all") : tr("top %1").arg(linksPerQuery()));
    };
    show();
    connect(m_links, &QSlider::valueChanged, this, [this, show] {
        show();
        emit changed();
    });
    row->addWidget(new QLabel(tr("Lines:"), this));
    row->addWidget(m_links);
    row->addWidget(value);
}

int HeadToggleBar::linksPerQuery() const {
    return m_links->value() > kMostLinksPerQuery ? 0 : m_links->value();
}

void HeadToggleBar::setLinksPerQuery(int most) {
    m_links->setValue(most <= 0 || most > kMostLinksPerQuery ? kMostLinksPerQuery + 1 : most);
}

void HeadToggleBar::setHeadCount(int heads) {
    for (QToolButton* b : m_toggles)
        b->deleteLater();
    m_toggles.clear();
    m_enabled.assign(static_cast<size_t>(std::max(0, heads)), true);
    for (int h = 0; h < heads; ++h) {
        auto* b = new QToolButton(this);
        b->setObjectName(QStringLiteral("headToggle%1").arg(h));
        b->setText(QString::number(h)); // heads are numbered from 0 everywhere
        b->setCheckable(true);
        b->setChecked(true);
        b->setToolTip(tr("Show or hide head %1's lines").arg(h));
        // Off: the head's colour on the view's base (light or dark); on: white on the head's colour.
        b->setStyleSheet(
            QStringLiteral("QToolButton { min-width: 22px; border: 2px solid %1; border-radius: 4px;"
                           " background: palette(base); color: %1; font-weight: bold; }"
                           "QToolButton:checked { background: %1; color: white; }")
                .arg(headColor(h).name()));
        connect(b, &QToolButton::toggled, this, [this, h](bool on) { setHeadEnabled(h, on); });
        m_row->addWidget(b);
        m_toggles.push_back(b);
    }
}

bool HeadToggleBar::isEnabled(int head) const {
    return head < 0 || head >= headCount() || m_enabled[static_cast<size_t>(head)];
}

void HeadToggleBar::setHeadEnabled(int head, bool on) {
    if (head < 0 || head >= headCount()) return;
    QToolButton* b = m_toggles[static_cast<size_t>(head)];
    if (b->isChecked() != on) {
        b->setChecked(on); // re-enters through toggled
        return;
    }
    if (m_enabled[static_cast<size_t>(head)] == on) return;
    m_enabled[static_cast<size_t>(head)] = on;
    emit changed();
}

void HeadToggleBar::followSelection(int head) {
    for (int h = 0; h < headCount(); ++h) {
        const bool on = head < 0 || h == head;
        m_enabled[static_cast<size_t>(h)] = on;
        const QSignalBlocker block(m_toggles[static_cast<size_t>(h)]);
        m_toggles[static_cast<size_t>(h)]->setChecked(on);
    }
}

void HeadToggleBar::setAll(bool on) {
    for (int h = 0; h < headCount(); ++h)
        setHeadEnabled(h, on);
}

} // namespace attnlens::ui
