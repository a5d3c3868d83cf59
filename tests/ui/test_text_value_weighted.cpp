// Value-weighted maps on the Text page (issue 42), offscreen: the Value-weighted switch turns the matrix
// into each head's weights times ‖v_j·W_O,hᵀ‖ with rows renormalised (core/analysis/value_weighting.h; the
// norms those of a traced pass over the visible tokens) — for a decoder's prompt and generated rows, a fused
// map (each head weighted before the fusion) and an encoder; switching it off gives the raw map back; a
// session keeps it.

#include "core/analysis/value_weighting.h"
#include "support/text_pages.h"
#include "support/waits.h"
#include "ui/text/text_document.h"
#include "ui/text/text_page.h"
#include "ui/widgets/heatmap_view.h"

#include <QCheckBox>
#include <QTest>

using namespace attnlens;
using namespace attnlens::ui;

using texttest::idle;

namespace {

const QString kData = texttest::kPageData;

const auto openRun = texttest::runAndWait;
using texttest::visibleIds;

// Head (layer, head)'s raw map weighted by hand with the norms of a traced pass.
RowMatrix expected(const TextDocument& doc, int layer, int head) {
    const auto norms = textValueNorms(*doc.model()->model, visibleIds(doc));
    RowMatrix map = TextDocument::visibleHead(*doc.run(), doc.visibleTokens(), layer, head);
    valueWeightRows(map, norms[size_t(layer)].row(head));
    return map;
}

QCheckBox* weightedBox(TextPage& page) {
    return page.findChild<QCheckBox*>(QStringLiteral("valueWeighted"));
}

} // namespace

class TestTextValueWeighted : public QObject {
    Q_OBJECT
private slots:
    void aDecoderHeadIsWeighted() {
        TextPage page(nullptr, kData + "/gpt2");
        openRun(page, QStringLiteral("the cat sat on the mat"), 2);
        TextDocument& doc = *page.document();
        doc.setLayer(1);
        doc.setHead(2);
        WAIT_UNTIL(idle(page));
        const RowMatrix raw = page.matrixView()->matrix();
        QVERIFY(weightedBox(page)->isEnabled());
        weightedBox(page)->setChecked(true);
        WAIT_UNTIL(idle(page) && !(page.matrixView()->matrix() == raw));
        const RowMatrix shown = page.matrixView()->matrix();
        const RowMatrix want = expected(doc, 1, 2);
        QCOMPARE(shown.rows(), want.rows());
        QVERIFY((shown - want).cwiseAbs().maxCoeff() < 1e-5);
        for (Eigen::Index i = 0; i < shown.rows(); ++i) // rows still sum to 1
            QVERIFY(std::abs(shown.row(i).sum() - 1.0f) < 1e-5);
        weightedBox(page)->setChecked(false);
        WAIT_UNTIL(idle(page) && page.matrixView()->matrix() == raw);
    }

    void aFusionWeighsEachHeadFirst() {
        TextPage page(nullptr, kData + "/gpt2");
        openRun(page, QStringLiteral("the cat sat on the mat"), 1);
        TextDocument& doc = *page.document();
        doc.setLayer(0);
        doc.setHead(-1);
        doc.setFusion(HeadFusion::Mean);
        weightedBox(page)->setChecked(true);
        WAIT_UNTIL(idle(page));
        RowMatrix mean = RowMatrix::Zero(doc.visibleTokens(), doc.visibleTokens());
        for (int h = 0; h < doc.model()->heads(); ++h)
            mean += expected(doc, 0, h);
        mean /= float(doc.model()->heads());
        QVERIFY((page.matrixView()->matrix() - mean).cwiseAbs().maxCoeff() < 1e-5);
    }

    void anEncoderToo() {
        TextPage page(nullptr, kData + "/bert-mlm");
        openRun(page, QStringLiteral("the cat sat on the [MASK]"), 0);
        TextDocument& doc = *page.document();
        doc.setLayer(1);
        doc.setHead(0);
        weightedBox(page)->setChecked(true);
        WAIT_UNTIL(idle(page));
        QVERIFY(doc.valueWeighted());
        QVERIFY((page.matrixView()->matrix() - expected(doc, 1, 0)).cwiseAbs().maxCoeff() < 1e-5);
    }

    void aSessionKeepsIt() {
        TextPage page(nullptr, kData + "/gpt2");
        openRun(page, QStringLiteral("the cat"), 0);
        weightedBox(page)->setChecked(true);
        const QJsonObject state = page.saveSession();
        QCOMPARE(state.value("value_weighted").toBool(), true);
        TextPage other(nullptr, kData + "/gpt2");
        WAIT_UNTIL(idle(other) && other.document()->hasModel());
        QVERIFY(other.checkSession(state).isEmpty());
        other.restoreSession(state);
        WAIT_UNTIL(idle(other) && !other.restoringSession() && other.document()->run());
        QVERIFY(weightedBox(other)->isChecked());
        QVERIFY(other.document()->valueWeighted());
        QCOMPARE(other.saveSession(), state);
    }
};

QTEST_MAIN(TestTextValueWeighted)
#include "test_text_value_weighted.moc"
