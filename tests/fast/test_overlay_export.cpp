// The overlay renderer's pixels pinned, PNG round trip, .npy and CSV writers.

#include "core/export/npy.h"
#include "core/export/overlay.h"
#include "core/util/error.h"
#include "core/vision/image_io.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace attnlens;

namespace {

ImageU8 greyImage(int w, int h, uint8_t v) {
    ImageU8 img(w, h, 1);
    std::fill(img.pixels.begin(), img.pixels.end(), v);
    return img;
}

// The 2×2 checkerboard map [[0, 1], [1, 0]] the pinned-pixel cases use.
RowMatrix checkerMap() {
    RowMatrix map(2, 2);
    map << 0, 1, 1, 0;
    return map;
}

// Viridis at half opacity, one flat colour per map cell.
OverlayOptions flatViridisHalf() {
    OverlayOptions o;
    o.colorMap = ColorMap::Viridis;
    o.opacity = 0.5f;
    o.smooth = false;
    return o;
}

std::string readAll(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

} // namespace

class TestOverlayExport : public QObject {
    Q_OBJECT
private slots:
    void pinnedPixelsNearest() {
        const RowMatrix map = checkerMap();
        const OverlayOptions o = flatViridisHalf();
        const RgbImage img = renderOverlay(greyImage(4, 4, 100), map, o);
        QCOMPARE(img.width, 4);
        QCOMPARE(img.height, 4);
        // viridis[0] = (68,1,84): round(.5·100 + .5·c) = (84, 51, 92); viridis[255] = (253,231,37) →
        // (177,166,69).
        QCOMPARE(img.pixel(0, 0), (Rgb{84, 51, 92}));
        QCOMPARE(img.pixel(1, 1), (Rgb{84, 51, 92}));
        QCOMPARE(img.pixel(2, 0), (Rgb{177, 166, 69}));
        QCOMPARE(img.pixel(1, 3), (Rgb{177, 166, 69}));
        QCOMPARE(img.pixel(3, 3), (Rgb{84, 51, 92}));
    }

    void pinnedPixelsSmooth() {
        RowMatrix map(2, 2);
        map << 0, 1, 1, 0;
        OverlayOptions o;
        o.colorMap = ColorMap::Viridis;
        o.opacity = 0.5f;
        const RgbImage img = renderOverlay(greyImage(4, 4, 100), map, o);
        // Pixel (1,1) samples the map at (0.25, 0.25): 0.375 → viridis[96] = (44,114,142) → (72, 107, 121).
        QCOMPARE(img.pixel(1, 1), (Rgb{72, 107, 121}));
        // Corners clamp to the cell values.
        QCOMPARE(img.pixel(0, 0), (Rgb{84, 51, 92}));
        QCOMPARE(img.pixel(3, 0), (Rgb{177, 166, 69}));
        // Opacity 0 = the image, 1 = the colour map; explicit range lo/hi.
        o.opacity = 0.0f;
        QCOMPARE(renderOverlay(greyImage(4, 4, 100), map, o).pixel(2, 2), (Rgb{100, 100, 100}));
        o.opacity = 1.0f;
        o.smooth = false;
        o.lo = 0.0f;
        o.hi = 2.0f; // value 1 → t = 0.5 → viridis[128]
        QCOMPARE(renderOverlay(greyImage(4, 4, 100), map, o).pixel(2, 0), colorAt(ColorMap::Viridis, 0.5f));
        o.opacity = 1.5f;
        QVERIFY_THROWS_EXCEPTION(Error, renderOverlay(greyImage(4, 4, 100), map, o));
        QVERIFY_THROWS_EXCEPTION(Error, renderOverlay(ImageU8(), map, {}));
    }

    void regionOverlay() {
        // A centre-cropped model input covers the middle 4×4 of an 8×8 image: the 2×2 map's nearest
        // cells land on 2×2 pixel blocks there; outside, the image is dimmed to 40 %.
        const RowMatrix map = checkerMap();
        OverlayOptions o = flatViridisHalf();
        o.region = {0.25, 0.25, 0.5, 0.5};
        const RgbImage img = renderOverlay(greyImage(8, 8, 100), map, o);
        QCOMPARE(img.pixel(0, 0), (Rgb{40, 40, 40}));
        QCOMPARE(img.pixel(1, 7), (Rgb{40, 40, 40}));
        QCOMPARE(img.pixel(6, 2), (Rgb{40, 40, 40}));
        QCOMPARE(img.pixel(2, 2), (Rgb{84, 51, 92})); // map(0, 0)
        QCOMPARE(img.pixel(3, 3), (Rgb{84, 51, 92}));
        QCOMPARE(img.pixel(4, 2), (Rgb{177, 166, 69})); // map(0, 1)
        QCOMPARE(img.pixel(2, 5), (Rgb{177, 166, 69})); // map(1, 0)
        QCOMPARE(img.pixel(5, 5), (Rgb{84, 51, 92}));   // map(1, 1)
        // Smooth: the region's own pixel centres sample the map as a whole image of 4×4 would.
        o.smooth = true;
        o.region = {0.25, 0.25, 0.5, 0.5};
        const RgbImage smooth = renderOverlay(greyImage(8, 8, 100), map, o);
        const RgbImage whole = [&] {
            OverlayOptions w = o;
            w.region = {};
            return renderOverlay(greyImage(4, 4, 100), map, w);
        }();
        for (int y = 0; y < 4; ++y)
            for (int x = 0; x < 4; ++x)
                QCOMPARE(smooth.pixel(x + 2, y + 2), whole.pixel(x, y));
        // A region reaching outside the image (a padded crop) only draws what lies inside.
        o.region = {-0.5, 0.0, 1.0, 1.0};
        const RgbImage shifted = renderOverlay(greyImage(8, 8, 100), map, o);
        QCOMPARE(shifted.width, 8);
        QCOMPARE(shifted.pixel(7, 0), (Rgb{40, 40, 40}));
    }

    void pngRoundTrip() {
        QTemporaryDir tmp;
        const std::filesystem::path path = std::filesystem::path(tmp.path().toStdString()) / "o.png";
        RowMatrix map(3, 5);
        for (int i = 0; i < 15; ++i)
            map(i / 5, i % 5) = float(i);
        ImageU8 rgb(13, 9, 3);
        for (size_t i = 0; i < rgb.pixels.size(); ++i)
            rgb.pixels[i] = uint8_t(i * 7);
        const RgbImage out = renderOverlay(rgb, map, {});
        writePng(path, out);
        const ImageU8 back = loadImage(path);
        QCOMPARE(back.width, 13);
        QCOMPARE(back.channels, 3);
        QVERIFY(back.pixels == out.pixels);
        QVERIFY_THROWS_EXCEPTION(
            Error, writePng(std::filesystem::path(tmp.path().toStdString()) / "no/such/dir/x.png", out));
    }

    void npyAndCsv() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        Tensor t({2, 3, 4});
        for (int64_t i = 0; i < t.numel(); ++i)
            t.data()[i] = float(i) * 0.5f;
        writeNpy(dir / "a.npy", t);
        const std::string bytes = readAll(dir / "a.npy");
        QCOMPARE(bytes.substr(0, 6), std::string("\x93NUMPY"));
        const size_t headerLen = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
        QCOMPARE((10 + headerLen) % 64, size_t(0));
        const std::string header = bytes.substr(10, headerLen);
        QVERIFY(header.find("'descr': '<f4'") != std::string::npos);
        QVERIFY(header.find("'shape': (2, 3, 4)") != std::string::npos);
        QCOMPARE(header.back(), '\n');
        QCOMPARE(bytes.size(), 10 + headerLen + 24 * 4);
        float last = 0;
        std::memcpy(&last, bytes.data() + bytes.size() - 4, 4);
        QCOMPARE(last, 11.5f);
        writeNpy(dir / "v.npy", Tensor({5}));
        QVERIFY(readAll(dir / "v.npy").find("'shape': (5,)") != std::string::npos);

        RowMatrix m(2, 2);
        m << 0.5f, 1.0f / 3.0f, -2.0f, 1e-8f;
        writeCsv(dir / "m.csv", m);
        QCOMPARE(readAll(dir / "m.csv"), std::string("0.5,0.333333343\n-2,9.99999994e-09\n"));
    }
};

QTEST_GUILESS_MAIN(TestOverlayExport)
#include "test_overlay_export.moc"
