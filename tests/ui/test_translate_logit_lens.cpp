// The Translate page's Logit lens tab (issue 42), offscreen, on the built-in translator: the map is the
// engine's decoder lens (core/analysis/model_lenses.h) of the translation on screen — decoder layers + 1
// rows, one column per target piece, its last row the pieces the search chose at rank 0; a click on a
// column shows that position's ranks; heads switched off on the page stay off in the lens; a new
// translation is followed; the tab parses as "lens" for sessions and the GUI.

#include "core/analysis/model_lenses.h"
#include "core/io/model_folder.h"
#include "support/waits.h"
#include "ui/shell/inference_worker.h"
#include "ui/translate/translate_logit_lens.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translate_views.h"
#include "ui/translate/translation_document.h"
#include "ui/widgets/heatmap_view.h"

#include <QSignalSpy>
#include <QTest>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

QString modelDir() {
    return QString::fromStdString(builtinModelDir("marian-de-en-tiny").string());
}

bool translate(TranslatePage& page, const QString& input) {
    QSignalSpy ready(&page, &TranslatePage::resultReady);
    page.setInput(input);
    if (!page.document()->hasModel())
        page.openModel(modelDir());
    else
        page.translate();
    return test::waitUntil([&] { return ready.count() > 0; }) && page.document()->snapshot() != nullptr;
}

bool lensIdle(TranslatePage& page) {
    return page.worker()->pendingJobs() == 0 && !page.logitLens()->pending();
}

std::vector<LogitLens> expected(const TranslatePage& page, const MarianAblation* off = nullptr) {
    const auto& model = *page.document()->model().model;
    const auto trace = page.document()->trace();
    const std::vector<int> input = model.forcedDecoderInput(trace->targetIds);
    std::vector<int> positions(input.size());
    for (size_t i = 0; i < positions.size(); ++i)
        positions[i] = int(i);
    return marianLogitLens(model, model.encode(trace->sourceIds, false, off), input, positions,
                           trace->targetIds, 5, off);
}

} // namespace

class TestTranslateLogitLens : public QObject {
    Q_OBJECT
private slots:
    void mapIsTheEnginesDecoderLens() {
        TranslatePage page(nullptr, false);
        page.resize(1300, 850);
        page.show();
        QVERIFY(translate(page, QStringLiteral("Der Hund läuft schnell nach Hause.")));
        page.showView(TranslateView::Lens);
        TranslateLogitLens* lens = page.logitLens();
        WAIT_UNTIL(lensIdle(page) && lens->map()->rows() > 0);
        const auto want = expected(page);
        const auto trace = page.document()->trace();
        HeatmapView* map = lens->map();
        QCOMPARE(map->rows(), page.document()->model().model->config().decoderLayers + 1);
        QCOMPARE(map->columns(), int(trace->targetIds.size()));
        for (int c = 0; c < map->columns(); ++c) {
            QCOMPARE(want[size_t(c)].layers.back().targetRank, 0); // greedy: the chosen piece is the top
            QCOMPARE(map->columnLabel(c), QString::fromStdString(trace->targetTokens[size_t(c)]));
            for (int l = 0; l < map->rows(); ++l)
                QVERIFY(std::abs(map->value(l, c) - want[size_t(c)].layers[size_t(l)].top[0].prob) < 1e-6);
        }
        emit map->cellClicked(0, 1);
        QVERIFY(lens->summary().contains(QStringLiteral("Target position 1")));
    }

    void headsOffStayOffAndANewTranslationIsFollowed() {
        TranslatePage page(nullptr, false);
        page.resize(1300, 850);
        page.show();
        QVERIFY(translate(page, QStringLiteral("Das Haus ist groß.")));
        page.showView(TranslateView::Lens);
        WAIT_UNTIL(lensIdle(page) && page.logitLens()->map()->rows() > 0);
        const int before = page.logitLens()->map()->columns();
        MarianAblation off;
        off.add(AttentionKind::Cross, 0, 0, page.document()->model().model->config());
        QSignalSpy ready(&page, &TranslatePage::resultReady);
        page.setAblation(off);
        QVERIFY(test::waitUntil([&] { return ready.count() > 0; }));
        WAIT_UNTIL(lensIdle(page) && !page.logitLens()->lenses().empty());
        const auto want = expected(page, &off);
        QCOMPARE(page.logitLens()->lenses().size(), want.size());
        for (size_t c = 0; c < want.size(); ++c)
            QVERIFY(std::abs(page.logitLens()->lenses()[c].layers.back().targetLogit -
                             want[c].layers.back().targetLogit) < 1e-5);
        QVERIFY(translate(page, QStringLiteral("Ich bin müde und möchte heute früh schlafen gehen.")));
        WAIT_UNTIL(lensIdle(page) && page.logitLens()->map()->columns() != before);
        QCOMPARE(parseTranslateView(QStringLiteral("lens")),
                 std::optional<TranslateView>(TranslateView::Lens));
    }
};

QTEST_MAIN(TestTranslateLogitLens)
#include "test_translate_logit_lens.moc"
