#pragma once
// errorOf(f): the message of the attnlens::Error that f throws, or empty when it throws none (other
// exceptions propagate). Header-only, for the core suites.

#include "core/util/error.h"

#include <QString>

#include <functional>

inline QString errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const attnlens::Error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}
