// The Text page's Logit lens tab (issue 42), offscreen: the lens map is the engine's logit lens over the
// visible tokens (its last row the model's own next-token choice, the same as the Next token list); a typed
// target is followed; a target of several tokens is one message and the previous map stays; Contributions
// shows the engine's split (heads, then the MLP) and a click on a head opens its attention in the Matrix tab;
// a new step of the run is followed.

#include "core/analysis/logit_lens.h"
#include "support/text_pages.h"
#include "support/waits.h"
#include "ui/text/text_document.h"
#include "ui/text/text_logit_lens.h"
#include "ui/text/text_page.h"
#include "ui/widgets/heatmap_view.h"

#include <QLabel>
#include <QTabWidget>
#include <QTest>

using namespace attnlens;
using namespace attnlens::ui;

using texttest::idle;

namespace {

const QString kData = texttest::kPageData;

bool lensIdle(TextPage& page) {
    return idle(page) && !page.logitLens()->pending();
}

void openLens(TextPage& page, const QString& text, int tokens) {
    texttest::runAndWait(page, text, tokens);
    page.views()->setCurrentWidget(page.logitLens());
    WAIT_UNTIL(lensIdle(page) && page.logitLens()->map()->rows() > 0);
}

using texttest::visibleIds;

} // namespace

class TestTextLogitLens : public QObject {
    Q_OBJECT
private slots:
    void lensMapIsTheEngines() {
        TextPage page(nullptr, kData + "/gpt2");
        openLens(page, QStringLiteral("the cat sat on the mat"), 2);
        const TextDocument& doc = *page.document();
        const auto ids = visibleIds(doc);
        HeatmapView* map = page.logitLens()->map();
        QCOMPARE(map->rows(), doc.model()->layers() + 1);
        QCOMPARE(map->columns(), int(ids.size())); // fewer than 24 tokens: every position
        const int last = int(ids.size()) - 1;
        const auto lens = logitLens(*doc.model()->model, ids, std::vector<int>{last}, {}, 5);
        for (int l = 0; l <= doc.model()->layers(); ++l)
            QVERIFY(std::abs(map->value(l, last) - lens[0].layers[size_t(l)].top[0].prob) < 1e-6);
        // the output row's token at the last position is the model's next token, as the Next token list says
        const QString top = QString::fromStdString(doc.model()->tokenText(lens[0].target));
        QCOMPARE(map->formatValue(doc.model()->layers(), last), top);
        QCOMPARE(doc.stepCandidates().front().id, lens[0].target);
        QVERIFY(page.logitLens()->summary().contains(top.toHtmlEscaped()));
    }

    void typedTargetIsFollowedAndABadOneIsOneMessage() {
        TextPage page(nullptr, kData + "/gpt2");
        openLens(page, QStringLiteral("the cat sat on the mat"), 0);
        TextLogitLens* lens = page.logitLens();
        lens->setTarget(QStringLiteral(" the"));
        WAIT_UNTIL(lensIdle(page));
        const TextDocument& doc = *page.document();
        const int id = doc.model()->tokenizer->encodePlain(" the").ids.front();
        const auto expected =
            logitLens(*doc.model()->model, visibleIds(doc), std::vector<int>{int(visibleIds(doc).size()) - 1},
                      std::vector<int>{id}, 5);
        QVERIFY(lens->summary().contains(QStringLiteral("“ the”")));
        QVERIFY(lens->summary().contains(
            QStringLiteral("<td align=right>%1</td></tr>").arg(expected[0].layers.back().targetRank)));
        const RowMatrix before = lens->map()->matrix();
        lens->setTarget(QStringLiteral(" the cat"));
        QVERIFY(page.statusText().contains(QStringLiteral("not one")));
        QVERIFY(lens->map()->matrix() == before); // the previous map stays
    }

    void contributionsAndAHeadClick() {
        TextPage page(nullptr, kData + "/gpt2");
        openLens(page, QStringLiteral("the cat sat on the mat"), 0);
        TextLogitLens* lens = page.logitLens();
        lens->setMode(TextLogitLens::Mode::Contributions);
        WAIT_UNTIL(lensIdle(page) && lens->map()->columns() > 0 && lens->summary().contains("Logit"));
        const TextDocument& doc = *page.document();
        const auto ids = visibleIds(doc);
        const auto c = logitContributions(*doc.model()->model, ids, int(ids.size()) - 1, -1);
        HeatmapView* map = lens->map();
        QCOMPARE(map->rows(), doc.model()->layers());
        QVERIFY(map->columns() >= doc.model()->heads() + 1);
        for (int l = 0; l < map->rows(); ++l) {
            for (int h = 0; h < doc.model()->heads(); ++h)
                QCOMPARE(map->value(l, h), c.heads(l, h));
            QCOMPARE(map->value(l, doc.model()->heads()), c.mlp[size_t(l)]);
        }
        QVERIFY(lens->summary().contains(QString::number(c.logit, 'f', 3)));
        emit map->cellClicked(1, 0);
        QCOMPARE(page.views()->currentIndex(), 0); // the Matrix tab
        QCOMPARE(doc.layer(), 1);
        QCOMPARE(doc.head(), 0);
    }

    // BERT has no linear readout for Contributions: one message, and the tab is not left waiting
    void aFailedJobLeavesTheTabFree() {
        TextPage page(nullptr, kData + "/bert-mlm");
        openLens(page, QStringLiteral("the cat sat on the [MASK]"), 0);
        TextLogitLens* lens = page.logitLens();
        lens->setMode(TextLogitLens::Mode::Contributions);
        WAIT_UNTIL(lensIdle(page));
        QVERIFY(page.statusText().contains(QStringLiteral("direct logit attribution")));
        lens->setMode(TextLogitLens::Mode::Lens);
        WAIT_UNTIL(lensIdle(page));
        QCOMPARE(lens->map()->rows(), page.document()->model()->layers() + 1);
    }

    void followsTheStep() {
        TextPage page(nullptr, kData + "/gpt2");
        openLens(page, QStringLiteral("the cat sat"), 3);
        const int columns = page.logitLens()->map()->columns();
        page.document()->setStep(1);
        WAIT_UNTIL(lensIdle(page) && page.logitLens()->map()->columns() == columns - 2);
    }
};

QTEST_MAIN(TestTextLogitLens)
#include "test_text_logit_lens.moc"
