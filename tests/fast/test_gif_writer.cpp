// GifWriter (core/export/gif_writer.h) read back with giflib's own decoder: canvas size, frame count,
// delays, the loop extension, and colours — exact for frames of few colours, close for a gradient of
// many (median-cut quantisation) — plus clear errors for an unwritable path, an empty frame and a
// finished file.

#include "core/export/gif_writer.h"
#include "core/util/error.h"
#include "support/error_of.h"
#include "support/gif_read.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>

using namespace attnlens;

namespace {

RgbImage solid(int w, int h, Rgb c) {
    RgbImage img{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
    for (size_t i = 0; i < img.pixels.size(); i += 3) {
        img.pixels[i] = c.r;
        img.pixels[i + 1] = c.g;
        img.pixels[i + 2] = c.b;
    }
    return img;
}

} // namespace

class TestGifWriter : public QObject {
    Q_OBJECT
private slots:
    void framesDelaysAndColoursRoundTrip() {
        QTemporaryDir tmp;
        const std::string path = tmp.filePath("a.gif").toStdString();
        RgbImage two = solid(6, 4, {255, 0, 0});
        for (int x = 3; x < 6; ++x)
            for (int y = 0; y < 4; ++y)
                two.pixels[(static_cast<size_t>(y) * 6 + x) * 3 + 2] = 200; // right half magenta-ish
        {
            GifWriter gif(path, 15);
            gif.addFrame(solid(6, 4, {10, 20, 30}));
            gif.addFrame(two);
            gif.addFrame(solid(6, 4, {0, 255, 0}), 50);
            QCOMPARE(gif.frames(), 3);
            gif.finish();
        }
        const giftest::Gif g = giftest::read(path);
        QVERIFY2(g.error.isEmpty(), qPrintable(g.error));
        // the permissions of any other file written here (giflib's own open made GIFs owner-only, 0600)
        const QString plain = tmp.filePath("plain.txt");
        {
            QFile f(plain);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QCOMPARE(QFileInfo(QString::fromStdString(path)).permissions(), QFileInfo(plain).permissions());
        QCOMPARE(g.width, 6);
        QCOMPARE(g.height, 4);
        QVERIFY(g.loops);
        QCOMPARE(static_cast<int>(g.frames.size()), 3);
        QCOMPARE(g.frames[0].delay, 15);
        QCOMPARE(g.frames[2].delay, 50);
        QCOMPARE(g.frames[0].at(5, 3), (std::array<uint8_t, 3>{10, 20, 30}));
        QCOMPARE(g.frames[1].at(0, 0), (std::array<uint8_t, 3>{255, 0, 0}));
        QCOMPARE(g.frames[1].at(4, 2), (std::array<uint8_t, 3>{255, 0, 200}));
        QCOMPARE(g.frames[2].at(1, 1), (std::array<uint8_t, 3>{0, 255, 0}));
    }

    void manyColoursAreQuantisedClosely() {
        QTemporaryDir tmp;
        const std::string path = tmp.filePath("g.gif").toStdString();
        RgbImage img{64, 64, std::vector<uint8_t>(64 * 64 * 3)};
        for (int y = 0; y < 64; ++y)
            for (int x = 0; x < 64; ++x) {
                uint8_t* p = &img.pixels[(static_cast<size_t>(y) * 64 + x) * 3];
                p[0] = static_cast<uint8_t>(x * 4);
                p[1] = static_cast<uint8_t>(y * 4);
                p[2] = static_cast<uint8_t>((x + y) * 2);
            }
        GifWriter gif(path, 10);
        gif.addFrame(img);
        gif.finish();
        const giftest::Gif g = giftest::read(path);
        QVERIFY2(g.error.isEmpty(), qPrintable(g.error));
        double err = 0;
        for (size_t i = 0; i < img.pixels.size(); ++i)
            err += std::abs(int(img.pixels[i]) - int(g.frames[0].rgb[i]));
        QVERIFY2(err / static_cast<double>(img.pixels.size()) < 10.0,
                 qPrintable(QString::number(err / img.pixels.size())));
    }

    void framesOfAnotherSizeAreClipped() {
        QTemporaryDir tmp;
        const std::string path = tmp.filePath("c.gif").toStdString();
        GifWriter gif(path, 10);
        gif.addFrame(solid(8, 8, {1, 2, 3}));
        gif.addFrame(solid(12, 4, {4, 5, 6}));
        gif.finish();
        const giftest::Gif g = giftest::read(path);
        QVERIFY2(g.error.isEmpty(), qPrintable(g.error));
        QCOMPARE(g.frames[1].width, 8);
        QCOMPARE(g.frames[1].height, 4);
    }

    void errorsNameThePath() {
        QTemporaryDir tmp;
        QVERIFY(errorOf([&] { GifWriter("/nonexistent-dir/x.gif", 10); }).contains("/nonexistent-dir/x.gif"));
        const std::string path = tmp.filePath("e.gif").toStdString();
        GifWriter gif(path, 10);
        QVERIFY(errorOf([&] { gif.addFrame(RgbImage{}); }).contains("empty"));
        QVERIFY(errorOf([&] { gif.finish(); }).contains("no frame"));
        gif.addFrame(solid(2, 2, {0, 0, 0}));
        gif.finish();
        QVERIFY(errorOf([&] { gif.addFrame(solid(2, 2, {0, 0, 0})); }).contains("finished"));
    }
};

QTEST_APPLESS_MAIN(TestGifWriter)
#include "test_gif_writer.moc"
