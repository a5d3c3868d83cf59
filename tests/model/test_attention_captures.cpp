// The contract's capture type (issue 37): each family's producer gives the same head statistics as the
// options written out by hand for that family (sinks, distances, self- or cross-attention); blocks share the
// run's buffers; a capture whose blocks do not fit its axes is refused by name.

#include "core/analysis/attention_captures.h"
#include "core/analysis/head_stats.h"
#include "core/decode/decode_session.h"
#include "core/diffusion/diffusion_model.h"
#include "core/io/model_folder.h"
#include "core/models/marian_folder.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"
#include "core/vision/image_io.h"
#include "support/text_fixtures.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace attnlens;

namespace {

// Equal statistics, NaN where the other is NaN.
bool sameStats(const HeadStats& a, const HeadStats& b) {
    if (a.layers() != b.layers() || a.heads() != b.heads() || a.rows != b.rows) return false;
    for (HeadStatistic st : kAllHeadStatistics)
        for (int l = 0; l < a.layers(); ++l)
            for (int h = 0; h < a.heads(); ++h) {
                const float x = a.get(st)(l, h), y = b.get(st)(l, h);
                if (std::isnan(x) != std::isnan(y) || (!std::isnan(x) && std::abs(x - y) > 1e-6f))
                    return false;
            }
    return true;
}

} // namespace

class TestAttentionCaptures : public QObject {
    Q_OBJECT
private slots:
    void textMatchesHandOptions() {
        const TextFolder bert = loadTextFolder(texttest::kData / "bert-mlm");
        const TextEncoding e = bert.encode("the cat, sat on the mat.");
        const Tensor a = bert.forward(e.ids).attentions;
        const AttentionCapture c = textCapture(bert, e.ids, a);
        QCOMPARE(c.axes[0].delimiters, (std::vector<int>{3, 8})); // [CLS] the cat , sat on the mat . [SEP]
        for (const char* d : {",", " .", "\u2581?", "\n", " \n\n", "\t", "\u2026", ")\u3002", "\u00bf"})
            QVERIFY2(isDelimiterToken(d), d);
        for (const char* w : {" world", "a.", "1", " ", "", "\u2581", "\xF0"})
            QVERIFY2(!isDelimiterToken(w), w);
        QCOMPARE(c.blocks.size(), size_t(bert.layers()));
        QCOMPARE(c.blocks[1].weights.data(), a.sub({1}).data()); // a view, not a copy
        HeadStatsOptions o;
        o.sinkKeys = {0, static_cast<int>(e.ids.size()) - 1}; // [CLS] … [SEP]
        o.delimiterKeys = {3, 8};
        QVERIFY(sameStats(captureHeadStats(c, AttentionKind::EncoderSelf), computeHeadStats(a, o)));
        QVERIFY_THROWS_EXCEPTION(Error, captureHeadStats(c, AttentionKind::Cross));
    }

    void vitMatchesHandOptions() {
        const auto model = VitModel::load(builtinModelDir(ModelKind::Vit));
        const VitResult r = model->run(loadImage(std::filesystem::path(ATTNLENS_TEST_DATA) /
                                                 "../../resources/samples/fashion-mnist/shirt_1.png"),
                                       {});
        const int patch = model->config().patchSize;
        const AttentionCapture c = vitCapture(r, patch);
        QCOMPARE(c.axes[0].size(), 1 + r.grid.count());
        QCOMPARE(c.axes[0].labels[1], std::string("patch 0,0"));
        HeadStatsOptions o;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        o.queryPositions.push_back({nan, nan}); // CLS has no position
        for (int y = 0; y < r.grid.rows(); ++y)
            for (int x = 0; x < r.grid.cols(); ++x)
                o.queryPositions.push_back({patch * (x + 0.5f), patch * (y + 0.5f)});
        o.keyPositions = o.queryPositions;
        o.sinkKeys = {0};
        QVERIFY(sameStats(captureHeadStats(c, AttentionKind::EncoderSelf),
                          computeHeadStats(r.output.attentions, o)));
    }

    void translationMatchesHandOptions() {
        const MarianFolder folder = loadMarianFolder(builtinModelDir(ModelKind::Marian));
        DecodeSession session(folder.model, folder.tokenizer, "Wie geht es dir?", {});
        session.run();
        const auto trace = session.trace();
        const AttentionCapture c = translationCapture(*trace, decoderStartPiece(folder));
        QCOMPARE(c.kinds(), (std::vector<AttentionKind>{AttentionKind::EncoderSelf,
                                                        AttentionKind::DecoderSelf, AttentionKind::Cross}));
        const auto cross = c.blocksOf(AttentionKind::Cross);
        QVERIFY(!cross.front()->selfAttention());
        QCOMPARE(c.axes[size_t(cross.front()->queryAxis)].labels.front(), decoderStartPiece(folder));
        const int sourceEnd = static_cast<int>(trace->sourceTokens.size()) - 1;
        // "?" is the source piece before </s>; the decoder inputs hold it where the translation has one.
        const std::vector<int> sourceDelimiters{sourceEnd - 1};
        QCOMPARE(c.axes[size_t(cross.front()->keyAxis)].delimiters, sourceDelimiters);
        std::vector<int> decoderDelimiters;
        const auto& inputs = c.axes[size_t(cross.front()->queryAxis)].labels;
        for (size_t i = 1; i < inputs.size(); ++i)
            if (inputs[i] == "?" || inputs[i] == "\u2581?" || inputs[i] == "." || inputs[i] == "\u2581.")
                decoderDelimiters.push_back(static_cast<int>(i));
        HeadStatsOptions encoder, decoder, x;
        encoder.sinkKeys = {sourceEnd};
        encoder.delimiterKeys = x.delimiterKeys = sourceDelimiters;
        decoder.delimiterKeys = decoderDelimiters;
        decoder.sinkKeys = {0};
        x.sinkKeys = {sourceEnd};
        x.selfAttention = false;
        QVERIFY(sameStats(captureHeadStats(c, AttentionKind::EncoderSelf),
                          computeHeadStats(trace->encoderAttention, encoder)));
        QVERIFY(sameStats(captureHeadStats(c, AttentionKind::DecoderSelf),
                          computeHeadStats(trace->decoderAttention, decoder)));
        QVERIFY(
            sameStats(captureHeadStats(c, AttentionKind::Cross), computeHeadStats(trace->crossAttention, x)));
    }

    void unetLevelsShareAxes() {
        const DiffusionModel model = loadDiffusionModel(builtinModelDir(ModelKind::Diffusion));
        const auto& cfg = model.unet->config();
        const Tensor x({int64_t(cfg.inChannels), int64_t(cfg.sampleSize), int64_t(cfg.sampleSize)}, 0.1f);
        UNetConditioning cond;
        if (cfg.numClassEmbeds) cond.classLabel = 0;
        const UNetOutput out = model.unet->forward(x, 500.0f, cond);
        const AttentionCapture c = unetCapture(out.attentions, cfg.sampleSize, cfg.sampleSize);
        QCOMPARE(c.blocks.size(), out.attentions.size());
        QVERIFY(c.axes.size() < c.blocks.size()); // layers of one level share its pixel axis
        QCOMPARE(c.blocks.front().name, out.attentions.front().info.name);
        QVERIFY(!c.axes.front().hasSinks);
        const HeadStats s = captureHeadStats(c, AttentionKind::EncoderSelf);
        QVERIFY(s.sink.array().isNaN().all());
        QCOMPARE(s.layers(), static_cast<int>(out.attentions.size()));
    }

    void misfitBlocksAreRefused() {
        AttentionCapture c;
        const int axis = c.addAxis({"tokens", {"a", "b"}, {}, {}, true, {}});
        c.blocks.push_back(
            {"layer.0", AttentionKind::EncoderSelf, 0, Tensor({1, 2, 3}, 0.5f), axis, axis, {}, 0});
        try {
            c.check();
            QFAIL("a [1, 2, 3] block over a 2-token axis was accepted");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("layer.0") != std::string::npos);
        }
        c.blocks.front().keyAxis = 3;
        QVERIFY_THROWS_EXCEPTION(Error, c.check());
        QVERIFY_THROWS_EXCEPTION(Error, c.addLayers(Tensor({2, 2}, 0.5f), AttentionKind::Cross, 0, 0, "x."));
    }
};

QTEST_GUILESS_MAIN(TestAttentionCaptures)
#include "test_attention_captures.moc"
