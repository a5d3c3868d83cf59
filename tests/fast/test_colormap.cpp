// Colour maps and renderHeatmap: exact pixel values pinned (the GUI and the CLI both draw through
// them, so a change here changes every exported image).
//
// Expected colours are matplotlib 3.6.3's own tables (checked independently with
// matplotlib.cm.get_cmap(name)(i) for i = 0, 128, 255, rounded to 8 bits); t = 0.5 maps to entry
// round(0.5 · 255) = 128.

#include "core/export/colormap.h"
#include "core/util/error.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <vector>

using attnlens::ColorMap;
using attnlens::Rgb;
using attnlens::RowMatrix;

Q_DECLARE_METATYPE(ColorMap)
Q_DECLARE_METATYPE(Rgb)

namespace {
char* rgbText(const Rgb& c) {
    return QTest::toString(QStringLiteral("(%1,%2,%3)").arg(c.r).arg(c.g).arg(c.b));
}
} // namespace

namespace attnlens {
char* toString(const Rgb& c) {
    return rgbText(c);
}
} // namespace attnlens

class TestColormap : public QObject {
    Q_OBJECT
private slots:
    void pinnedValues_data() {
        QTest::addColumn<ColorMap>("map");
        QTest::addColumn<float>("t");
        QTest::addColumn<Rgb>("expected");
        QTest::newRow("viridis 0") << ColorMap::Viridis << 0.0f << Rgb{68, 1, 84};
        QTest::newRow("viridis 0.5") << ColorMap::Viridis << 0.5f << Rgb{33, 145, 140};
        QTest::newRow("viridis 1") << ColorMap::Viridis << 1.0f << Rgb{253, 231, 37};
        QTest::newRow("magma 0") << ColorMap::Magma << 0.0f << Rgb{0, 0, 4};
        QTest::newRow("magma 0.5") << ColorMap::Magma << 0.5f << Rgb{183, 55, 121};
        QTest::newRow("magma 1") << ColorMap::Magma << 1.0f << Rgb{252, 253, 191};
        QTest::newRow("grey 0.5") << ColorMap::Grey << 0.5f << Rgb{128, 128, 128};
        QTest::newRow("grey 1") << ColorMap::Grey << 1.0f << Rgb{255, 255, 255};
    }
    void pinnedValues() {
        QFETCH(ColorMap, map);
        QFETCH(float, t);
        QFETCH(Rgb, expected);
        QCOMPARE(attnlens::colorAt(map, t), expected);
    }

    void clampsAndNaN() {
        for (ColorMap map : attnlens::allColorMaps()) {
            const Rgb low = attnlens::colorAt(map, 0.0f);
            const Rgb high = attnlens::colorAt(map, 1.0f);
            QCOMPARE(attnlens::colorAt(map, -0.5f), low);
            QCOMPARE(attnlens::colorAt(map, -std::numeric_limits<float>::infinity()), low);
            QCOMPARE(attnlens::colorAt(map, 7.0f), high);
            QCOMPARE(attnlens::colorAt(map, std::numeric_limits<float>::infinity()), high);
            QCOMPARE(attnlens::colorAt(map, std::numeric_limits<float>::quiet_NaN()), low);
            QVERIFY2(!(low == high), "a colour map must not be constant");
        }
    }

    void entryRounding() {
        // t = k/255 selects entry k exactly; just below the midpoint between two entries rounds down.
        QCOMPARE(attnlens::colorAt(ColorMap::Grey, 10.0f / 255.0f), (Rgb{10, 10, 10}));
        QCOMPARE(attnlens::colorAt(ColorMap::Grey, 10.49f / 255.0f), (Rgb{10, 10, 10}));
        QCOMPARE(attnlens::colorAt(ColorMap::Grey, 10.51f / 255.0f), (Rgb{11, 11, 11}));
    }

    void roundNonNegativeIsLround() {
        // Every half step up to 256 (the ties), the floats next to them, and a dense sweep.
        for (int k = 0; k <= 512; ++k) {
            const float x = 0.5f * static_cast<float>(k);
            for (float v : {x, std::nextafter(x, 0.0f), std::nextafter(x, 1000.0f)})
                QCOMPARE(attnlens::roundNonNegative(v), static_cast<int>(std::lround(v)));
        }
        for (float v = 0.0f; v < 256.0f; v += 0.0137f)
            QCOMPARE(attnlens::roundNonNegative(v), static_cast<int>(std::lround(v)));
    }

    void names() {
        for (ColorMap map : attnlens::allColorMaps()) {
            const auto parsed = attnlens::parseColorMap(attnlens::colorMapName(map));
            QVERIFY(parsed.has_value());
            QCOMPARE(*parsed, map);
        }
        QVERIFY(attnlens::colorMapName(ColorMap::Viridis) == "viridis");
        QCOMPARE(*attnlens::parseColorMap("gray"), ColorMap::Grey);
        QVERIFY(!attnlens::parseColorMap("jet").has_value());
        QVERIFY(attnlens::allColorMaps().size() >= 2);
    }

    void renderLayout() {
        RowMatrix values(2, 3);     // [rows, cols]
        values << 0.0f, 0.5f, 1.0f, //
            0.25f, -1.0f, 2.0f;
        const auto image = attnlens::renderHeatmap(values, ColorMap::Viridis, 0.0f, 1.0f, 4);
        QCOMPARE(image.width, 12);
        QCOMPARE(image.height, 8);
        QCOMPARE(image.pixels.size(), size_t(12 * 8 * 3));
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c) {
                const Rgb expected = attnlens::colorAt(ColorMap::Viridis, values(r, c));
                // Every pixel of the 4×4 block carries the cell's colour.
                for (int dy = 0; dy < 4; ++dy)
                    for (int dx = 0; dx < 4; ++dx)
                        QCOMPARE(image.pixel(c * 4 + dx, r * 4 + dy), expected);
            }
        QCOMPARE(image.pixel(4, 0), (Rgb{33, 145, 140}));  // 0.5
        QCOMPARE(image.pixel(4, 4), (Rgb{68, 1, 84}));     // -1 clamps to 0
        QCOMPARE(image.pixel(11, 7), (Rgb{253, 231, 37})); // 2 clamps to 1
    }

    void renderRangeMapping() {
        RowMatrix values(1, 3);
        values << 10.0f, 15.0f, 20.0f;
        const auto image = attnlens::renderHeatmap(values, ColorMap::Magma, 10.0f, 20.0f, 1);
        QCOMPARE(image.pixel(0, 0), (Rgb{0, 0, 4}));
        QCOMPARE(image.pixel(1, 0), (Rgb{183, 55, 121}));
        QCOMPARE(image.pixel(2, 0), (Rgb{252, 253, 191}));
    }

    void renderAutoRange() {
        RowMatrix values(2, 2);
        values << -3.0f, 1.0f, //
            5.0f, 1.0f;
        // hi <= lo: the matrix's own min (-3) and max (5).
        const auto image = attnlens::renderHeatmap(values, ColorMap::Viridis, 0.0f, 0.0f, 1);
        QCOMPARE(image.pixel(0, 0), (Rgb{68, 1, 84}));
        QCOMPARE(image.pixel(0, 1), (Rgb{253, 231, 37}));
        QCOMPARE(image.pixel(1, 0), (Rgb{33, 145, 140})); // (1 + 3) / 8 = 0.5
        // A constant matrix maps to the low end instead of dividing by zero.
        const RowMatrix constant = RowMatrix::Constant(2, 2, 4.0f);
        const auto flat = attnlens::renderHeatmap(constant, ColorMap::Viridis, 1.0f, -1.0f, 1);
        QCOMPARE(flat.pixel(1, 1), (Rgb{68, 1, 84}));
    }

    // The view's 0xffRRGGBB colouring equals the exporters' RGB, linear and log, with NaN, ±∞ and values
    // outside the range.
    void argbEqualsRgb() {
        RowMatrix v = RowMatrix::Random(37, 300).cwiseAbs();
        v(0, 0) = std::numeric_limits<float>::quiet_NaN();
        v(1, 1) = std::numeric_limits<float>::infinity();
        v(2, 2) = -std::numeric_limits<float>::infinity();
        v(3, 3) = 7.0f, v(4, 4) = -3.0f, v(5, 5) = 0.0f;
        for (attnlens::ColorScale scale : {attnlens::ColorScale::Linear, attnlens::ColorScale::Log}) {
            const attnlens::RgbImage rgb = attnlens::renderHeatmap(v, ColorMap::Magma, 0.01f, 0.9f, 1, scale);
            std::vector<uint32_t> argb(size_t(v.size() + 5 * v.rows()));
            attnlens::renderHeatmapArgb(v, ColorMap::Magma, 0.01f, 0.9f, scale, argb.data(), v.cols() + 5);
            for (int r = 0; r < v.rows(); ++r)
                for (int c = 0; c < v.cols(); ++c) {
                    const attnlens::Rgb p = rgb.pixel(c, r);
                    QCOMPARE(argb[size_t(r * (v.cols() + 5) + c)],
                             0xff000000u | uint32_t(p.r) << 16 | uint32_t(p.g) << 8 | p.b);
                }
        }
    }

    void renderRejectsBadCell() {
        const RowMatrix values = RowMatrix::Zero(2, 2);
        QVERIFY_THROWS_EXCEPTION(attnlens::Error,
                                 attnlens::renderHeatmap(values, ColorMap::Viridis, 0.0f, 1.0f, 0));
    }

    void renderEmpty() {
        const RowMatrix values(0, 0);
        const auto image = attnlens::renderHeatmap(values, ColorMap::Viridis, 0.0f, 1.0f, 3);
        QCOMPARE(image.width, 0);
        QCOMPARE(image.height, 0);
        QVERIFY(image.pixels.empty());
    }
};

QTEST_GUILESS_MAIN(TestColormap)
#include "test_colormap.moc"
