#pragma once
// PlaybackBar: the step controls of the pages that walk through a run step by step (Translate, Text):
// [↺ Reset] ◀ Back  ▶ Play  Step ▶, and the timer that plays. The page says what a step is: it answers
// stepBack/stepForward/resetRequested, and on every tick() steps on (or calls setPlaying(false) at the end).
// setPlaying() never emits playingRequested(); a click on Play does, and the page decides (it may refuse).
// Child object names: "reset" (when asked for), "stepBack", "play", "stepForward".

#include <QWidget>

class QTimer;
class QToolButton;

namespace attnlens::ui {

class PlaybackBar : public QWidget {
    Q_OBJECT
public:
    struct Tips { // what a step is on this page (tooltips); an empty reset: no Reset button
        QString reset, back, play, forward;
    };
    PlaybackBar(const Tips& tips, int tickMs, QWidget* parent);

    void setPlaying(bool playing); // starts or stops the timer; Play shows "❚❚ Pause" while playing
    bool isPlaying() const;
    // Which buttons can be pressed now (Reset goes with Back).
    void setAvailable(bool back, bool forward, bool play);
    // Keyboard shortcuts on `page` (anywhere inside it), each described for Help → Keyboard shortcuts:
    // Alt+Right / Ctrl+] the next `step`, Alt+Left / Ctrl+[ the previous one, Ctrl+P play / pause.
    void addShortcuts(QWidget* page, const QString& nextStep, const QString& previousStep);

signals:
    void resetRequested();
    void stepBack();
    void stepForward();
    void playingRequested(bool playing);
    void tick(); // while playing, every tickMs

private:
    QToolButton* m_reset = nullptr;
    QToolButton* m_back;
    QToolButton* m_play;
    QToolButton* m_forward;
    QTimer* m_timer;
};

} // namespace attnlens::ui
