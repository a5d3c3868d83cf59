// Preprocessing against PIL + ViTImageProcessor goldens (tools/golden/vit_reference.py), processor
// config parsing and patch geometry.

#include "core/util/error.h"
#include "core/vision/patch_grid.h"
#include "core/vision/preprocess.h"
#include "support/vit_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>

using namespace attnlens;

class TestImagePreprocess : public QObject {
    Q_OBJECT
private slots:
    void matchesPil_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("image");
        QTest::addColumn<int>("channels");
        // photo_97x61 shrinks to the model size, small_11x7 enlarges; grey converts RGB → L first;
        // bare uses bicubic (resample 3) to 20×20; rgb-interp resizes to a non-square 32×24.
        QTest::newRow("rgb shrink bilinear") << "rgb"
                                             << "photo_97x61" << 3;
        QTest::newRow("rgb enlarge bilinear") << "rgb"
                                              << "small_11x7" << 3;
        QTest::newRow("grey shrink") << "grey"
                                     << "photo_97x61" << 1;
        QTest::newRow("grey enlarge") << "grey"
                                      << "small_11x7" << 1;
        QTest::newRow("grey file") << "grey"
                                   << "grey_13x9" << 1;
        QTest::newRow("bare shrink bicubic") << "bare"
                                             << "photo_97x61" << 3;
        QTest::newRow("bare enlarge bicubic") << "bare"
                                              << "small_11x7" << 3;
        QTest::newRow("non-square target") << "rgb-interp"
                                           << "photo_97x61" << 3;
    }
    void matchesPil() {
        QFETCH(QString, model);
        QFETCH(QString, image);
        QFETCH(int, channels);
        const auto config = ImageProcessorConfig::load(vittest::modelDir(model.toStdString()));
        const ImageU8 img = loadImage(vittest::imagePath(image.toStdString() + ".png"));
        const PreprocessedImage in = preprocessImage(img, config, channels);
        const Tensor pixels =
            vittest::golden(model.toStdString(), image.toStdString(), "pixels"); // [C, H, W]
        const Tensor resized =
            vittest::golden(model.toStdString(), image.toStdString(), "resized"); // [H, W, C]
        VIT_COMPARE_SHAPE(in.pixels, pixels);
        QCOMPARE(in.resized.height, int(resized.dim(0)));
        QCOMPARE(in.resized.width, int(resized.dim(1)));
        QCOMPARE(in.resized.channels, int(resized.dim(2)));
        // The 8-bit resize is bit-exact with PIL (0 grey levels); the acceptance bound is 1 grey level.
        int worstLevels = 0;
        for (size_t i = 0; i < in.resized.pixels.size(); ++i)
            worstLevels = std::max(worstLevels, std::abs(int(in.resized.pixels[i]) - int(resized.data()[i])));
        QCOMPARE(worstLevels, 0);
        // After rescale and normalise, one grey level is 1/255/std; we match to float rounding.
        const double diff = vittest::maxAbsDiff(in.pixels.data(), pixels.data(), pixels.numel());
        qInfo("max |pixel - golden| = %.3g (one grey level here is %.3g)", diff,
              1.0 / 255.0 / *std::min_element(config.imageStd.begin(), config.imageStd.end()));
        QVERIFY(diff <= 1e-6);
        QCOMPARE(in.imageWidth, img.width);
        QCOMPARE(in.imageHeight, img.height);
    }

    void resizeMatchesPilEveryFilter() {
        // resize_cases.safetensors: PIL resizes of resize_src_53x37.png, "<filter>_<w>x<h>" [h, w, 3].
        const ImageU8 src = loadImage(vittest::imagePath("resize_src_53x37.png"));
        const auto cases = TensorFile::open(vittest::dataDir() / "resize_cases.safetensors");
        const std::map<std::string, ResampleFilter> filters = {{"lanczos", ResampleFilter::Lanczos},
                                                               {"bilinear", ResampleFilter::Bilinear},
                                                               {"bicubic", ResampleFilter::Bicubic},
                                                               {"box", ResampleFilter::Box},
                                                               {"hamming", ResampleFilter::Hamming}};
        int checked = 0, worst = 0;
        for (const auto& info : cases.tensors()) {
            const auto sep = info.name.find('_');
            const ResampleFilter f = filters.at(info.name.substr(0, sep));
            const Tensor want = cases.load(info); // [h, w, 3]
            const ImageU8 got = resizePil(src, int(want.dim(1)), int(want.dim(0)), f);
            QCOMPARE(got.pixels.size(), size_t(want.numel()));
            for (size_t i = 0; i < got.pixels.size(); ++i)
                worst = std::max(worst, std::abs(int(got.pixels[i]) - int(want.data()[i])));
            QVERIFY2(worst == 0, info.name.c_str());
            ++checked;
        }
        QCOMPARE(checked, 35);
        // The grey (1-channel) path uses the same kernels: compare with the R channel resized alone.
        ImageU8 red(src.width, src.height, 1);
        for (int y = 0; y < src.height; ++y)
            for (int x = 0; x < src.width; ++x)
                red.at(x, y) = src.at(x, y, 0);
        const Tensor want = cases.load("bicubic_29x40");
        const ImageU8 got = resizePil(red, 29, 40, ResampleFilter::Bicubic);
        for (int y = 0; y < 40; ++y)
            for (int x = 0; x < 29; ++x)
                QCOMPARE(int(got.at(x, y)), int(want.at({y, x, 0})));
    }

    void sameSizeIsCopy() {
        const ImageU8 img = loadImage(vittest::imagePath("small_11x7.png"));
        QVERIFY(resizePil(img, 11, 7).pixels == img.pixels);
        // One axis only: rows untouched by a width-only resize keep their count.
        const ImageU8 wide = resizePil(img, 20, 7);
        QCOMPARE(wide.width, 20);
        QCOMPARE(wide.height, 7);
        QVERIFY_THROWS_EXCEPTION(Error, resizePil(img, 5, 5, ResampleFilter::Nearest));
    }

    void constantImageStaysConstant() {
        // Normalised weights: a flat image resizes to the same flat value with every filter.
        ImageU8 flat(37, 23, 3);
        std::fill(flat.pixels.begin(), flat.pixels.end(), uint8_t(201));
        for (auto f : {ResampleFilter::Bilinear, ResampleFilter::Bicubic, ResampleFilter::Lanczos,
                       ResampleFilter::Box, ResampleFilter::Hamming}) {
            for (auto [w, h] : {std::pair{5, 4}, std::pair{80, 50}}) {
                const ImageU8 r = resizePil(flat, w, h, f);
                QVERIFY(std::all_of(r.pixels.begin(), r.pixels.end(), [](uint8_t v) { return v == 201; }));
            }
        }
    }

    void configParsing() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        const auto defaults = ImageProcessorConfig::load(dir); // no preprocessor_config.json
        QCOMPARE(defaults.height, 224);
        QCOMPARE(defaults.width, 224);
        QCOMPARE(int(defaults.resample), 2);
        QCOMPARE(defaults.imageMean.size(), size_t(3));
        QCOMPARE(defaults.imageMean[0], 0.5f);
        const auto bare = ImageProcessorConfig::load(vittest::modelDir("bare")); // "size": 20, resample 3
        QCOMPARE(bare.height, 20);
        QCOMPARE(bare.width, 20);
        QCOMPARE(int(bare.resample), int(ResampleFilter::Bicubic));
        std::ofstream(dir / "preprocessor_config.json") << R"({"size": {"shortest_edge": 224}})";
        QVERIFY_THROWS_EXCEPTION(Error, ImageProcessorConfig::load(dir));
        std::ofstream(dir / "preprocessor_config.json") << R"({"image_std": [0.5, 0, 0.5]})";
        QVERIFY_THROWS_EXCEPTION(Error, ImageProcessorConfig::load(dir));
        // A 3-entry mean for a 1-channel model is accepted only when the entries agree.
        ImageProcessorConfig c;
        c.height = c.width = 4;
        ImageU8 img(4, 4, 3);
        QCOMPARE(preprocessImage(img, c, 1).pixels.dim(0), int64_t(1));
        c.imageMean = {0.1f, 0.2f, 0.3f};
        QVERIFY_THROWS_EXCEPTION(Error, preprocessImage(img, c, 1));
        QVERIFY_THROWS_EXCEPTION(Error, preprocessImage(ImageU8(), c, 3));
    }

    void patchGeometry() {
        // 97×61 image resized to 16×16, patch 4 → 4×4 grid; patch 5 is row 1, col 1.
        const PatchGrid grid(97, 61, 16, 16, 4);
        QCOMPARE(grid.rows(), 4);
        QCOMPARE(grid.cols(), 4);
        QCOMPARE(grid.count(), 16);
        QCOMPARE(grid.row(5), 1);
        QCOMPARE(grid.col(5), 1);
        QCOMPARE(grid.tokenOfPatch(5), 6);
        QCOMPARE(grid.tokenLabel(0), std::string("CLS"));
        QCOMPARE(grid.tokenLabel(6), std::string("r1c1"));
        QCOMPARE(grid.tokenLabel(16), std::string("r3c3"));
        QVERIFY_THROWS_EXCEPTION(Error, grid.tokenLabel(17));
        const RectF r = grid.imageRect(5);
        QCOMPARE(r.x, 4 * 97.0 / 16);
        QCOMPARE(r.y, 4 * 61.0 / 16);
        QCOMPARE(r.width, 4 * 97.0 / 16);
        QCOMPARE(r.height, 4 * 61.0 / 16);
        const RectF last = grid.imageRect(15);
        QCOMPARE(last.x + last.width, 97.0);
        QCOMPARE(last.y + last.height, 61.0);
        for (int i = 0; i < grid.count(); ++i) {
            const RectF ri = grid.imageRect(i);
            QCOMPARE(grid.patchAt(ri.x + ri.width / 2, ri.y + ri.height / 2), i);
        }
        QCOMPARE(grid.patchAt(-0.1, 3), -1);
        QCOMPARE(grid.patchAt(97.0, 3), -1);
        QCOMPARE(grid.patchAt(0, 0), 0);
        // Non-square input 32 wide × 24 high: 6 rows × 8 cols.
        const PatchGrid g2(97, 61, 32, 24, 4);
        QCOMPARE(g2.rows(), 6);
        QCOMPARE(g2.cols(), 8);
        QCOMPARE(g2.inputRect(9).x, 4.0);
        QCOMPARE(g2.inputRect(9).y, 4.0);
        QVERIFY_THROWS_EXCEPTION(Error, grid.imageRect(16));
        QVERIFY_THROWS_EXCEPTION(Error, PatchGrid(10, 10, 3, 3, 4));
    }
};

QTEST_GUILESS_MAIN(TestImagePreprocess)
#include "test_image_preprocess.moc"
