// The Text page's KV cache tab (issue 42), offscreen: the map and the table are the engine's what-if
// (core/analysis/kv_rerun.h) on the run's prompt — kept entries 1, evicted 0, entries not yet written masked;
// a bad policy is one message and the previous map stays; "Let it write" switches to the policy's own text;
// an encoder says it keeps no cache; a new run is followed.

#include "core/analysis/kv_rerun.h"
#include "support/text_pages.h"
#include "support/waits.h"
#include "ui/text/text_document.h"
#include "ui/text/text_kv_whatif.h"
#include "ui/text/text_page.h"
#include "ui/widgets/heatmap_view.h"

#include <QComboBox>
#include <QLineEdit>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>

using namespace attnlens;
using namespace attnlens::ui;

using texttest::idle;

namespace {

const QString kData = texttest::kPageData;

bool kvIdle(TextPage& page) {
    return idle(page) && !page.kvWhatIf()->pending();
}

void openKv(TextPage& page, const QString& text) {
    texttest::runAndWait(page, text, 0);
    page.views()->setCurrentWidget(page.kvWhatIf());
    WAIT_UNTIL(kvIdle(page) && page.kvWhatIf()->shown());
}

std::vector<int> promptIds(const TextDocument& doc) {
    return {doc.run()->ids.begin(), doc.run()->ids.begin() + doc.run()->promptLength};
}

} // namespace

class TestTextKvWhatIf : public QObject {
    Q_OBJECT
private slots:
    void mapAndTableAreTheEngines() {
        TextPage page(nullptr, kData + "/gpt2");
        openKv(page, QStringLiteral("the cat sat on the mat and the dog sat on the rug"));
        TextKvWhatIf* kv = page.kvWhatIf();
        kv->setSteps(5);
        kv->setPolicy(QStringLiteral("streaming:1,3"));
        WAIT_UNTIL(kvIdle(page) && kv->shown() && kvPolicyName(kv->shown()->policy) == "streaming:1,3" &&
                   int(kv->shown()->steps.size()) <= 5);
        const TextDocument& doc = *page.document();
        const auto prompt = promptIds(doc);
        const KvBaseline base = kvBaseline(*doc.model()->model, prompt, {.steps = 5});
        const KvRerun expected = kvRerun(*doc.model()->model, base, parseKvPolicy("streaming:1,3"));
        const KvRerun& shown = *kv->shown();
        QCOMPARE(shown.steps.size(), expected.steps.size());
        const int p = int(prompt.size()), steps = int(expected.steps.size());
        HeatmapView* map = kv->map();
        QCOMPARE(map->rows(), steps);
        QCOMPARE(map->columns(), p + steps);
        for (int s = 0; s < steps; ++s) {
            QCOMPARE(shown.steps[size_t(s)].kl, expected.steps[size_t(s)].kl);
            QCOMPARE(shown.steps[size_t(s)].chosen, expected.steps[size_t(s)].chosen);
            for (int j = 0; j < p + steps; ++j) {
                QCOMPARE(map->isMasked(s, j), j > p + s); // not yet written
                if (j <= p + s) QCOMPARE(map->value(s, j), expected.kept.kept(s, j) ? 1.0f : 0.0f);
            }
            QCOMPARE(map->value(s, 0), 1.0f);     // the sink
            QCOMPARE(map->value(s, p + s), 1.0f); // its own
            if (p + s > 4) QCOMPARE(map->value(s, 2), 0.0f);
        }
        auto* table = kv->findChild<QTableWidget*>(QStringLiteral("kvTable"));
        QCOMPARE(table->rowCount(), steps);
        QCOMPARE(table->item(0, 6)->text(), QString::number(expected.steps[0].kept));
        QVERIFY(kv->summary().contains(QStringLiteral("streaming:1,3")));
    }

    void aBadPolicyIsOneMessage() {
        TextPage page(nullptr, kData + "/gpt2");
        openKv(page, QStringLiteral("the cat sat on the mat"));
        TextKvWhatIf* kv = page.kvWhatIf();
        const RowMatrix before = kv->map()->matrix();
        kv->setPolicy(QStringLiteral("h2o:2,5"));
        QVERIFY(page.statusText().contains(QStringLiteral("RECENT must be 1")));
        QVERIFY(kv->map()->matrix() == before);
        kv->setPolicy(QStringLiteral("keep:0-1"));
        WAIT_UNTIL(kvIdle(page) && kvPolicyName(kv->shown()->policy) == "keep:0,1");
        auto* keep = kv->findChild<QLineEdit*>(QStringLiteral("kvKeep"));
        keep->setText(QStringLiteral("5-2"));
        emit keep->editingFinished();
        QVERIFY(page.statusText().contains(QStringLiteral("runs backwards")));
        QCOMPARE(kvPolicyName(kv->shown()->policy), std::string("keep:0,1"));
    }

    // Picking a policy in the combo gives it numbers it accepts (H2O's recent and SnapKV's window ≤ the
    // budget)
    void everyPolicyRunsAsPicked() {
        TextPage page(nullptr, kData + "/gpt2");
        openKv(page, QStringLiteral("the cat sat on the mat and the dog"));
        TextKvWhatIf* kv = page.kvWhatIf();
        auto* combo = kv->findChild<QComboBox*>(QStringLiteral("kvPolicy"));
        for (const auto kind : {KvPolicy::Kind::HeavyHitters, KvPolicy::Kind::SnapKv, KvPolicy::Kind::Full,
                                KvPolicy::Kind::Keep, KvPolicy::Kind::Streaming}) {
            const QString id = kind == KvPolicy::Kind::HeavyHitters ? "h2o"
                               : kind == KvPolicy::Kind::SnapKv     ? "snapkv"
                               : kind == KvPolicy::Kind::Full       ? "full"
                               : kind == KvPolicy::Kind::Keep       ? "keep"
                                                                    : "streaming";
            combo->setCurrentIndex(combo->findData(id));
            WAIT_UNTIL(kvIdle(page) && kv->shown()->policy.kind == kind);
        }
        QVERIFY(!page.statusText().contains(QStringLiteral("KV policy")));
    }

    void letItWrite() {
        TextPage page(nullptr, kData + "/gpt2");
        openKv(page, QStringLiteral("the cat sat on the mat and the dog"));
        TextKvWhatIf* kv = page.kvWhatIf();
        kv->setPolicy(QStringLiteral("keep:0"));
        kv->setFree(true);
        WAIT_UNTIL(kvIdle(page) && kv->shown()->mode == KvRerunMode::Free &&
                   kv->shown()->policy.kind == KvPolicy::Kind::Keep);
        const KvRerun& r = *kv->shown();
        for (size_t s = 1; s < r.steps.size(); ++s)
            QCOMPARE(r.steps[s].fed, r.steps[s - 1].chosen);
    }

    void followsANewRun() {
        TextPage page(nullptr, kData + "/gpt2");
        openKv(page, QStringLiteral("the cat sat"));
        const int columns = page.kvWhatIf()->map()->columns();
        page.setText(QStringLiteral("the cat sat on the mat"));
        page.runText();
        WAIT_UNTIL(kvIdle(page) && page.kvWhatIf()->map()->columns() > columns);
    }

    void anEncoderKeepsNoCache() {
        TextPage page(nullptr, kData + "/bert-mlm");
        page.show();
        WAIT_UNTIL(idle(page) && page.document()->hasModel());
        page.setText(QStringLiteral("the cat sat on the [MASK]"));
        page.runText();
        WAIT_UNTIL(idle(page) && page.document()->run());
        page.views()->setCurrentWidget(page.kvWhatIf());
        WAIT_UNTIL(kvIdle(page));
        QVERIFY(page.kvWhatIf()->summary().contains(QStringLiteral("encoder keeps no cache")));
        QCOMPARE(page.kvWhatIf()->map()->rows(), 0);
    }
};

QTEST_MAIN(TestTextKvWhatIf)
#include "test_text_kv_whatif.moc"
