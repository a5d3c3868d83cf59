// Issue 46: a seeded monkey test of the whole window — every page with its built-in model,
// ATTNLENS_MONKEY_ACTIONS random actions (default 500: what CI runs, under ASan + UBSan in its first stage)
// from ATTNLENS_MONKEY_SEED (default 1): clicks on any visible enabled button, text typed into any line edit
// (good, empty, long, odd), combo boxes, spin boxes and sliders set anywhere in their range, keys (arrows,
// paging, Escape, Return, Tab, Ctrl+Z, Ctrl+Shift+Z), menu actions (not Quit/Close), wheel turns (with and
// without Ctrl) and clicks at random points of any widget, window resizes, Cancel at random moments, models
// and images opened (good ones and bad ones from the fixtures), sessions saved and opened again. Modal
// dialogs and popup menus an action opens are closed by a timer (a file dialog cannot be driven here). After
// each action the event loop runs a little; the invariants: nothing crashes (a sanitizer report fails the
// suite), the window is still there, and at the end every page finishes or cancels its work and shows either
// a model or a message, and nothing the user made is lost: the window's autosave (started as main() starts
// it) holds its last state, and a new window started after it (as after a crash) offers it and restores it
// key for key (a session that does not is kept as monkey-unrestored.attnlens in the temp folder). GUI stalls
// (gaps between 10 ms heartbeats) over 250 ms are listed; ATTNLENS_MONKEY_MAX_STALL_MS=250 fails the run on
// them (a quiet machine, release build: what the note's long runs use). The log names the seed and the last
// actions (ATTNLENS_MONKEY_TRACE=1: every action on stderr as it is done, for a crash), so a failure can be
// replayed:
//   ATTNLENS_MONKEY_SEED=7 ATTNLENS_MONKEY_ACTIONS=10000 ATTNLENS_MONKEY_MAX_STALL_MS=250 tests/test_monkey

#include "support/json_diff.h"
#include "support/waits.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/playground/playground_page.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/shell/session.h"
#include "ui/shell/session_autosave.h"
#include "ui/t2i/t2i_page.h"
#include "ui/text/text_page.h"
#include "ui/translate/translate_page.h"
#include "ui/vision/vision_page.h"

#include <QAbstractButton>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPointer>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <random>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

const QString kData = QStringLiteral(ATTNLENS_TEST_DATA);

int envInt(const char* name, int fallback) {
    bool ok = false;
    const int v = qEnvironmentVariableIntValue(name, &ok);
    return ok ? v : fallback;
}

template <typename T> QList<T*> usable(QWidget* root) {
    QList<T*> out;
    for (T* w : root->findChildren<T*>())
        if (w->isVisible() && w->isEnabled()) out.push_back(w);
    return out;
}

class Monkey {
public:
    Monkey(MainWindow& window, QList<WorkspacePage*> pages, uint32_t seed)
        : m_window(window), m_pages(std::move(pages)), m_rng(seed) {}

    // One random action; returns what it did (for the log).
    QString act() {
        using Action = QString (Monkey::*)();
        static const std::vector<std::pair<int, Action>> kActions = {
            {6, &Monkey::switchPage}, {20, &Monkey::clickButton}, {8, &Monkey::typeText},
            {8, &Monkey::setCombo},   {6, &Monkey::setSpin},      {5, &Monkey::setSlider},
            {8, &Monkey::pressKey},   {4, &Monkey::triggerMenu},  {6, &Monkey::turnWheel},
            {8, &Monkey::clickPoint}, {2, &Monkey::resizeWindow}, {4, &Monkey::cancel},
            {2, &Monkey::openModel},  {2, &Monkey::openImage},    {1, &Monkey::session}};
        int total = 0;
        for (const auto& a : kActions)
            total += a.first;
        int pick = pickInt(0, total - 1);
        for (const auto& a : kActions) {
            if (pick < a.first) return (this->*a.second)();
            pick -= a.first;
        }
        return {};
    }

private:
    int pickInt(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(m_rng); }
    template <typename T> T* pick(const QList<T*>& list) {
        return list.isEmpty() ? nullptr : list[pickInt(0, int(list.size()) - 1)];
    }
    QWidget* currentPage() { // the page shown (the whole window for the playground)
        for (WorkspacePage* p : m_pages)
            if (p->isVisible()) return p;
        return &m_window;
    }
    static QString name(const QObject* o) {
        return QString::fromLatin1(o->metaObject()->className()) + "'" + o->objectName() + "'";
    }

    QString switchPage() {
        auto* list = m_window.findChild<QListWidget*>();
        if (!list || list->count() == 0) return "no sidebar";
        const int row = pickInt(0, list->count() - 1);
        list->setCurrentRow(row);
        return QString("page %1").arg(row);
    }
    QString clickButton() {
        auto* b = pick(usable<QAbstractButton>(currentPage()));
        if (!b) return "no button";
        const QString what = name(b) + " \"" + b->text() + "\"";
        QTest::mouseClick(b, Qt::LeftButton);
        return "click " + what;
    }
    QString typeText() {
        static const QStringList kTexts = {"",
                                           "The cat sat on the mat.",
                                           "Der Hund läuft schnell.",
                                           "a photo of a dog",
                                           QString(3000, 'x'),
                                           "🙂 ∑ \u202e \t\n",
                                           "[MASK] is [MASK].",
                                           "0,0;9999,9999",
                                           "-1",
                                           "cls"};
        auto* e = pick(usable<QLineEdit>(currentPage()));
        if (!e || e->isReadOnly()) return "no line edit";
        const QString text = kTexts[pickInt(0, int(kTexts.size()) - 1)];
        e->setText(text);
        QTest::keyClick(e, Qt::Key_Return);
        return "type " + name(e) + " (" + QString::number(text.size()) + " chars)";
    }
    QString setCombo() {
        auto* c = pick(usable<QComboBox>(currentPage()));
        if (!c || c->count() == 0) return "no combo";
        const int i = pickInt(0, c->count() - 1);
        c->setCurrentIndex(i);
        return "combo " + name(c) + " = " + QString::number(i);
    }
    QString setSpin() {
        auto* s = pick(usable<QAbstractSpinBox>(currentPage()));
        if (!s) return "no spin box";
        if (auto* i = qobject_cast<QSpinBox*>(s)) {
            // mostly small values: the far end of a range (1000 steps, 2048 px) would make one run minutes
            // long
            const int hi = pickInt(0, 9) == 0 ? i->maximum() : std::min(i->maximum(), i->minimum() + 8);
            i->setValue(pickInt(i->minimum(), std::max(i->minimum(), hi)));
            return "spin " + name(s) + " = " + QString::number(i->value());
        }
        if (auto* d = qobject_cast<QDoubleSpinBox*>(s)) {
            d->setValue(std::uniform_real_distribution<double>(d->minimum(), d->maximum())(m_rng));
            return "spin " + name(s) + " = " + QString::number(d->value());
        }
        QTest::keyClick(s, pickInt(0, 1) ? Qt::Key_Up : Qt::Key_Down);
        return "step " + name(s);
    }
    QString setSlider() {
        auto* s = pick(usable<QAbstractSlider>(currentPage()));
        if (!s) return "no slider";
        s->setValue(pickInt(s->minimum(), s->maximum()));
        return "slider " + name(s) + " = " + QString::number(s->value());
    }
    QString pressKey() {
        static const std::vector<std::pair<int, Qt::KeyboardModifiers>> kKeys = {
            {Qt::Key_Left, {}},
            {Qt::Key_Right, {}},
            {Qt::Key_Up, {}},
            {Qt::Key_Down, {}},
            {Qt::Key_PageUp, {}},
            {Qt::Key_PageDown, {}},
            {Qt::Key_Escape, {}},
            {Qt::Key_Return, {}},
            {Qt::Key_Tab, {}},
            {Qt::Key_Space, {}},
            {Qt::Key_Left, Qt::AltModifier},
            {Qt::Key_Right, Qt::AltModifier},
            {Qt::Key_Z, Qt::ControlModifier},
            {Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier},
            {Qt::Key_Plus, Qt::ControlModifier},
            {Qt::Key_Minus, Qt::ControlModifier}};
        const auto& [key, modifiers] = kKeys[size_t(pickInt(0, int(kKeys.size()) - 1))];
        QWidget* target = QApplication::focusWidget() ? QApplication::focusWidget() : currentPage();
        QTest::keyClick(target, Qt::Key(key), modifiers);
        return "key " + QString::number(key, 16) + " on " + name(target);
    }
    QString triggerMenu() {
        QList<QAction*> actions;
        std::function<void(QMenu*)> collect = [&](QMenu* menu) {
            for (QAction* a : menu->actions()) {
                if (a->menu()) {
                    collect(a->menu());
                    continue;
                }
                const QString text = a->text().toLower();
                if (a->isSeparator() || !a->isEnabled() || a->shortcut() == QKeySequence::Quit ||
                    a->shortcut() == QKeySequence::Close || text.contains("quit") || text.contains("close") ||
                    text.contains("exit"))
                    continue;
                actions.push_back(a);
            }
        };
        for (QAction* top : m_window.menuBar()->actions())
            if (top->menu()) collect(top->menu());
        QAction* a = pick(actions);
        if (!a) return "no menu action";
        a->trigger();
        return "menu \"" + a->text() + "\"";
    }
    QString turnWheel() {
        auto* w = pick(usable<QWidget>(currentPage()));
        if (!w) return "no widget";
        const QPointF at(pickInt(0, std::max(0, w->width() - 1)), pickInt(0, std::max(0, w->height() - 1)));
        const Qt::KeyboardModifiers mods = pickInt(0, 1) ? Qt::ControlModifier : Qt::NoModifier;
        QWheelEvent wheel(at, w->mapToGlobal(at), {}, {0, pickInt(0, 1) ? 120 : -120}, Qt::NoButton, mods,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(w, &wheel);
        return "wheel on " + name(w);
    }
    QString clickPoint() {
        auto* w = pick(usable<QWidget>(currentPage()));
        if (!w) return "no widget";
        const QPoint at(pickInt(0, std::max(0, w->width() - 1)), pickInt(0, std::max(0, w->height() - 1)));
        const Qt::MouseButton button = pickInt(0, 5) == 0 ? Qt::RightButton : Qt::LeftButton;
        if (pickInt(0, 3) == 0)
            QTest::mouseDClick(w, button, {}, at);
        else
            QTest::mouseClick(w, button, pickInt(0, 4) == 0 ? Qt::ShiftModifier : Qt::NoModifier, at);
        return "click at " + QString("%1,%2 of ").arg(at.x()).arg(at.y()) + name(w);
    }
    QString resizeWindow() {
        m_window.resize(pickInt(480, 1600), pickInt(360, 1000));
        return QString("resize %1x%2").arg(m_window.width()).arg(m_window.height());
    }
    QString cancel() {
        auto* p = pick(m_pages);
        p->worker()->cancel();
        return "cancel " + name(p);
    }
    QString openModel() {
        static const QStringList kFolders = {
            "text/gpt2",       "text/bert-mlm", "llm/llama-gqa", "vit/rgb",    "unet/bare-head8",
            "marian/tiny-f32", "t2i/tiny-pipe", "safetensors",   "tokenizers", "no/such/folder"};
        const QString dir = kData + "/" + kFolders[pickInt(0, int(kFolders.size()) - 1)];
        m_window.openModel(dir);
        return "open model " + dir;
    }
    QString openImage() {
        static const QStringList kImages = {"vit/images/photo_97x61.png", "clip/images/portrait_45x71.png",
                                            "safetensors/f32.safetensors", "no-such.png"};
        const QString path = kData + "/" + kImages[pickInt(0, int(kImages.size()) - 1)];
        m_window.openImage(path);
        return "open image " + path;
    }
    QString session() {
        const QString path = m_dir.filePath("monkey.attnlens");
        if (pickInt(0, 1) == 0 || !QFile::exists(path)) {
            m_window.saveSession(path);
            return "save session";
        }
        m_window.openSession(path);
        return "open session";
    }

    MainWindow& m_window;
    QList<WorkspacePage*> m_pages;
    std::mt19937 m_rng;
    QTemporaryDir m_dir;
};

// Every page with its built-in model, as the application composes the window.
QList<WorkspacePage*> addPages(MainWindow& window) {
    QList<WorkspacePage*> pages = {new TranslatePage, new VisionPage, new DiffusionPage, new TextPage,
                                   new TextToImagePage};
    window.addPage("Attention", new PlaygroundPage);
    const QStringList titles = {"Translate", "Vision", "Diffusion", "Text", "Text to image"};
    for (int i = 0; i < pages.size(); ++i)
        window.addPage(titles[i], pages[i]);
    return pages;
}

bool allIdle(const MainWindow& window, const QList<WorkspacePage*>& pages) {
    return !window.restoringSession() &&
           std::none_of(pages.begin(), pages.end(), [](WorkspacePage* p) { return p->isBusy(); });
}

QJsonObject bare(QJsonObject session) { // without the time it was saved
    session.remove("saved_at");
    return session;
}

// The autosave holds the window's last state; a window started after it ends without closing (as after a
// crash) offers it, and Restore gives every page's saved state back.
void nothingIsLost(MainWindow& window) {
    const QString autosave = window.autosave()->path();
    WAIT_UNTIL(QFile::exists(autosave) && bare(readSessionFile(autosave)) == bare(window.sessionState()));
    const QJsonObject last = bare(window.sessionState());
    window.autosave()->abandon();
    MainWindow next;
    const QList<WorkspacePage*> pages = addPages(next);
    next.setLocator([](const MainWindow::MissingPath&) { return QString(); }); // (none expected) skip
    QVERIFY(next.autosave()->start(500));
    QVERIFY2(!next.autosave()->recovered().isEmpty(), "the autosave was not offered");
    QVERIFY2(next.autosave()->restoreRecovered(), qPrintable(next.windowMessage()));
    // the saved page is shown at once; what moves it later is reported (seen once, in CI under ASan: the
    // Translate page shown after the restore of a session saved on the Text page; cause not found yet)
    const QJsonValue shownAtRestore = bare(next.sessionState()).value("page");
    QCOMPARE(shownAtRestore, last.value("page"));
    WAIT_UNTIL(allIdle(next, pages));
    const QJsonObject restored = bare(next.sessionState());
    QString said; // what the pages of the new window say, for a failure's message
    for (WorkspacePage* p : pages)
        if (!p->message().isEmpty())
            said += QString("\n  %1: %2").arg(p->metaObject()->className(), p->message());
    if (restored != last) { // kept for a replay: `attnlens FILE` opens it
        const QString kept = QDir::temp().filePath("monkey-unrestored.attnlens");
        QFile::remove(kept);
        QFile::copy(next.autosave()->recovered(), kept);
        said += "\nthe session: " + kept;
    }
    if (restored.value("page") != last.value("page"))
        qWarning("the shown page moved after the restore: %s, then %s",
                 qPrintable(last.value("page").toString()), qPrintable(restored.value("page").toString()));
    for (const QString& key : last.value("pages").toObject().keys())
        QVERIFY2(restored["pages"][key] == last["pages"][key],
                 qPrintable(key + " (restored vs saved): " +
                            attnlens::test::diffJson(restored["pages"][key].toObject(),
                                                     last["pages"][key].toObject()) +
                            said));
    qInfo("the autosave restored every page's state (%s)",
          qPrintable(QFileInfo(next.autosave()->recovered()).fileName()));
}

} // namespace

class TestMonkey : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        // autosaves, kept sessions and recent files in a test folder, empty at start
        QCoreApplication::setOrganizationName("AttentionLensTests");
        QStandardPaths::setTestModeEnabled(true);
        QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).removeRecursively();
        QSettings().clear();
        // the offscreen platform's notes on every popup and resize ("This plugin does not support …")
        static const QtMessageHandler previous = qInstallMessageHandler(nullptr);
        qInstallMessageHandler([](QtMsgType type, const QMessageLogContext& context, const QString& text) {
            if (!text.startsWith(QLatin1String("This plugin does not support")))
                previous(type, context, text);
        });
    }

    void randomActionsAcrossEveryPage() {
        const int actions = envInt("ATTNLENS_MONKEY_ACTIONS", 500);
        const auto seed = static_cast<uint32_t>(envInt("ATTNLENS_MONKEY_SEED", 1));
        qInfo("seed %u, %d actions", seed, actions);
        MainWindow window;
        const QList<WorkspacePage*> pages = addPages(window);
        window.resize(1100, 760);
        window.show();
        QVERIFY(window.autosave()->start(500));
        QPointer<MainWindow> alive = &window;
        // what an action opens and the test cannot drive: modal dialogs (file choosers) and popup menus
        QTimer closer;
        QObject::connect(&closer, &QTimer::timeout, [] {
            if (QWidget* popup = QApplication::activePopupWidget()) popup->close();
            if (QWidget* modal = QApplication::activeModalWidget()) modal->close();
        });
        closer.start(20);
        // the GUI thread's longest stall: the largest gap between 10 ms heartbeats while the actions run
        QElapsedTimer beat;
        beat.start();
        qint64 longestStall = 0;
        QTimer heartbeat;
        // ATTNLENS_MONKEY_MAX_STALL_MS: stalls above it fail the run (unset: reported above 250 ms, not
        // asserted — a sanitised build or a busy machine stalls for its own reasons)
        const int maxStall = envInt("ATTNLENS_MONKEY_MAX_STALL_MS", 0);
        const bool trace = envInt("ATTNLENS_MONKEY_TRACE", 0) != 0; // every action on stderr as it is done
        QStringList stalls;
        QString lastDone;
        qint64 lastMs = 0;
        QObject::connect(&heartbeat, &QTimer::timeout, [&] {
            const qint64 gap = beat.restart();
            if (gap > (maxStall > 0 ? maxStall : 250))
                stalls << QString("%1 ms after %2 (its slot %3 ms)").arg(gap).arg(lastDone).arg(lastMs);
            longestStall = std::max(longestStall, gap);
        });
        heartbeat.start(10);
        Monkey monkey(window, pages, seed);
        std::deque<QString> recent;
        int idle = 0; // actions that found nothing to act on
        QElapsedTimer clock;
        qint64 slowest = -1;
        QString slowestAction;
        for (int i = 0; i < actions; ++i) {
            clock.start();
            const QString done = monkey.act(); // its slots run on the GUI thread before it returns
            if (trace) std::fprintf(stderr, "%d: %s\n", i, qPrintable(done)); // a crash's last action
            if (const qint64 ms = clock.elapsed(); ms > slowest) slowest = ms, slowestAction = done;
            lastDone = done, lastMs = clock.elapsed();
            idle += done.startsWith("no ");
            recent.push_back(QString::number(i) + ": " + done);
            if (recent.size() > 12) recent.pop_front();
            QTest::qWait(i % 10 == 0 ? 40 : 5);
            if (!alive || !window.isVisible()) {
                for (const QString& r : recent)
                    qWarning("%s", qPrintable(r));
                QFAIL("the window closed");
            }
        }
        heartbeat.stop();
        // the heartbeat also counts time spent inside the actions themselves (a click runs its slot at once)
        qInfo("longest GUI stall %lld ms; slowest action %lld ms (%s); %d of %d actions found nothing to act "
              "on",
              longestStall, slowest, qPrintable(slowestAction), idle, actions);
        for (const QString& stall : stalls)
            qInfo("GUI stall %s", qPrintable(stall));
        if (maxStall > 0)
            QVERIFY2(stalls.isEmpty(), qPrintable(QString("GUI stalls over %1 ms").arg(maxStall)));
        QVERIFY2(idle < actions / 2,
                 "most actions found nothing to act on: the monkey is not reaching the pages");
        // every page finishes or drops its work, and shows a model or says why not
        for (WorkspacePage* p : pages)
            p->worker()->cancel();
        WAIT_UNTIL(allIdle(window, pages));
        for (WorkspacePage* p : pages)
            QVERIFY2(!p->loadedModelDir().isEmpty() || !p->message().isEmpty(),
                     qPrintable(p->metaObject()->className()));
        nothingIsLost(window);
        qInfo("last actions:");
        for (const QString& r : recent)
            qInfo("  %s", qPrintable(r));
    }
};

// QTEST_MAIN, with Qt Test's per-function watchdog (5 minutes) raised: a long run (10 000 actions under ASan
// on a busy machine) takes longer; ctest's TIMEOUT still bounds the suite.
int main(int argc, char** argv) {
    if (!qEnvironmentVariableIsSet("QTEST_FUNCTION_TIMEOUT")) qputenv("QTEST_FUNCTION_TIMEOUT", "7200000");
    QApplication app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    TestMonkey test;
    return QTest::qExec(&test, argc, argv);
}
#include "test_monkey.moc"
