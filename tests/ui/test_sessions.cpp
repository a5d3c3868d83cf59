// Saved sessions (ui/shell/session.h), offscreen: for every page, save → open in a fresh window restores
// exactly the view (every saved setting read back equal, and the numbers on screen — matrices, maps, stages —
// equal); a session whose model folder or picture is missing asks, and cancel / skip / locate do what they
// say; bad session files (truncated, empty, not JSON, another format, a newer version, wrong types, an
// unknown page) give one clear message and change nothing; a session file dropped on the window and `attnlens
// SESSION.attnlens` open it; File → Open recent session / image remember what was saved and shown.

#include "support/json_diff.h"
#include "support/waits.h"
#include "ui/diffusion/diffusion_document.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/playground/playground_page.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/shell/session.h"
#include "ui/t2i/t2i_document.h"
#include "ui/t2i/t2i_page.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"
#include "ui/widgets/map_difference_window.h"

#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QMimeData>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QUrl>

#include <memory>

using namespace attnlens;
using namespace attnlens::ui;
using attnlens::test::diffJson;

namespace {

const QString kData = QStringLiteral(ATTNLENS_TEST_DATA);

// A window with the four pages on their built-in models, as the application builds it.
struct Window {
    MainWindow window;
    PlaygroundPage* playground = new PlaygroundPage;
    TranslatePage* translate = new TranslatePage;
    VisionPage* vision = new VisionPage;
    DiffusionPage* diffusion = new DiffusionPage;
    Window() {
        window.addPage("Attention", playground);
        window.addPage("Translate", translate);
        window.addPage("Vision", vision);
        window.addPage("Diffusion", diffusion);
    }
    bool idle() const {
        return !window.restoringSession() && translate->worker()->pendingJobs() == 0 && !vision->isBusy() &&
               !diffusion->isBusy();
    }
    // The session as saved, without the time it was saved.
    QJsonObject state() const {
        QJsonObject s = window.sessionState();
        s.remove("saved_at");
        return s;
    }
};

bool sameMatrix(const RowMatrix& a, const RowMatrix& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && a.size() > 0 && a == b;
}

// The four pages' saved states that differ between two sessions, with the keys that differ; empty when none.
QString differingPages(const QJsonObject& a, const QJsonObject& b) {
    QStringList out;
    for (const QString page : {"attention", "translate", "vision", "diffusion"})
        if (a["pages"][page] != b["pages"][page])
            out << page + ": " + diffJson(a["pages"][page].toObject(), b["pages"][page].toObject());
    return out.join("\n");
}

void writeText(const QString& path, const QByteArray& text) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

} // namespace

class TestSessions : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AttentionLensTests");
        QCoreApplication::setApplicationName("test_sessions");
        QStandardPaths::setTestModeEnabled(true); // the kept "before" sessions go to a test folder
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }
    void cleanupTestCase() {
        m_badWindow.reset(); // before the application goes
        QSettings().clear();
    }

    void everyPageRoundTrips();
    void pastedPictureTravelsInTheSession();
    void missingModelAsksAndCancelChangesNothing();
    void missingModelLocatedOrSkipped();
    void badSessionFilesChangeNothing_data();
    void badSessionFilesChangeNothing();
    void droppedSessionFileOpens();
    void commandLineOpensASession();
    void openedWhileThePagesStart();

private:
    QString path(const QString& name) const { return m_dir.filePath(name); }
    // Window A in a state far from the defaults on every page; returns the session file it saved.
    QString prepareAndSave(Window& a, const QString& name);
    QTemporaryDir m_dir;
    std::unique_ptr<Window> m_badWindow;
};

QString TestSessions::prepareAndSave(Window& a, const QString& name) {
    [&] {
        WAIT_UNTIL(a.idle() && a.translate->document()->hasModel() && a.vision->document()->hasImage());
    }();
    // Attention: a random example, resized, two heads, an edited value, a custom mask, a focused cell.
    PlaygroundModel& m = *a.playground->model();
    m.applyRandom(7);
    m.setSequenceLength(5);
    m.setHeads(2);
    m.setInputValue(PlaygroundModel::Input::Key, 1, 2, 0.75f);
    m.toggleMaskCell(0, 3);
    m.setSelectedHead(1);
    m.setFocus(3, 1);
    // Translate: beam search with a head off, stepped back, the decoder's layer 1 head 2 at word level, a
    // target token selected, a matrix pinned as A and the Difference tab shown.
    TranslatePage& t = *a.translate;
    t.setInput(QStringLiteral("Der Hund läuft schnell über die Straße."));
    t.setBeamWidth(3);
    MarianAblation ablation;
    ablation.setHeads(AttentionKind::Cross, {{0, 1}}, t.document()->model().model->config());
    t.setAblation(ablation); // translates
    [&] {
        WAIT_UNTIL(t.worker()->pendingJobs() == 0 && t.document()->snapshot() &&
                   t.document()->snapshot()->finished);
    }();
    t.goToStep(3);
    [&] { WAIT_UNTIL(t.worker()->pendingJobs() == 0 && t.document()->snapshot()->step == 3); }();
    t.document()->setKind(AttentionKind::Cross);
    t.document()->setLayer(0);
    t.pinDifference();
    t.document()->setKind(AttentionKind::DecoderSelf);
    t.document()->setLayer(1);
    t.document()->setHead(2);
    t.document()->setWordLevel(true);
    t.document()->setSelectedToken(TokenRef{TokenSide::Target, 1});
    t.showView(TranslatePage::View::Difference);
    // Vision: a picture file, two query patches averaged, key side, layer 1 head 0, a look, a head off.
    VisionPage& v = *a.vision;
    v.openImage(kData + "/vit/images/photo_97x61.png");
    [&] { WAIT_UNTIL(!v.isBusy() && v.imagePath().endsWith("photo_97x61.png")); }();
    v.document()->selectPatches({3, 10});
    v.pinMap(); // A: layer 0's map
    v.document()->setReduce(TokenReduce::Mean);
    v.document()->setKeySide(true);
    v.document()->setLayer(1);
    v.document()->setHead(0);
    v.document()->setOpacity(0.35f);
    v.document()->setColorMap(ColorMap::Viridis);
    v.setAblatedHeads({{0, 1}});
    [&] { WAIT_UNTIL(!v.isBusy()); }();
    // Diffusion: a short DDPM run of class 2, seed 5, shown at step 3 with a query pixel, layer 1, head 0.
    DiffusionPage& d = *a.diffusion;
    DiffusionSettings settings;
    settings.scheduler = SchedulerKind::Ddpm;
    settings.steps = 6;
    settings.seed = 5;
    settings.classLabel = 2;
    [&] { WAIT_UNTIL(d.document()->model() != nullptr); }();
    d.setSettings(settings);
    d.generate();
    [&] { WAIT_UNTIL(!d.isBusy() && d.document()->hasRun() && !d.document()->running()); }();
    d.document()->setCurrentStep(2);
    [&] { WAIT_UNTIL(!d.isBusy() && d.document()->currentMap().size() > 0); }();
    d.pinMap(); // A: step 2
    d.document()->setCurrentStep(3);
    d.document()->setLayer(1);
    d.document()->setHead(0);
    d.document()->setQuery(PixelRegion::pixel(5, 6));
    d.document()->setOnNoisy(true);
    [&] { WAIT_UNTIL(a.idle()); }();
    a.window.setCurrentPage(2);
    const QString file = path(name);
    if (!a.window.saveSession(file)) qWarning() << a.window.windowMessage();
    return file;
}

void TestSessions::everyPageRoundTrips() {
    Window a;
    const QString file = prepareAndSave(a, "full.attnlens");
    QVERIFY(QFile::exists(file));
    QCOMPARE(a.window.recentSessions().value(0), QFileInfo(file).absoluteFilePath());
    QVERIFY(a.window.recentImages().value(0).endsWith("photo_97x61.png"));

    Window b;
    WAIT_UNTIL(b.idle() && b.translate->document()->hasModel());
    QVERIFY2(b.window.openSession(file), qPrintable(b.window.windowMessage()));
    WAIT_UNTIL(b.idle());
    // Every saved setting reads back the same ...
    const QJsonObject sa = a.state(), sb = b.state();
    const QString differ = differingPages(sa, sb);
    QVERIFY2(differ.isEmpty(), qPrintable(differ));
    QCOMPARE(sb["page"].toString(), QString("vision"));
    // What B showed before is kept as a session, second in File → Open recent session.
    QCOMPARE(b.window.recentSessions().value(0), QFileInfo(file).absoluteFilePath());
    QVERIFY2(b.window.recentSessions().value(1).endsWith("before-last-open.attnlens"),
             qPrintable(b.window.recentSessions().join(", ")));
    QVERIFY(
        readSessionFile(b.window.recentSessions().value(1)).value("pages").toObject().contains("translate"));
    QCOMPARE(b.window.currentPage(), 2);
    // ... and so does what is on screen.
    QCOMPARE(b.playground->model()->projected(), a.playground->model()->projected());
    QCOMPARE(b.playground->model()->effectiveMask(), a.playground->model()->effectiveMask());
    QCOMPARE(b.translate->document()->snapshot()->step, 3);
    QVERIFY(sameMatrix(b.translate->document()->currentMatrix().values,
                       a.translate->document()->currentMatrix().values));
    QVERIFY(b.translate->hasPin());
    QCOMPARE(b.translate->currentView(), TranslatePage::View::Difference);
    QCOMPARE(b.translate->ablation().heads(AttentionKind::Cross), (std::vector<std::pair<int, int>>{{0, 1}}));
    QVERIFY(sameMatrix(b.vision->document()->currentMap(), a.vision->document()->currentMap()));
    QCOMPARE(b.vision->ablatedHeads(), a.vision->ablatedHeads());
    QVERIFY(b.vision->differenceWindow() && b.vision->differenceWindow()->hasPin());
    QVERIFY(sameMatrix(b.vision->differenceWindow()->pinnedMap(), a.vision->differenceWindow()->pinnedMap()));
    QVERIFY(!sameMatrix(b.vision->differenceWindow()->pinnedMap(), b.vision->document()->currentMap()));
    QVERIFY(b.diffusion->differenceWindow() && b.diffusion->differenceWindow()->hasPin());
    QVERIFY(sameMatrix(b.diffusion->differenceWindow()->pinnedMap(),
                       a.diffusion->differenceWindow()->pinnedMap()));
    QCOMPARE(b.diffusion->document()->currentStep(), 3);
    QVERIFY(sameMatrix(b.diffusion->document()->currentMap(), a.diffusion->document()->currentMap()));
    QCOMPARE(b.diffusion->document()->finalImage().pixels, a.diffusion->document()->finalImage().pixels);
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty()) {
        b.window.resize(1280, 800);
        b.window.show();
        QTest::qWait(300);
        b.window.grab().save(QString::fromLocal8Bit(dir) + "/session-restored.png");
    }
    // File → Open recent image shows the picture again on the Vision page.
    b.window.setCurrentPage(0);
    QVERIFY(b.window.openImage(kData + "/vit/images/small_11x7.png"));
    QCOMPARE(b.window.currentPage(), 2);
    WAIT_UNTIL(!b.vision->isBusy() && b.vision->imagePath().endsWith("small_11x7.png"));
    QVERIFY(b.window.recentImages().value(0).endsWith("small_11x7.png"));
}

void TestSessions::pastedPictureTravelsInTheSession() {
    Window a;
    WAIT_UNTIL(a.idle() && a.vision->document()->hasImage());
    QImage picture(40, 28, QImage::Format_RGB888);
    for (int y = 0; y < picture.height(); ++y)
        for (int x = 0; x < picture.width(); ++x)
            picture.setPixelColor(x, y, QColor(x * 6, y * 9, (x * y) % 256));
    a.vision->openImage(picture, QStringLiteral("pasted image"));
    WAIT_UNTIL(!a.vision->isBusy() && a.vision->imagePath().isEmpty());
    a.vision->document()->selectPatches({5});
    const QString file = path("pasted.attnlens");
    QVERIFY(a.window.saveSession(file));
    QVERIFY(a.state().value("pages").toObject().value("vision").toObject().contains("image_png"));

    Window b;
    WAIT_UNTIL(b.idle() && b.vision->document()->hasImage());
    QVERIFY(b.window.openSession(file));
    WAIT_UNTIL(b.idle());
    QCOMPARE(b.vision->document()->image()->image.pixels, a.vision->document()->image()->image.pixels);
    QVERIFY(sameMatrix(b.vision->document()->currentMap(), a.vision->document()->currentMap()));
}

void TestSessions::missingModelAsksAndCancelChangesNothing() {
    QJsonObject session{
        {"format", "attnlens-session"},
        {"version", 1},
        {"page", "translate"},
        {"pages", QJsonObject{{"translate", QJsonObject{{"model_dir", path("gone/opus-mt-de-en")},
                                                        {"input", "Guten Morgen"},
                                                        {"translated", true}}}}}};
    const QString file = path("missing.attnlens");
    writeText(file, QJsonDocument(session).toJson());
    Window w;
    WAIT_UNTIL(w.idle() && w.translate->document()->hasModel());
    const QJsonObject before = w.state();
    QList<MainWindow::MissingPath> asked;
    w.window.setLocator([&asked](const MainWindow::MissingPath& m) -> std::optional<QString> {
        asked << m;
        return std::nullopt; // Cancel
    });
    QVERIFY(!w.window.openSession(file));
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked[0].page, QString("translate"));
    QVERIFY(asked[0].folder);
    QVERIFY2(w.window.windowMessage().contains("missing") &&
                 w.window.windowMessage().contains("opus-mt-de-en") &&
                 w.window.windowMessage().contains("Nothing was changed"),
             qPrintable(w.window.windowMessage()));
    QVERIFY2(w.state() == before, qPrintable(diffJson(before, w.state())));
}

void TestSessions::missingModelLocatedOrSkipped() {
    const QString located = kData + "/marian/tiny-f32";
    QJsonObject translate{
        {"model_dir", path("gone/opus-mt-de-en")}, {"input", "ein Haus"}, {"translated", true}};
    QJsonObject vision{{"image_path", path("gone/photo.png")}, {"query", "cls"}};
    QJsonObject session{{"format", "attnlens-session"},
                        {"version", 1},
                        {"page", "translate"},
                        {"pages", QJsonObject{{"translate", translate}, {"vision", vision}}}};
    const QString file = path("locate.attnlens");
    writeText(file, QJsonDocument(session).toJson());
    Window w;
    WAIT_UNTIL(w.idle() && w.translate->document()->hasModel() && w.vision->document()->hasImage());
    const QString shownPicture = w.vision->imagePath();
    w.window.setLocator([&](const MainWindow::MissingPath& m) -> std::optional<QString> {
        return m.folder ? located : QString(); // locate the model, skip the picture
    });
    QVERIFY2(w.window.openSession(file), qPrintable(w.window.windowMessage()));
    WAIT_UNTIL(w.idle());
    QCOMPARE(w.translate->loadedModelDir(), located);
    QCOMPARE(w.translate->input(), QString("ein Haus"));
    QVERIFY(w.translate->document()->snapshot() && w.translate->document()->snapshot()->finished);
    QCOMPARE(w.vision->imagePath(), shownPicture); // skipped: the page keeps its picture
    QCOMPARE(w.window.currentPage(), 1);
}

void TestSessions::badSessionFilesChangeNothing_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("message");
    QJsonObject good{{"format", "attnlens-session"},
                     {"version", 1},
                     {"page", "attention"},
                     {"pages", QJsonObject{{"attention", QJsonObject{{"length", 3}}}}}};
    const QByteArray text = QJsonDocument(good).toJson();
    auto with = [&good](const QString& page, const QString& key, const QJsonValue& value) {
        QJsonObject s = good, pages = s["pages"].toObject(), p = pages[page].toObject();
        p.insert(key, value);
        pages.insert(page, p);
        s.insert("pages", pages);
        return QJsonDocument(s).toJson();
    };
    QTest::newRow("truncated") << text.left(text.size() / 2) << "truncated?";
    QTest::newRow("empty") << QByteArray() << "the file is empty";
    QTest::newRow("not JSON") << QByteArray("PK\x03\x04 zip bytes") << "not a readable session";
    QTest::newRow("another format") << QByteArray(R"({"format": "bertviz", "version": 1, "pages": {}})")
                                    << "not an Attention Lens session";
    QTest::newRow("newer version") << QByteArray(
                                          R"({"format": "attnlens-session", "version": 2, "pages": {}})")
                                   << "newer Attention Lens (session version 2)";
    QTest::newRow("version past any integer") // fuzz_session: its message converted 1.1e19 to long long
        << QByteArray(R"({"format": "attnlens-session", "version": 11111111111111111110, "pages": {}})")
        << "newer Attention Lens (session version 11111111111111110656)";
    QTest::newRow("version a string")
        << QByteArray(R"({"format": "attnlens-session", "version": "1", "pages": {}})")
        << "no valid \"version\"";
    QTest::newRow("pages not an object")
        << QByteArray(R"({"format": "attnlens-session", "version": 1, "pages": []})")
        << "\"pages\" must be an object";
    QTest::newRow("unknown page")
        << QByteArray(R"({"format": "attnlens-session", "version": 1, "pages": {"audio": {}}})")
        << "pages.audio: no such page";
    QTest::newRow("layer a string") << with("translate", "layer", "two")
                                    << "pages.translate.layer: expected an integer";
    QTest::newRow("kind unknown") << with("translate", "kind", "sideways")
                                  << "pages.translate.kind: expected one of encoder";
    QTest::newRow("beam too wide") << with("translate", "beam_width", 999) << "pages.translate.beam_width";
    QTest::newRow("query a number") << with("vision", "query", 5) << "pages.vision.query: expected \"cls\"";
    QTest::newRow("opacity out of range") << with("vision", "opacity", 3.5) << "pages.vision.opacity";
    QTest::newRow("picture not PNG") << with("vision", "image_png", "bm90IGEgcGljdHVyZQ==")
                                     << "pages.vision.image_png";
    QTest::newRow("heads that do not divide") << with("attention", "heads", 3) << "pages.attention.heads";
    QTest::newRow("edited without values") << with("attention", "preset", "edited") << "pages.attention.q";
    QTest::newRow("diffusion steps negative") << with("diffusion", "steps", -4) << "pages.diffusion.steps";
    QTest::newRow("pinned map of strings")
        << with("vision", "pinned", QJsonObject{{"values", QJsonArray{QJsonArray{"a"}}}})
        << "pages.vision.pinned: expected finite numbers";
    QTest::newRow("query of three numbers")
        << with("diffusion", "query", QJsonArray{1, 2, 3}) << "pages.diffusion.query";
}

void TestSessions::badSessionFilesChangeNothing() {
    QFETCH(QByteArray, content);
    QFETCH(QString, message);
    std::unique_ptr<Window>& w = m_badWindow; // one window for every row (the pages load once)
    if (!w) w = std::make_unique<Window>();
    WAIT_UNTIL(w->idle() && w->translate->document()->hasModel());
    w->playground->model()->setSequenceLength(6);
    const QJsonObject before = w->state();
    const QString file = path("bad.attnlens");
    writeText(file, content);
    QVERIFY(!w->window.openSession(file));
    QVERIFY2(w->window.windowMessage().contains(message), qPrintable(w->window.windowMessage()));
    QVERIFY2(w->window.windowMessage().contains("bad.attnlens"), qPrintable(w->window.windowMessage()));
    QVERIFY2(w->state() == before, qPrintable(diffJson(before, w->state())));
    QCOMPARE(w->playground->model()->sequenceLength(), 6);
}

void TestSessions::droppedSessionFileOpens() {
    QJsonObject session{{"format", "attnlens-session"},
                        {"version", 1},
                        {"page", "attention"},
                        {"pages", QJsonObject{{"attention", QJsonObject{{"length", 3},
                                                                        {"preset", "identity"},
                                                                        {"focus", QJsonArray{2, 0}}}}}}};
    const QString file = path("dropped.attnlens");
    writeText(file, QJsonDocument(session).toJson());
    Window w;
    w.window.setCurrentPage(1);
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(file)});
    QVERIFY(w.window.dropModelFolder(&mime));
    QCOMPARE(w.window.currentPage(), 0);
    QCOMPARE(w.playground->model()->sequenceLength(), 3);
    QCOMPARE(w.playground->model()->preset(), PlaygroundModel::Preset::Identity);
    QCOMPARE(w.playground->model()->focusQuery(), 2);
    // Another file is not taken for a session.
    QMimeData other;
    other.setUrls({QUrl::fromLocalFile(kData + "/vit/images/photo_97x61.png")});
    QVERIFY(!w.window.dropModelFolder(&other));
    WAIT_UNTIL(w.idle());
}

void TestSessions::commandLineOpensASession() {
    Window a;
    const QString file = prepareAndSave(a, "cli.attnlens");
    const QString shot = path("session.png");
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    gui.setProcessEnvironment(env);
    gui.start(QStringLiteral(ATTNLENS_GUI_PATH), {file, "--size", "1280x800", "--screenshot", shot});
    QVERIFY(gui.waitForFinished(attnlens::test::kHangMs));
    QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
    const QImage image(shot);
    QCOMPARE(image.size(), QSize(1280, 800));
    if (const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR"); !dir.isEmpty())
        QFile::copy(shot, QString::fromLocal8Bit(dir) + "/session-cli.png");
}

// What `attnlens SESSION` and an autosave's Restore do: open a session while every page still loads its
// built-in model (the monkey test found the built-in model's late result ending the restore: a U-Net run
// that cancelled the session's own model, the first sample replacing the session's picture). Models other
// than the built-in ones, and a translation whose input was edited after it was translated: both the
// translation and the edited text come back.
void TestSessions::openedWhileThePagesStart() {
    Window a;
    WAIT_UNTIL(a.idle() && a.vision->document()->hasImage() && a.diffusion->document()->model());
    QVERIFY(a.window.openModel(kData + "/vit/rgb"));
    QVERIFY(a.window.openModel(kData + "/unet/bare-head8"));
    WAIT_UNTIL(a.idle() && a.diffusion->loadedModelDir().endsWith("bare-head8") &&
               a.vision->loadedModelDir().endsWith("rgb"));
    a.vision->openImage(kData + "/vit/images/photo_97x61.png");
    a.diffusion->generate();
    WAIT_UNTIL(a.idle() && a.vision->imagePath().endsWith("photo_97x61.png") &&
               a.diffusion->document()->hasRun() && !a.diffusion->document()->running());
    a.translate->setInput(QStringLiteral("Ein neuer Satz, noch nicht übersetzt"));
    const QString file = path("at-start.attnlens");
    QVERIFY(a.window.saveSession(file));
    const QJsonObject saved = readSessionFile(file);
    QCOMPARE(saved["pages"]["translate"]["draft"].toString(), a.translate->input());

    Window b;             // not waiting for its built-in models ...
    QThread::msleep(500); // ... whose loads end meanwhile on the workers, their results not yet taken
    QVERIFY2(b.window.openSession(file), qPrintable(b.window.windowMessage()));
    WAIT_UNTIL(b.idle());
    const QJsonObject sa = a.state(), sb = b.state();
    const QString differ = differingPages(sa, sb);
    QVERIFY2(differ.isEmpty(), qPrintable(differ));
    QCOMPARE(b.translate->input(), a.translate->input());
    QCOMPARE(b.translate->document()->snapshot()->step, a.translate->document()->snapshot()->step);
    QVERIFY(b.vision->imagePath().endsWith("photo_97x61.png"));
    QVERIFY(b.diffusion->loadedModelDir().endsWith("bare-head8"));
    QVERIFY(sameMatrix(b.diffusion->document()->currentMap(), a.diffusion->document()->currentMap()));

    // Text to image: its built-in pipeline loads for longer than a tiny one, and does not stop on Cancel
    MainWindow c;
    auto* t2i = new TextToImagePage;
    c.addPage("Text to image", t2i);
    WAIT_UNTIL(!t2i->isBusy() && !t2i->loadedModelDir().isEmpty());
    QVERIFY(c.openModel(kData + "/t2i/tiny-pipe"));
    WAIT_UNTIL(!t2i->isBusy() && t2i->loadedModelDir().endsWith("tiny-pipe"));
    t2i->generate();
    WAIT_UNTIL(!t2i->isBusy() && t2i->document()->hasRun());
    QVERIFY(c.saveSession(file));
    MainWindow d;
    auto* restored = new TextToImagePage;
    d.addPage("Text to image", restored);
    QVERIFY2(d.openSession(file), qPrintable(d.windowMessage()));
    WAIT_UNTIL(!d.restoringSession() && !restored->isBusy());
    QVERIFY2(restored->loadedModelDir().endsWith("tiny-pipe"), qPrintable(restored->loadedModelDir()));
    QCOMPARE(restored->saveSession(), t2i->saveSession());
}

QTEST_MAIN(TestSessions)
#include "test_sessions.moc"
