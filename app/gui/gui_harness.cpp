#include "gui_harness.h"

#include "core/registry/model_registry.h"
#include "text_bench.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/playground/playground_page.h"
#include "ui/shell/inference_worker.h"
#include "ui/shell/main_window.h"
#include "ui/t2i/t2i_page.h"
#include "ui/text/text_kv_whatif.h"
#include "ui/text/text_logit_lens.h"
#include "ui/text/text_page.h"
#include "ui/translate/translate_page.h"
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"
#include "ui/widgets/heatmap_find.h"
#include "ui/widgets/heatmap_view.h"
#include "ui_bench.h"

#include <QApplication>
#include <QCheckBox>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

using namespace attnlens::ui;

namespace {

// Calls `go` once, the first time `ready` holds when one of the watched signals fires (or after
// `seconds` (--wait), with a warning, so a screenshot never hangs).
class ReadyGate : public QObject {
public:
    ReadyGate(QObject* parent, std::function<bool()> ready, std::function<void()> go, int seconds)
        : QObject(parent), m_ready(std::move(ready)), m_go(std::move(go)) {
        QTimer::singleShot(seconds * 1000, this, [this, seconds] {
            if (m_done) return;
            std::fprintf(stderr, "warning: the page did not become ready in %d s (grabbing it as it is)\n",
                         seconds);
            fire();
        });
    }
    template <typename Sender, typename Signal> void watch(Sender* sender, Signal signal) {
        connect(sender, signal, this, [this] { check(); });
    }
    void check() {
        if (!m_done && m_ready()) fire();
    }

private:
    void fire() {
        m_done = true;
        m_go();
    }
    std::function<bool()> m_ready;
    std::function<void()> m_go;
    bool m_done = false;
};

void fail(const QString& message) {
    std::fprintf(stderr, "error: %s\n", qPrintable(message));
    QApplication::exit(2);
}

// The Text page computes its matrix (and a long text's lines) on a lane after the run: whether they are
// still on their way.
bool textMapPending(const MainWindow& window) {
    const auto pages = window.findChildren<TextPage*>();
    return std::any_of(pages.begin(), pages.end(), [](const TextPage* p) {
        return p->matrixPending() || p->linesPending() || p->logitLens()->pending() ||
               p->kvWhatIf()->pending();
    });
}

// --find: the Text page's matrix has its find bar opened on the text, once. True when it was opened now.
bool findOnce(const MainWindow& window, const GuiOptions& o) {
    auto* page = o.page == GuiPage::Text ? window.findChild<TextPage*>() : nullptr;
    auto* matrix = page ? page->findChild<HeatmapView*>(QStringLiteral("matrix")) : nullptr;
    if (o.find.isEmpty() || matrix == nullptr || matrix->findBar()->isVisible()) return false;
    matrix->findBar()->open();
    if (!matrix->findBar()->find(o.find))
        std::fprintf(stderr, "warning: --find %s: no token matches\n", qPrintable(o.find));
    return true;
}

// Grabs the window (or the --grab widget) after the layouts settle, every view painted once, the Text page's
// matrix arrived (at most --wait more) and --find was shown.
void grabLater(MainWindow& window, const GuiOptions& o, int waited = 0) {
    QTimer::singleShot(300, &window, [&window, o, waited] {
        if (waited < o.waitSeconds * 1000 && (textMapPending(window) || findOnce(window, o)))
            return grabLater(window, o, waited + 300);
        // Several pages may name a widget alike (the Vision page's and the heads lens's "headsGrid"): the
        // one on screen.
        QWidget* target = o.grab.isEmpty() ? static_cast<QWidget*>(&window) : nullptr;
        for (QWidget* w : window.findChildren<QWidget*>(o.grab))
            if (!target && w->isVisible()) target = w;
        if (target == nullptr) return fail(QStringLiteral("--grab %1: no such widget on screen").arg(o.grab));
        if (!target->grab().save(o.screenshot, "PNG"))
            return fail(QStringLiteral("--screenshot %1: cannot write the file").arg(o.screenshot));
        QApplication::exit(0);
    });
}

// --view, --layer / --head on the Text page, once its run is on screen; a problem with them, or empty.
QString applyTextView(TextPage* page, const GuiOptions& o) {
    TextDocument* doc = page->document();
    // "contrib" is the Logit lens tab in its Contributions mode; "kv" the tab after it
    const int lensTab = static_cast<int>(textViewNames().indexOf(QStringLiteral("lens")));
    const int contribView = lensTab + 1;
    if (o.textView == contribView) page->logitLens()->setMode(TextLogitLens::Mode::Contributions);
    if (!o.kvPolicy.isEmpty()) page->kvWhatIf()->setPolicy(o.kvPolicy);
    if (o.textView >= 0) page->views()->setCurrentIndex(o.textView > lensTab ? o.textView - 1 : o.textView);
    if (!o.layer.isEmpty()) {
        bool ok = false;
        const int layer = o.layer.toInt(&ok);
        if (!ok || layer < 0 || layer >= doc->model()->layers())
            return QStringLiteral("--layer %1: expected a layer from 0 to %2")
                .arg(o.layer)
                .arg(doc->model()->layers() - 1);
        doc->setLayer(layer);
    }
    if (o.head.isEmpty()) return {};
    try {
        const attnlens::HeadSelection heads =
            attnlens::parseHeadSelection(o.head.toStdString(), doc->model()->heads());
        doc->setHead(heads.head);
        if (heads.head < 0) doc->setFusion(heads.fusion);
    } catch (const std::exception& e) {
        return QStringLiteral("--head: %1").arg(QString::fromUtf8(e.what()));
    }
    return {};
}

void screenshotTranslate(MainWindow& window, const GuiPages& pages, const GuiOptions& o) {
    if (o.valueWeighted)
        pages.translate->findChild<QCheckBox*>(QStringLiteral("valueWeighted"))->setChecked(true);
    runTranslateScript(pages.translate, o.translate, [&window, o](bool scripted, const QString& message) {
        if (!scripted)
            std::fprintf(stderr, "warning: %s (grabbing the page as it is)\n", qPrintable(message));
        grabLater(window, o);
    });
}

// Any model page: `beforeRun` once its model is loaded (the first run starts when the page is first shown,
// after this), `afterRun` once the first result is on screen (it may start more jobs); then, with nothing
// left running or restoring, the window is grabbed. A failure shown on the page is grabbed as it is. Each
// returns a problem with the command line's script, or empty.
void screenshotPage(MainWindow& window, WorkspacePage* page, const GuiOptions& o,
                    std::function<QString()> beforeRun, std::function<QString()> afterRun) {
    auto applied = std::make_shared<bool>(false), failed = std::make_shared<bool>(false);
    auto* gate = new ReadyGate(
        page,
        [page, applied, failed] {
            return !page->isBusy() && !page->restoringSession() &&
                   ((*applied && page->hasResult()) || *failed);
        },
        [&window, o] { grabLater(window, o); }, o.waitSeconds);
    QObject::connect(page, &WorkspacePage::failed, gate, [failed] { *failed = true; });
    const auto run = [](const std::function<QString()>& script) {
        if (const QString problem = script ? script() : QString(); !problem.isEmpty()) fail(problem);
    };
    if (page->hasModel()) {
        run(beforeRun);
    } else {
        auto loaded = std::make_shared<QMetaObject::Connection>();
        *loaded = QObject::connect(page, &WorkspacePage::modelLoaded, page, [loaded, beforeRun, run] {
            QObject::disconnect(*loaded);
            run(beforeRun);
        });
    }
    auto shown = std::make_shared<QMetaObject::Connection>();
    const auto first = [page, shown, applied, gate, afterRun, run, weighted = o.valueWeighted] {
        QObject::disconnect(*shown);
        *applied = true;
        run(afterRun);
        // --value-weighted: the page's switch (Text, Vision, Diffusion, Text to image), where the result has
        // norms
        if (auto* box = page->findChild<QCheckBox*>(QStringLiteral("valueWeighted")); weighted && box)
            box->setChecked(true);
        gate->check();
    };
    *shown = QObject::connect(page, &WorkspacePage::resultReady, page, first);
    if (page->hasResult()) QTimer::singleShot(0, page, first);
    gate->watch(page, &WorkspacePage::failed);
    gate->watch(page->worker(), &InferenceWorker::finished);
    gate->watch(page->worker(), &InferenceWorker::cancelled);
    QTimer::singleShot(0, page, [gate] { gate->check(); });
}

} // namespace

// The --model folder when it is one for this page (opened instead of the built-in model, so that the
// page never shows the built-in one first), else empty.
static QString modelFor(const GuiOptions& o, attnlens::ModelKind kind) {
    if (o.model.isEmpty()) return {};
    try {
        return attnlens::detectModelKind(o.model.toStdString()) == kind ? o.model : QString();
    } catch (const std::exception&) {
        return {}; // runGui's File → Open model… reports it
    }
}

GuiPages addPages(MainWindow& window, const GuiOptions& o) {
    GuiPages pages;
    pages.playground = new PlaygroundPage;
    pages.translate = new TranslatePage;
    pages.vision = new VisionPage(nullptr, modelFor(o, attnlens::ModelKind::Vit));
    pages.diffusion = new DiffusionPage(nullptr, modelFor(o, attnlens::ModelKind::Diffusion));
    pages.text = new TextPage(nullptr, modelFor(o, attnlens::ModelKind::Text));
    pages.t2i = new TextToImagePage(nullptr, modelFor(o, attnlens::ModelKind::TextToImage));
    if (!o.vision.image.isEmpty()) pages.vision->setStartImage(o.vision.image);
    if (!o.vision.texts.isEmpty()) { // kept by the document: every picture runs them
        try {
            pages.vision->document()->setTexts(attnlens::splitClipTexts(o.vision.texts.toStdString()));
        } catch (const std::exception& e) {
            qWarning("--texts: %s", e.what());
        }
    }
    window.addPage(QApplication::translate("main", "Attention"), pages.playground);
    window.addPage(QApplication::translate("main", "Translate"), pages.translate);
    window.addPage(QApplication::translate("main", "Vision"), pages.vision);
    window.addPage(QApplication::translate("main", "Diffusion"), pages.diffusion);
    window.addPage(QApplication::translate("main", "Text"), pages.text);
    window.addPage(QApplication::translate("main", "Text to image"), pages.t2i);
    return pages;
}

int runGui(MainWindow& window, const GuiPages& pages, const GuiOptions& o) {
    // A Vision or Diffusion folder went to its page at construction; anything else through File → Open
    // model….
    const bool opened = !modelFor(o, attnlens::ModelKind::Vit).isEmpty() ||
                        !modelFor(o, attnlens::ModelKind::Diffusion).isEmpty() ||
                        !modelFor(o, attnlens::ModelKind::Text).isEmpty() ||
                        !modelFor(o, attnlens::ModelKind::TextToImage).isEmpty();
    if (!o.model.isEmpty() && !opened && !window.openModel(o.model)) return 2;
    if (o.benchUi && o.page == GuiPage::Text) {
        if (!o.size.isEmpty()) window.resize(o.size);
        runTextUiBench(window, pages, o.translate.input, [](int status) { QApplication::exit(status); });
        return QApplication::exec();
    }
    if (o.benchUi) {
        window.setCurrentPage(static_cast<int>(GuiPage::Translate));
        window.show();
        runUiBench(window, pages,
                   o.translate.input.isEmpty() ? QStringLiteral("Wie geht es dir?") : o.translate.input,
                   o.repeats, [](int status) { QApplication::exit(status); });
        return QApplication::exec();
    }
    window.setCurrentPage(static_cast<int>(o.page));
    if (!o.session.isEmpty()) {
        // The session chooses the page; its failure is in the window's banner (and here, for scripts).
        if (!window.openSession(o.session))
            std::fprintf(stderr, "error: %s\n", qPrintable(window.windowMessage()));
        if (!o.screenshot.isEmpty()) {
            if (!o.size.isEmpty()) window.resize(o.size);
            window.show();
            auto* poll = new QTimer(&window); // until every page shows what the session saved (at most 60 s)
            auto ticks = std::make_shared<int>(0);
            QObject::connect(poll, &QTimer::timeout, &window, [&window, poll, o, ticks] {
                if (window.restoringSession() && ++*ticks < 1200) return;
                if (*ticks >= 1200)
                    std::fprintf(stderr,
                                 "warning: the session was not restored in 60 s (grabbing it as it is)\n");
                poll->stop();
                grabLater(window, o);
            });
            poll->start(50);
            return QApplication::exec();
        }
    }
    if (!o.size.isEmpty())
        window.resize(o.size);
    else if (o.screenshot.isEmpty())
        window.restoreWindowGeometry(); // where the user left it
    const bool shot = !o.screenshot.isEmpty();
    // Vision and Diffusion are set up before the window shows (showing the Diffusion page starts its run).
    if (shot && o.page == GuiPage::Vision)
        screenshotPage(window, pages.vision, o, {},
                       [pages, o] { return applyVisionScript(pages.vision->document(), o.vision); });
    if (shot && o.page == GuiPage::Diffusion)
        screenshotPage(
            window, pages.diffusion, o,
            [pages, o] { return applyDiffusionSettings(pages.diffusion, o.diffusion); },
            [pages, o] { return applyDiffusionView(pages.diffusion, o.diffusion); });
    if (shot && o.page == GuiPage::TextToImage)
        screenshotPage(
            window, pages.t2i, o,
            [pages, o] {
                const QString problem = applyT2iSettings(pages.t2i, o.t2i);
                if (o.valueWeighted) { // the run keeps the value-weighted maps, then the switch shows them
                    attnlens::ui::T2iSettings s = pages.t2i->settingsFromControls();
                    s.valueWeighted = true;
                    pages.t2i->setSettings(s);
                }
                return problem;
            },
            [pages, o] { return applyT2iView(pages.t2i, o.t2i); });
    window.show();
    if (shot && o.page == GuiPage::Playground) grabLater(window, o);
    if (shot && o.page == GuiPage::Translate) screenshotTranslate(window, pages, o);
    if (shot && o.page == GuiPage::Text) {
        if (!o.translate.input.isEmpty()) pages.text->setText(o.translate.input);
        screenshotPage(window, pages.text, o, {}, [pages, o] { return applyTextView(pages.text, o); });
    }
    return QApplication::exec();
}
