// Image loading: formats, EXIF orientation, alpha, 16-bit, grey, and bad files (clear errors, bounded
// memory). Fixtures: tests/data/vit/images (tools/golden/make_vit_fixtures.py).

#include "core/util/error.h"
#include "core/vision/image_io.h"
#include "support/vit_fixtures.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace attnlens;

namespace {

std::vector<uint8_t> readBytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void writeBytes(const std::filesystem::path& p, const std::vector<uint8_t>& bytes) {
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

uint32_t crc32Of(const std::vector<uint8_t>& bytes) { // PNG's CRC-32 (ISO 3309), bitwise
    uint32_t c = 0xFFFFFFFFu;
    for (uint8_t b : bytes) {
        c ^= b;
        for (int k = 0; k < 8; ++k)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

void appendChunk(std::vector<uint8_t>& png, const char* type, const std::vector<uint8_t>& data) {
    const uint32_t n = static_cast<uint32_t>(data.size());
    for (int s = 24; s >= 0; s -= 8)
        png.push_back(static_cast<uint8_t>(n >> s));
    std::vector<uint8_t> body(type, type + 4);
    body.insert(body.end(), data.begin(), data.end());
    png.insert(png.end(), body.begin(), body.end());
    const uint32_t crc = crc32Of(body);
    for (int s = 24; s >= 0; s -= 8)
        png.push_back(static_cast<uint8_t>(crc >> s));
}

// A well-formed PNG whose IHDR claims width × height (8-bit RGB) with a tiny (wrong-sized) IDAT.
std::vector<uint8_t> pngClaiming(uint32_t width, uint32_t height) {
    std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    std::vector<uint8_t> ihdr;
    for (uint32_t v : {width, height})
        for (int s = 24; s >= 0; s -= 8)
            ihdr.push_back(static_cast<uint8_t>(v >> s));
    ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
    appendChunk(png, "IHDR", ihdr);
    // A zlib stream with one stored deflate block holding 4 bytes (adler32 of {0,1,2,3} = 0x000E0007).
    const std::vector<uint8_t> idat = {0x78, 0x01, 0x01, 0x04, 0x00, 0xFB, 0xFF, 0,
                                       1,    2,    3,    0x00, 0x0E, 0x00, 0x07};
    appendChunk(png, "IDAT", idat);
    appendChunk(png, "IEND", {});
    return png;
}

void expectError(const std::function<void()>& fn, const QString& fragment) {
    try {
        fn();
        QFAIL(qPrintable("no error; expected one containing '" + fragment + "'"));
    } catch (const Error& e) {
        if (!QString::fromStdString(e.what()).contains(fragment))
            QFAIL(qPrintable("error '" + QString::fromStdString(e.what()) + "' does not mention '" +
                             fragment + "'"));
    }
}

} // namespace

class TestImageIo : public QObject {
    Q_OBJECT
private slots:
    void pngPixelsPinned() {
        const ImageU8 img = loadImage(vittest::imagePath("small_11x7.png"));
        QCOMPARE(img.width, 11);
        QCOMPARE(img.height, 7);
        QCOMPARE(img.channels, 3);
        // Values read with PIL: [0,0] = (129,241,15), [y=6,x=10] = (55,2,14), [y=3,x=5] = (249,136,212).
        QCOMPARE(int(img.at(0, 0, 0)), 129);
        QCOMPARE(int(img.at(0, 0, 1)), 241);
        QCOMPARE(int(img.at(0, 0, 2)), 15);
        QCOMPARE(int(img.at(10, 6, 0)), 55);
        QCOMPARE(int(img.at(5, 3, 2)), 212);
    }

    void losslessFormatsAgree_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("bmp") << "small_11x7.bmp";
        QTest::newRow("tiff") << "small_11x7.tiff";
        QTest::newRow("webp-lossless") << "small_11x7.webp";
        QTest::newRow("png-alpha-dropped") << "small_11x7_rgba.png";
        QTest::newRow("png-16bit-high-byte") << "small_11x7_rgb16.png";
    }
    void losslessFormatsAgree() {
        QFETCH(QString, file);
        const ImageU8 ref = loadImage(vittest::imagePath("small_11x7.png"));
        const ImageU8 img = loadImage(vittest::imagePath(file.toStdString()));
        QCOMPARE(img.width, ref.width);
        QCOMPARE(img.height, ref.height);
        QCOMPARE(img.channels, 3);
        QVERIFY(img.pixels == ref.pixels);
    }

    void greyStaysGrey() {
        const ImageU8 g = loadImage(vittest::imagePath("grey_13x9.png"));
        QCOMPARE(g.channels, 1);
        QCOMPARE(g.width, 13);
        QCOMPARE(int(g.at(0, 0)), 175);
        QCOMPARE(int(g.at(12, 8)), 18);
        const ImageU8 g16 = loadImage(vittest::imagePath("grey_13x9_16bit.png"));
        QCOMPARE(g16.channels, 1);
        QVERIFY(g16.pixels == g.pixels);
        const ImageU8 rgb = toRgb(g);
        QCOMPARE(rgb.channels, 3);
        QCOMPARE(int(rgb.at(12, 8, 2)), 18);
        QVERIFY(toGrey(rgb).pixels == g.pixels); // the luma weights sum to 65536: grey survives exactly
    }

    void greyConversionIsPils() {
        // PIL: Image.fromarray(small).convert("L")[3, 5] == 178 for RGB (249,136,212).
        const ImageU8 img = loadImage(vittest::imagePath("small_11x7.png"));
        QCOMPARE(int(toGrey(img).at(5, 3)), 178);
    }

    void exifOrientationApplied() {
        // Stored 8×4 with red left / blue right and orientation 6: upright it is 4×8, red on top.
        const ImageU8 img = loadImage(vittest::imagePath("exif_rotate6_8x4.jpg"));
        QCOMPARE(img.width, 4);
        QCOMPARE(img.height, 8);
        QVERIFY(img.at(0, 0, 0) > 200 && img.at(0, 0, 2) < 60);
        QVERIFY(img.at(3, 7, 2) > 200 && img.at(3, 7, 0) < 60);
    }

    void headerOnly() {
        const auto bytes = readBytes(vittest::imagePath("photo_97x61.png"));
        const ImageHeader h = readImageHeader(bytes, "photo");
        QCOMPARE(int(h.format), int(ImageFormat::Png));
        QCOMPARE(h.width, 97);
        QCOMPARE(h.height, 61);
        for (const char* f :
             {"small_11x7.bmp", "small_11x7.tiff", "small_11x7.webp", "exif_rotate6_8x4.jpg"}) {
            const ImageHeader hh = readImageHeader(readBytes(vittest::imagePath(f)), f);
            QVERIFY2(hh.width == (f[0] == 'e' ? 8 : 11) && hh.height == (f[0] == 'e' ? 4 : 7), f);
        }
    }

    void badFiles() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        expectError([&] { loadImage(dir / "missing.png"); }, "not found");
        writeBytes(dir / "empty.png", {});
        expectError([&] { loadImage(dir / "empty.png"); }, "empty file");
        writeBytes(dir / "text.png", {'h', 'e', 'l', 'l', 'o', '\n'});
        expectError([&] { loadImage(dir / "text.png"); }, "not a supported image");

        auto png = readBytes(vittest::imagePath("photo_97x61.png"));
        png.resize(png.size() / 2);
        writeBytes(dir / "truncated.png", png);
        expectError([&] { loadImage(dir / "truncated.png"); }, "truncated PNG");
        std::vector<uint8_t> stub(png.begin(), png.begin() + 20);
        writeBytes(dir / "stub.png", stub);
        expectError([&] { loadImage(dir / "stub.png"); }, "truncated");

        auto jpg = readBytes(vittest::imagePath("exif_rotate6_8x4.jpg"));
        jpg.resize(jpg.size() - 40);
        writeBytes(dir / "truncated.jpg", jpg);
        expectError([&] { loadImage(dir / "truncated.jpg"); }, "truncated JPEG");

        writeBytes(dir / "zero.png", pngClaiming(0, 0));
        expectError([&] { loadImage(dir / "zero.png"); }, "no pixels");
    }

    void webpWithDicomSignatureIsRefused() {
        // Found by tests/fuzz/fuzz_image: a RIFF/WEBP header (our sniffing: WebP) with "DICM" at byte 128.
        // OpenCV's WebP check failed on it and its DICOM decoder (GDCM) took the file, allocating the 2.4 GB
        // a length field claimed. Refused before decoding now.
        const std::vector<uint8_t> bytes{
            0x52, 0x49, 0x46, 0x46, 0x50, 0x01, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x4c,
            0x43, 0xff, 0x0a, 0x00, 0x2f, 0x0a, 0x80, 0x01, 0x00, 0x67, 0xc2, 0xe3, 0x00, 0x00, 0x88, 0x28,
            0xdb, 0xb6, 0xc6, 0x68, 0x5f, 0x3b, 0xff, 0x52, 0x49, 0x46, 0x46, 0x50, 0x01, 0x00, 0x00, 0x57,
            0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x4c, 0x43, 0xff, 0x0a, 0x00, 0x2f, 0x0a, 0x80, 0x01, 0x00,
            0x67, 0xc2, 0xe3, 0x00, 0x00, 0x88, 0x28, 0xdb, 0xb6, 0xc6, 0x68, 0x5f, 0x3b, 0xff, 0xd8, 0x87,
            0x57, 0xf6, 0xfc, 0x47, 0xfc, 0x03, 0x31, 0x00, 0xee, 0x37, 0xe9, 0xfd, 0x78, 0xa6, 0x81, 0x00,
            0x60, 0x60, 0x69, 0x00, 0x0a, 0x70, 0x2f, 0xff, 0xe2, 0x76, 0x6a, 0x2d, 0x15, 0xd9, 0x41, 0x24,
            0x7a, 0x97, 0x20, 0xd6, 0x32, 0xb2, 0x30, 0xd3, 0xa3, 0x90, 0x53, 0x92, 0xcb, 0xa1, 0xf6, 0x56,
            0x44, 0x49, 0x43, 0x4d, 0xc5, 0xff, 0xd8, 0xff, 0x3f, 0x3f, 0x01, 0x63, 0x92, 0xe1, 0x08, 0x00,
        };
        QTemporaryDir tmp;
        const std::filesystem::path path = std::filesystem::path(tmp.path().toStdString()) / "dicm.webp";
        writeBytes(path, bytes);
        expectError([&] { loadImage(path); }, "DICOM");
    }

    void hugeImageRejectedWithoutDecoding() {
        // 30000×30000 RGB would need 2.7 GB: the header check must refuse it before any allocation.
        QTemporaryDir tmp;
        const std::filesystem::path path = std::filesystem::path(tmp.path().toStdString()) / "huge.png";
        writeBytes(path, pngClaiming(30000, 30000));
        QElapsedTimer timer;
        timer.start();
        expectError([&] { loadImage(path); }, "too large");
        QVERIFY(timer.elapsed() < 1000);
        // The limit is an option: a 4×4 claim passes the guard (then fails to decode its bogus data).
        LoadOptions tight;
        tight.maxPixels = 15;
        writeBytes(path, pngClaiming(4, 4));
        expectError([&] { loadImage(path, tight); }, "too large");
    }

    // A TIFF naming its width twice (found by fuzz_image): libtiff decodes with the first, 262 155 × 1 795
    // (1.4 GB), so a check of the last (1) would let it through. Refused from the header, before any
    // decoding.
    void tiffSizeGivenTwiceRefused() {
        std::vector<uint8_t> b = {'I', 'I', 42, 0, 8, 0, 0, 0, 3, 0};
        const auto entry = [&b](uint16_t tag, uint16_t type, uint32_t value) {
            const uint8_t e[12] = {
                uint8_t(tag),        uint8_t(tag >> 8),    uint8_t(type),       0, 1, 0, 0, 0, uint8_t(value),
                uint8_t(value >> 8), uint8_t(value >> 16), uint8_t(value >> 24)};
            b.insert(b.end(), e, e + 12);
        };
        entry(256, 4, 262155);
        entry(257, 4, 1795);
        entry(256, 3, 1);
        b.insert(b.end(), {0, 0, 0, 0});
        expectError([&] { (void)readImageHeader(b, "twice.tif"); }, "given twice");
    }
};

QTEST_GUILESS_MAIN(TestImageIo)
#include "test_image_io.moc"
