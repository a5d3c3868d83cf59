#include "stall_meter.h"

#include <algorithm>
#include <cstdio>

StallMeter::StallMeter(QObject* parent) : QObject(parent) {
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(kIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &StallMeter::tick);
    m_phases.push_back({QStringLiteral("start")});
    m_clock.start();
    m_timer.start();
}

void StallMeter::setPhase(const QString& phase) {
    m_phases.push_back({phase});
}

void StallMeter::pause() {
    m_timer.stop();
    m_last = -1;
}

void StallMeter::resume() {
    m_timer.start();
}

void StallMeter::tick() {
    const qint64 now = m_clock.nsecsElapsed();
    Phase& p = m_phases.back();
    if (m_last >= 0) {
        const double stall = std::max(0.0, (now - m_last) / 1e6 - kIntervalMs);
        p.longestMs = std::max(p.longestMs, stall);
        if (stall > 16.0) ++p.over16;
    }
    ++p.ticks;
    m_last = now;
}

void StallMeter::report() const {
    const Phase* worst = nullptr;
    for (const Phase& p : m_phases) {
        if (p.ticks == 0) continue;
        std::printf("GUI stall while %-30s longest %8.2f ms   %d gaps > 16 ms   (%d ticks of %d ms)\n",
                    qPrintable(p.name + ':'), p.longestMs, p.over16, p.ticks, kIntervalMs);
        if (!worst || p.longestMs > worst->longestMs) worst = &p;
    }
    if (worst) std::printf("longest GUI stall: %.2f ms (%s)\n", worst->longestMs, qPrintable(worst->name));
    std::fflush(stdout);
}

void printTimes(const char* what, std::vector<double> v) {
    if (v.empty()) return;
    std::sort(v.begin(), v.end());
    std::printf("%-44s median %8.2f ms   min %8.2f   max %8.2f   (n=%zu)\n", what, v[v.size() / 2], v.front(),
                v.back(), v.size());
}
