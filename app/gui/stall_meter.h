#pragma once
// StallMeter: how long the GUI thread stops answering. A 5 ms precise QTimer ticks on the GUI thread; the
// longest gap between two ticks, less the interval, is the longest time the event loop was blocked (a paint,
// a result being shown, anything run synchronously). Phases name what the app was doing, so a report can say
// where the longest stall happened.
//
//   StallMeter meter;                      // starts ticking
//   meter.setPhase("loading + translating");
//   … run the event loop …
//   meter.report();                        // "longest GUI stall: 12.3 ms (during …)"

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <vector>

class StallMeter : public QObject {
public:
    static constexpr int kIntervalMs = 5;

    explicit StallMeter(QObject* parent = nullptr);
    void setPhase(const QString& phase);
    // Stops measuring (a measured part that blocks on purpose, such as a timed synchronous repaint loop, is
    // left out with pause() / resume()).
    void pause();
    void resume();

    struct Phase {
        QString name;
        double longestMs = 0; // longest gap beyond the interval
        int ticks = 0;
        int over16 = 0; // gaps beyond the interval longer than one 60 Hz frame
    };
    const std::vector<Phase>& phases() const { return m_phases; }
    // Prints one line per phase and the overall longest stall to stdout.
    void report() const;

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = -1;
    std::vector<Phase> m_phases;
};

// A bench's timings in milliseconds as one line on stdout: "what  median … ms   min …   max …   (n=…)"
// (nothing when `v` is empty).
void printTimes(const char* what, std::vector<double> v);
