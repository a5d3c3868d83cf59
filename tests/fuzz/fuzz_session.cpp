// libFuzzer target: a session file (.attnlens) as File → Open session, a dropped file or `attnlens FILE`
// reads it (ui/shell/session.h): readSessionFile (JSON, the envelope: format, version, page, pages), then
// every page's checkSession on its part — the strict, typed reading of every key (ranges, matrices, head
// lists, the pasted picture's PNG) that runs before anything on screen changes. The pages are built once,
// offscreen, as the window builds them (their built-in models loaded before the first input). Any input must
// end in a checked session, a problem text or attnlens::Error.
#include "core/util/error.h"
#include "fuzz_file.h"
#include "ui/diffusion/diffusion_page.h"
#include "ui/playground/playground_page.h"
#include "ui/shell/session.h"
#include "ui/t2i/t2i_page.h"
#include "ui/text/text_page.h"
#include "ui/translate/translate_page.h"
#include "ui/vision/vision_page.h"

#include <QApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <vector>

namespace {

std::vector<attnlens::ui::SessionPage*> g_pages;

} // namespace

// fontconfig keeps a cache it never frees (allocated while the pages make their fonts, reported at exit)
extern "C" const char* __lsan_default_suppressions() {
    return "leak:libfontconfig.so\n";
}

// The application and the pages live until the process ends and are never destroyed: at exit, Qt's own
// globals (thread storage) go before any static of ours would.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    (void)new QApplication(*argc, *argv);
    const std::vector<attnlens::ui::WorkspacePage*> pages = {
        new attnlens::ui::TranslatePage, new attnlens::ui::VisionPage, new attnlens::ui::DiffusionPage,
        new attnlens::ui::TextPage, new attnlens::ui::TextToImagePage};
    g_pages.push_back(new attnlens::ui::PlaygroundPage);
    for (auto* p : pages)
        g_pages.push_back(dynamic_cast<attnlens::ui::SessionPage*>(p));
    // the built-in models load on the pages' workers: done before fuzzing (no thread runs beside an input)
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < 120'000 &&
           std::any_of(pages.begin(), pages.end(), [](const auto* p) { return p->isBusy(); }))
        QApplication::processEvents(QEventLoop::AllEvents, 50);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::TempFile file(data, size, "session.attnlens");
    try {
        const QJsonObject session =
            attnlens::ui::readSessionFile(QString::fromStdString(file.path().string()));
        const QJsonObject parts = session.value("pages").toObject();
        for (attnlens::ui::SessionPage* page : g_pages)
            if (parts.contains(page->sessionKey()))
                (void)page->checkSession(parts.value(page->sessionKey()).toObject());
    } catch (const attnlens::Error&) {
    }
    return 0;
}
