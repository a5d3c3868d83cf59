#include "ui/widgets/playback_bar.h"

#include <QHBoxLayout>
#include <QKeySequence>
#include <QShortcut>
#include <QSignalBlocker>
#include <QTimer>
#include <QToolButton>

namespace attnlens::ui {

PlaybackBar::PlaybackBar(const Tips& tips, int tickMs, QWidget* parent)
    : QWidget(parent), m_timer(new QTimer(this)) {
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(6);
    const auto tool = [this, row](const QString& name, const QString& text, const QString& tip) {
        auto* b = new QToolButton(this);
        b->setObjectName(name);
        b->setText(text);
        b->setToolTip(tip);
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        b->setMinimumWidth(30);
        row->addWidget(b);
        return b;
    };
    if (!tips.reset.isEmpty()) {
        m_reset = tool(QStringLiteral("reset"), tr("↺ Reset"), tips.reset);
        connect(m_reset, &QToolButton::clicked, this, &PlaybackBar::resetRequested);
    }
    m_back = tool(QStringLiteral("stepBack"), tr("◀ Back"), tips.back);
    m_play = tool(QStringLiteral("play"), tr("▶ Play"), tips.play);
    m_play->setCheckable(true);
    m_forward = tool(QStringLiteral("stepForward"), tr("Step ▶"), tips.forward);
    connect(m_back, &QToolButton::clicked, this, &PlaybackBar::stepBack);
    connect(m_forward, &QToolButton::clicked, this, &PlaybackBar::stepForward);
    connect(m_play, &QToolButton::toggled, this, &PlaybackBar::playingRequested);
    m_timer->setInterval(tickMs);
    connect(m_timer, &QTimer::timeout, this, &PlaybackBar::tick);
}

void PlaybackBar::setPlaying(bool playing) {
    if (playing)
        m_timer->start();
    else
        m_timer->stop();
    const QSignalBlocker block(m_play);
    m_play->setChecked(playing);
    m_play->setText(playing ? tr("❚❚ Pause") : tr("▶ Play"));
}

bool PlaybackBar::isPlaying() const {
    return m_timer->isActive();
}

void PlaybackBar::setAvailable(bool back, bool forward, bool play) {
    if (m_reset) m_reset->setEnabled(back);
    m_back->setEnabled(back);
    m_forward->setEnabled(forward);
    m_play->setEnabled(play);
}

void PlaybackBar::addShortcuts(QWidget* page, const QString& nextStep, const QString& previousStep) {
    const auto add = [this, page](QKeyCombination key, const QString& what, auto signal) {
        auto* s = new QShortcut(QKeySequence(key), page);
        s->setContext(Qt::WidgetWithChildrenShortcut);
        s->setWhatsThis(what);
        connect(s, &QShortcut::activated, this, signal);
    };
    add(Qt::ALT | Qt::Key_Right, nextStep, [this] { emit stepForward(); });
    add(Qt::ALT | Qt::Key_Left, previousStep, [this] { emit stepBack(); });
    add(Qt::CTRL | Qt::Key_BracketRight, nextStep, [this] { emit stepForward(); });
    add(Qt::CTRL | Qt::Key_BracketLeft, previousStep, [this] { emit stepBack(); });
    add(Qt::CTRL | Qt::Key_P, tr("Play / pause the steps"), [this] { emit playingRequested(!isPlaying()); });
}

} // namespace attnlens::ui
