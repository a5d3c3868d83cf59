#pragma once
// Waits in the GUI suites (issue 36). A test waits for the event itself — a condition polled while the event
// loop runs — never for a fixed time, and never on QSignalSpy::wait(), which misses a signal emitted before
// it is called. The bound is only against hangs: on a quiet machine these events come in milliseconds to
// seconds, but under ASan + UBSan (-O1) with both cores busy they took several times the old 30-second
// bounds. It stays below ctest's TIMEOUT for a suite, so that a hang names its condition instead of being
// killed silently.

#include <QSignalSpy>
#include <QString>
#include <QTest>

namespace attnlens::test {

inline constexpr int kHangMs = 240'000;

// Runs the event loop until `condition()` holds; false if it still does not after kHangMs.
template <typename Condition> [[nodiscard]] bool waitUntil(Condition&& condition) {
    return QTest::qWaitFor(std::forward<Condition>(condition), kHangMs);
}

inline QString hangMessage(const char* condition) {
    return QStringLiteral("still false after %1 s: %2").arg(kHangMs / 1000).arg(QLatin1String(condition));
}

} // namespace attnlens::test

// Fails the test, naming the condition, if `condition` does not hold before the hang bound.
#define WAIT_UNTIL(condition)                                                                                \
    do {                                                                                                     \
        if (!::attnlens::test::waitUntil([&] { return static_cast<bool>(condition); }))                      \
            QFAIL(qPrintable(::attnlens::test::hangMessage(#condition)));                                    \
    } while (false)

// Waits until `actual` equals `expected`, then compares them (so that a failure shows both values).
#define WAIT_UNTIL_COMPARE(actual, expected)                                                                 \
    do {                                                                                                     \
        (void)::attnlens::test::waitUntil([&] { return (actual) == (expected); });                           \
        QCOMPARE(actual, expected);                                                                          \
    } while (false)
