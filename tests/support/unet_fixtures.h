#pragma once
// Helpers for the diffusion tests: fixture paths (tests/data/unet, made by
// tools/golden/make_unet_fixtures.py from the independent PyTorch reference), their goldens, and a
// CLI runner. Header-only.

#include "core/io/json_file.h"
#include "core/io/safetensors.h"
#include "core/tensor/tensor.h"

#include <QProcess>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

namespace unettest {

inline std::filesystem::path dataDir() { return std::filesystem::path(ATTNLENS_TEST_DATA) / "unet"; }
inline std::filesystem::path fixture(const std::string& name) { return dataDir() / name; }

// The golden file of a fixture and its "golden" metadata (JSON).
struct Golden {
    attnlens::SafeTensorsFile file;
    attnlens::Json meta;
};
inline Golden golden(const std::filesystem::path& path) {
    auto file = attnlens::SafeTensorsFile::open(path);
    attnlens::Json meta = attnlens::Json::parse(file.metadata().at("golden"));
    return {std::move(file), std::move(meta)};
}

inline double maxAbsDiff(const attnlens::Tensor& a, const attnlens::Tensor& b) {
    if (a.numel() != b.numel()) return INFINITY;
    double worst = 0;
    for (int64_t i = 0; i < a.numel(); ++i) worst = std::max(worst, std::abs(double(a.data()[i]) - double(b.data()[i])));
    return worst;
}

struct CliRun {
    int exitCode = -1;
    bool crashed = true;
    QString out, err;
};

inline CliRun runCli(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(ATTNLENS_CLI_PATH), args);
    CliRun r;
    if (!p.waitForFinished(120000)) {
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

} // namespace unettest

// Exit 2, no crash, exactly one stderr line "error: …" that contains `fragment`.
#define UNET_EXPECT_CLI_ERROR(args, fragment)                                                                   \
    do {                                                                                                        \
        const unettest::CliRun r_ = unettest::runCli(args);                                                     \
        QVERIFY2(!r_.crashed, qPrintable(r_.err));                                                              \
        QCOMPARE(r_.exitCode, 2);                                                                               \
        const QStringList lines_ = r_.err.trimmed().split('\n');                                                \
        QVERIFY2(lines_.size() == 1 && lines_[0].startsWith("error: "), qPrintable(r_.err));                   \
        QVERIFY2(r_.err.contains(fragment), qPrintable(r_.err + " lacks: " + QString(fragment)));               \
    } while (0)
