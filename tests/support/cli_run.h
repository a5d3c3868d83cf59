#pragma once
// Runs attnlens-cli (ATTNLENS_CLI_PATH) as a user does and checks the error convention: exit status
// 2, no crash, exactly one stderr line "error: …". Header-only; shared by the CLI suites.

#include "support/waits.h"

#include <QProcess>
#include <QStringList>
#include <QTest>

namespace clitest {

struct Run {
    int exitCode = -1;
    bool crashed = true; // also when it did not finish in time
    QString out, err;
};

inline Run run(const QStringList& args, int timeoutMs = attnlens::test::kHangMs) {
    QProcess p;
    p.start(QStringLiteral(ATTNLENS_CLI_PATH), args);
    Run r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.crashed = p.exitStatus() != QProcess::NormalExit;
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// Exit 2, no crash, one stderr line starting "error: " that contains `fragment`.
inline void expectError(const Run& r, const QString& fragment) {
    QVERIFY2(!r.crashed, qPrintable(r.err));
    QCOMPARE(r.exitCode, 2);
    const QStringList lines = r.err.trimmed().split('\n');
    QVERIFY2(lines.size() == 1 && lines[0].startsWith("error: "), qPrintable(r.err));
    QVERIFY2(r.err.contains(fragment), qPrintable(r.err + " lacks: " + fragment));
}

} // namespace clitest
