// Value-weighted maps on the Translate page (issue 42), offscreen, on the built-in translator: with the
// switch on, every one-layer matrix of each kind is the captured attention times each key's ‖v · W_O,hᵀ‖ from
// a teacher-forced pass of its own (encoder, decoder self, cross), rows renormalised — for the best
// hypothesis and for another node of the beam tree; the fused matrix fuses the weighted heads; rollout stays
// on the weights; the newest cross row follows; the title says so; the switch is saved in sessions and
// restored. Set ATTNLENS_SCREENSHOT_DIR to also write a PNG of the page (for review).

#include "core/analysis/attention_maps.h"
#include "core/analysis/value_weighting.h"
#include "core/io/model_folder.h"
#include "support/waits.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"

#include <QCheckBox>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QTest>

using namespace attnlens;
using namespace attnlens::ui;

namespace {

QString modelDir() {
    return QString::fromStdString(builtinModelDir("marian-de-en-tiny").string());
}

bool translate(TranslatePage& page, const QString& input, int beams) {
    QSignalSpy ready(&page, &TranslatePage::resultReady);
    page.setInput(input);
    page.setBeamWidth(beams);
    if (!page.document()->hasModel())
        page.openModel(modelDir());
    else
        page.translate();
    return test::waitUntil([&] { return ready.count() > 0; }) && page.document()->snapshot() != nullptr;
}

// The norms of the shown hypothesis from one traced encoder pass and one teacher-forced decoder pass.
struct Norms {
    std::vector<RowMatrix> encoder, decoder, cross;
};
Norms forcedNorms(const TranslationDocument& doc) {
    const MarianModel& m = *doc.model().model;
    const auto trace = doc.trace();
    ResidualTrace enc, dec;
    enc.values = dec.values = true;
    const MarianEncoderOutput encoder = m.encode(trace->sourceIds, false, nullptr, &enc);
    m.decodeForced(m.forcedDecoderInput(trace->targetIds), encoder, nullptr, &dec);
    Norms n;
    for (auto& l : enc.layers)
        n.encoder.push_back(l.valueNorms);
    for (auto& l : dec.layers) {
        n.decoder.push_back(l.valueNorms);
        n.cross.push_back(l.crossValueNorms);
    }
    return n;
}

// The matrix the page shows for (kind, layer, head) against the raw attention weighted with `norms`.
bool matchesWeighted(const TranslationDocument& doc, AttentionKind kind, int layer, int head,
                     const std::vector<RowMatrix>& norms) {
    const Tensor raw = doc.attentionTensor(kind);
    RowMatrix want;
    if (head >= 0) {
        want = raw.slice2d({layer, head});
        valueWeightRows(want, norms[size_t(layer)].row(head));
    } else { // each head weighted, then the mean
        Tensor weighted = raw.clone();
        for (int64_t h = 0; h < raw.dim(1); ++h)
            valueWeightRows(weighted.slice2d({layer, h}), norms[size_t(layer)].row(h));
        want = layerAttention(weighted, layer, {-1, HeadFusion::Mean});
    }
    const RowMatrix got = doc.matrix(kind, layer, head).values;
    if (got.rows() != want.rows() || got.cols() != want.cols()) return false;
    for (Eigen::Index r = 0; r < got.rows(); ++r)
        if (std::abs(got.row(r).sum() - 1.0f) > 1e-5f) return false;
    return (got - want).cwiseAbs().maxCoeff() < 1e-5f;
}

} // namespace

class TestTranslateValueWeighted : public QObject {
    Q_OBJECT
private slots:
    void mapsAreWeightedByTheForcedPassesNorms() {
        TranslatePage page(nullptr, false);
        page.resize(1400, 900);
        page.show();
        QVERIFY(translate(page, QStringLiteral("Der kleine Hund schläft im Garten."), 3));
        TranslationDocument* doc = page.document();
        auto* box = page.findChild<QCheckBox*>(QStringLiteral("valueWeighted"));
        QVERIFY(box && box->isEnabled());
        const RowMatrix plain = doc->matrix(AttentionKind::Cross, 1, 0).values;
        box->setChecked(true);
        QVERIFY(doc->valueWeighted());
        const int nodes = int(doc->snapshot()->nodes.size());
        for (int node : {-1, nodes - 1}) { // the best hypothesis, then another node of the tree
            doc->setSelectedBeamNode(node);
            const Norms n = forcedNorms(*doc);
            for (int layer : {0, 1})
                for (int head : {0, 2, -1}) {
                    QVERIFY2(matchesWeighted(*doc, AttentionKind::EncoderSelf, layer, head, n.encoder),
                             qPrintable(
                                 QString("encoder node %1 layer %2 head %3").arg(node).arg(layer).arg(head)));
                    QVERIFY2(matchesWeighted(*doc, AttentionKind::DecoderSelf, layer, head, n.decoder),
                             qPrintable(
                                 QString("decoder node %1 layer %2 head %3").arg(node).arg(layer).arg(head)));
                    QVERIFY2(
                        matchesWeighted(*doc, AttentionKind::Cross, layer, head, n.cross),
                        qPrintable(QString("cross node %1 layer %2 head %3").arg(node).arg(layer).arg(head)));
                }
        }
        doc->setSelectedBeamNode(-1);
        QVERIFY(doc->matrix(AttentionKind::Cross, 1, 0).values != plain);
        // the newest target piece's cross row per head is the weighted matrix's last row
        const AttentionMatrix newest = doc->newestCrossAttention(1);
        const RowMatrix head2 = doc->matrix(AttentionKind::Cross, 1, 2).values;
        QVERIFY((newest.values.row(2) - head2.row(head2.rows() - 1)).cwiseAbs().maxCoeff() < 1e-6f);
        // rollout stays on the weights
        doc->setKind(AttentionKind::EncoderSelf);
        doc->setLayer(1);
        doc->setHead(-1);
        doc->setThrough(TranslationDocument::Through::Rollout);
        const RowMatrix rolloutWeighted = doc->currentMatrix().values;
        box->setChecked(false);
        QVERIFY((doc->currentMatrix().values - rolloutWeighted).cwiseAbs().maxCoeff() == 0.0f);
        doc->setThrough(TranslationDocument::Through::Layer);
        doc->setKind(AttentionKind::Cross);
        QCOMPARE(doc->matrix(AttentionKind::Cross, 1, 0).values, plain); // off: the weights again
        box->setChecked(true);
        bool titled = false;
        for (auto* label : page.findChildren<QLabel*>())
            titled =
                titled || (label->isVisible() && label->text().contains(QStringLiteral("value-weighted")));
        QVERIFY(titled);
        const QByteArray dir = qgetenv("ATTNLENS_SCREENSHOT_DIR");
        if (!dir.isEmpty()) page.grab().save(QString::fromLocal8Bit(dir) + "/translate-value-weighted.png");
    }

    void theSwitchIsSavedInSessions() {
        QJsonObject state;
        {
            TranslatePage page(nullptr, false);
            QVERIFY(translate(page, QStringLiteral("Ich habe Hunger."), 1));
            page.findChild<QCheckBox*>(QStringLiteral("valueWeighted"))->setChecked(true);
            state = page.saveSession();
            QCOMPARE(state.value("value_weighted").toBool(), true);
        }
        TranslatePage page(nullptr, false);
        QSignalSpy ready(&page, &TranslatePage::resultReady);
        page.restoreSession(state);
        WAIT_UNTIL(!page.restoringSession() && page.document()->trace());
        QVERIFY(page.document()->valueWeighted());
        QVERIFY(page.findChild<QCheckBox*>(QStringLiteral("valueWeighted"))->isChecked());
    }
};

QTEST_MAIN(TestTranslateValueWeighted)
#include "test_translate_value_weighted.moc"
