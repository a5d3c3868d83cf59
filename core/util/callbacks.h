#pragma once
// Plain callbacks through which long core operations talk to a front end (a Qt worker thread wraps
// them into signals). All are optional; they are called on the thread running the operation (`cancelled`
// from the compute team's threads too).

#include <functional>
#include <string>

namespace attnlens {

struct Callbacks {
    // fraction in [0, 1]; stage is a short human-readable label ("encoding", "step 3", ...)
    std::function<void(double fraction, const std::string& stage)> progress;
    // polled between chunks of work; returning true makes the operation throw attnlens::Cancelled. It may be
    // polled from the compute team's threads as well (attention heads run on it): it must be thread-safe.
    std::function<bool()> cancelled;
    std::function<void(const std::string& message)> log;

    void report(double fraction, const std::string& stage) const {
        if (progress) progress(fraction, stage);
    }
    // Throws Cancelled if the front end asked to stop.
    void checkCancel() const;
};

} // namespace attnlens
