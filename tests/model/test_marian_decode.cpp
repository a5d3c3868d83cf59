// DecodeSession: greedy and beam ids equal the PyTorch reference (HF generate semantics), step/back/
// reset state, captured rows equal a teacher-forced pass over the final output, beam tree shape.

#include "core/analysis/head_importance.h"
#include "core/decode/decode_session.h"
#include "core/util/error.h"
#include "marian_test_util.h"

#include <QTest>

#include <limits>

using namespace attnlens;
using namespace marian_test;

namespace {
constexpr float kTol = 1e-4f; // as the other goldens (float64 reference)
} // namespace

namespace {

EarlyStopping earlyStoppingFrom(const Json& j) {
    if (j.is_boolean()) return j.get<bool>() ? EarlyStopping::True : EarlyStopping::False;
    return EarlyStopping::Never;
}

MarianEncoding encodingFrom(const Json& g) {
    MarianEncoding e;
    e.ids = ids(g["source_ids"]);
    e.pieces = g["source_tokens"].get<std::vector<std::string>>();
    return e;
}

} // namespace

class TestMarianDecode : public QObject {
    Q_OBJECT
private slots:
    void greedyMatchesReference_data();
    void greedyMatchesReference();
    void beamMatchesReference_data();
    void beamMatchesReference();
    void capturedRowsEqualForcedPass_data();
    void capturedRowsEqualForcedPass();
    void stepBackReset();
    void beamTree();
    void forcedEosAtMaxLength();
    void candidates();
    void cancel();
    void headAblationMatchesHeadMask();
    void sequenceLogProbAndHeadImportance();
};

void TestMarianDecode::greedyMatchesReference_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<int>("sentence");
    for (const char* v : {"tiny-f32", "tiny-f16", "tiny-unshared"})
        for (int s = 0; s < 2; ++s)
            QTest::newRow((std::string(v) + "/s" + std::to_string(s)).c_str()) << v << s;
}

void TestMarianDecode::greedyMatchesReference() {
    QFETCH(QString, variant);
    QFETCH(int, sentence);
    const std::string v = variant.toStdString();
    const auto model = MarianModel::load(variantDir(v));
    const auto tok = MarianTokenizer::load(variantDir(v));
    const Json g = golden(v)["cases"][sentence];
    DecodeOptions opt;
    opt.numBeams = 1;
    opt.maxNewTokens = g["greedy"]["max_new_tokens"].get<int>();
    DecodeSession session(model, tok, g["source"].get<std::string>(), opt);
    QCOMPARE(session.source().ids, ids(g["source_ids"])); // tokenizer in the loop
    session.run();
    QVERIFY(session.finished());
    QCOMPARE(session.tokens(), ids(g["greedy"]["ids"]));
    const auto trace = session.trace();
    QCOMPARE(trace->targetIds, ids(g["greedy"]["ids"]));
    QCOMPARE(trace->translation, g["greedy"]["translation"].get<std::string>());
    QVERIFY(trace->finished);
}

void TestMarianDecode::beamMatchesReference_data() {
    QTest::addColumn<QString>("variant");
    QTest::addColumn<int>("sentence");
    QTest::addColumn<int>("config");
    for (const char* v : {"tiny-f32", "tiny-f16", "tiny-unshared"})
        for (int s = 0; s < 2; ++s)
            for (int c = 0; c < 3; ++c)
                QTest::newRow((std::string(v) + "/s" + std::to_string(s) + "/c" + std::to_string(c)).c_str())
                    << v << s << c;
}

void TestMarianDecode::beamMatchesReference() {
    QFETCH(QString, variant);
    QFETCH(int, sentence);
    QFETCH(int, config);
    const std::string v = variant.toStdString();
    const auto model = MarianModel::load(variantDir(v));
    const Json g = golden(v)["cases"][sentence];
    const Json b = g["beam"][config];
    DecodeOptions opt;
    opt.numBeams = b["num_beams"].get<int>();
    opt.lengthPenalty = b["length_penalty"].get<float>();
    opt.earlyStopping = earlyStoppingFrom(b["early_stopping"]);
    opt.maxNewTokens = b["max_new_tokens"].get<int>();
    DecodeSession session(model, nullptr, encodingFrom(g), opt);
    session.run();
    QVERIFY(session.finished());
    QCOMPARE(session.tokens(), ids(b["ids"]));
    const auto trace = session.trace();
    QVERIFY2(std::abs(trace->score - b["score"].get<float>()) < 1e-4f,
             qPrintable(QString("score %1 vs %2").arg(trace->score).arg(b["score"].get<float>())));
}

void TestMarianDecode::capturedRowsEqualForcedPass_data() {
    QTest::addColumn<int>("beams");
    QTest::newRow("greedy") << 1;
    QTest::newRow("beam3") << 3;
}

void TestMarianDecode::capturedRowsEqualForcedPass() {
    QFETCH(int, beams);
    const auto model = MarianModel::load(variantDir("tiny-unshared"));
    const auto tok = MarianTokenizer::load(variantDir("tiny-unshared"));
    DecodeOptions opt;
    opt.numBeams = beams;
    opt.maxNewTokens = 15;
    DecodeSession session(model, tok, "Die Kinder spielen im Garten.", opt);
    session.run();
    const auto trace = session.trace();
    const int64_t T = int64_t(trace->targetIds.size()), S = int64_t(trace->sourceIds.size());
    QVERIFY(T > 0);
    QCOMPARE(trace->decoderAttention.shape(), (Shape{2, 4, T, T}));
    QCOMPARE(trace->crossAttention.shape(), (Shape{2, 4, T, S}));
    QCOMPARE(trace->encoderAttention.shape(), (Shape{2, 4, S, S}));
    const auto enc = model->encode(trace->sourceIds);
    std::vector<int> decIn{model->config().decoderStartTokenId};
    decIn.insert(decIn.end(), trace->targetIds.begin(), trace->targetIds.end() - 1);
    const auto forced = model->decodeForced(decIn, enc);
    QVERIFY(maxAbsDiff(trace->decoderAttention, forced.selfAttention) < 5e-5f);
    QVERIFY(maxAbsDiff(trace->crossAttention, forced.crossAttention) < 5e-5f);
    QVERIFY(maxAbsDiff(trace->encoderAttention, enc.selfAttention) < 1e-6f);
    // the recorded log-probabilities are those of the forced pass (pad banned; no forced eos here
    // unless the last step hit max_new_tokens). Beam search, like transformers' Marian, drops the pad
    // logit before the log-softmax (adjust_logits_during_generation); greedy normalises over all.
    for (int64_t t = 0; t + 1 < T; ++t) {
        std::vector<float> row(forced.logits.data() + t * forced.logits.dim(1),
                               forced.logits.data() + (t + 1) * forced.logits.dim(1));
        if (beams > 1) row[model->config().padTokenId] = -std::numeric_limits<float>::infinity();
        const float mx = *std::max_element(row.begin(), row.end());
        double sum = 0;
        for (float x : row)
            sum += std::exp(double(x - mx));
        const float lp = row[trace->targetIds[t]] - mx - float(std::log(sum));
        QVERIFY(std::abs(lp - trace->tokenLogprobs[t]) < 1e-4f);
    }
}

void TestMarianDecode::stepBackReset() {
    for (int beams : {1, 3}) {
        const auto model = MarianModel::load(variantDir("tiny-f32"));
        const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
        DecodeOptions opt;
        opt.numBeams = beams;
        opt.maxNewTokens = 10;
        DecodeSession session(model, tok, "Wie spät ist es jetzt?", opt);
        QCOMPARE(session.stepCount(), 0);
        QVERIFY(session.tokens().empty());
        QVERIFY(session.currentCandidates().empty());
        QVERIFY(!session.back());
        QVERIFY(session.step());
        QVERIFY(session.step());
        const auto tokens2 = session.tokens();
        const auto nodes2 = session.nodes().size();
        const auto trace2 = session.trace();
        QCOMPARE(tokens2.size(), size_t(2));
        QVERIFY(session.step());
        QCOMPARE(session.stepCount(), 3);
        QVERIFY(session.back());
        QCOMPARE(session.stepCount(), 2);
        QCOMPARE(session.tokens(), tokens2);
        QCOMPARE(session.nodes().size(), nodes2);
        // stepping again after back() reproduces the same continuation (caches rebuilt correctly)
        session.run();
        const auto full = session.tokens();
        const auto fullTrace = session.trace();
        while (session.back()) {
        }
        QCOMPARE(session.stepCount(), 0);
        session.run();
        QCOMPARE(session.tokens(), full);
        QCOMPARE(maxAbsDiff(session.trace()->decoderAttention, fullTrace->decoderAttention), 0.0f);
        session.reset();
        QCOMPARE(session.stepCount(), 0);
        QVERIFY(!session.finished());
        session.run();
        QCOMPARE(session.tokens(), full);
        QVERIFY(!session.step()); // finished: nothing to do
        // the snapshot taken earlier is immutable
        QCOMPARE(trace2->targetIds, tokens2);
        QCOMPARE(trace2->decoderAttention.dim(2), 2);
    }
}

void TestMarianDecode::beamTree() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    DecodeOptions opt;
    opt.numBeams = 3;
    opt.maxNewTokens = 8;
    const Json g = golden("tiny-f32")["cases"][0];
    DecodeSession session(model, nullptr, encodingFrom(g), opt);
    session.step();
    QCOMPARE(session.liveBeams().size(), size_t(3));
    const auto& nodes = session.nodes();
    QCOMPARE(nodes.front().parent, -1);
    for (size_t i = 1; i < nodes.size(); ++i) {
        QCOMPARE(nodes[i].parent, 0); // every first-step node hangs off the start token
        QCOMPARE(nodes[i].depth, 1);
        QCOMPARE(nodes[i].selfAttention.shape(), (Shape{2, 4, 1}));
        QCOMPARE(nodes[i].crossAttention.shape(), (Shape{2, 4, int64_t(g["source_ids"].size())}));
    }
    session.run();
    QVERIFY(!session.finishedHypotheses().empty());
    QVERIFY(session.finishedHypotheses().size() <= 3);
    for (const auto& n : session.nodes()) {
        if (n.id == 0 || !std::isfinite(n.score)) continue; // -inf: pruned by the forced </s> step
        const BeamNode& p = session.nodes()[n.parent];
        QCOMPARE(n.depth, p.depth + 1);
        QVERIFY(std::abs(n.score - (p.score + n.logprob)) < 1e-3f || p.id == 0);
        QCOMPARE(n.selfAttention.dim(2), int64_t(n.depth));
    }
    const int best = session.bestNode();
    QVERIFY(session.nodes()[best].finished);
    QCOMPARE(session.pathTo(best).size(), session.tokens().size());
}

void TestMarianDecode::forcedEosAtMaxLength() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    for (int beams : {1, 2}) {
        DecodeOptions opt;
        opt.numBeams = beams;
        opt.maxNewTokens = 4;
        DecodeSession session(model, tok, "Der Zug kommt um 14:30 Uhr an.", opt);
        session.run();
        const auto ids = session.tokens();
        QVERIFY(ids.size() <= 4);
        QCOMPARE(ids.back(), 0); // </s>
        const int pad = model->config().padTokenId;
        for (const auto& n : session.nodes())
            QVERIFY(n.token != pad || n.id == 0); // pad never generated
    }
}

void TestMarianDecode::candidates() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    DecodeOptions opt;
    opt.numBeams = 1;
    opt.topK = 5;
    opt.maxNewTokens = 6;
    DecodeSession session(model, tok, "Das Wetter ist schön.", opt);
    session.step();
    const auto c = session.currentCandidates();
    QCOMPARE(c.size(), size_t(5));
    QCOMPARE(c[0].id, session.tokens()[0]); // greedy picks the top candidate
    for (size_t i = 1; i < c.size(); ++i)
        QVERIFY(c[i - 1].prob >= c[i].prob);
    QCOMPARE(c[0].piece, tok->idToPiece(c[0].id));
    QVERIFY(std::abs(c[0].prob - std::exp(c[0].logprob)) < 1e-6f);
}

void TestMarianDecode::cancel() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    DecodeOptions opt;
    opt.numBeams = 1;
    opt.maxNewTokens = 20;
    DecodeSession session(model, tok, "Der Hund läuft schnell über die Straße.", opt);
    {
        DecodeSession probe(model, tok, "Der Hund läuft schnell über die Straße.", opt);
        probe.run();
        QVERIFY2(probe.stepCount() > 4, "fixture: this sentence needs more than 4 greedy steps");
    }
    int calls = 0;
    Callbacks cb;
    cb.cancelled = [&] { return ++calls > 3; };
    std::vector<double> progress;
    cb.progress = [&](double f, const std::string&) { progress.push_back(f); };
    QVERIFY_THROWS_EXCEPTION(Cancelled, session.run(cb));
    QCOMPARE(session.stepCount(), 3);
    QCOMPARE(progress.size(), size_t(3));
    session.run(); // still usable
    QVERIFY(session.finished());
}

// Head ablation equals the reference's layer_head_mask / cross_attn_layer_head_mask = 0: the greedy output of
// a DecodeSession with those heads off, then the encoder attention and a teacher-forced pass (logits, decoder
// and cross attention) with them off; the ablated heads' attention is zero; beam search takes the ablation
// too (its captured rows equal the forced pass of its output); no ablation is the plain model; bad heads
// throw.
void TestMarianDecode::headAblationMatchesHeadMask() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    const auto tok = MarianTokenizer::load(variantDir("tiny-f32"));
    const Json g = readJsonFile(dataDir() / "golden" / "ablate-tiny-f32.json");
    const auto gt = TensorFile::open(dataDir() / "golden" / "ablate-tiny-f32.safetensors");
    MarianAblation ablation;
    for (const Json& a : g["ablated"]) {
        const std::string kind = a[0].get<std::string>();
        ablation.add(*parseAttentionKind(kind), a[1].get<int>(), a[2].get<int>(), model->config());
    }
    QVERIFY(ablation.any());
    DecodeOptions opt;
    opt.numBeams = 1;
    opt.maxNewTokens = g["greedy"]["max_new_tokens"].get<int>();
    opt.ablation = ablation;
    DecodeSession session(model, tok, g["source"].get<std::string>(), opt);
    session.run();
    QCOMPARE(session.tokens(), ids(g["greedy"]["ids"]));
    QVERIFY(session.tokens() != ids(golden("tiny-f32")["cases"][0]["greedy"]["ids"])); // the ablation matters

    const auto src = ids(g["source_ids"]);
    const MarianEncoderOutput enc = model->encode(src, true, &ablation);
    QVERIFY2(maxAbsDiff(enc.selfAttention, gt.load("encoder")) < kTol, "ablated encoder attention");
    QCOMPARE(enc.selfAttention.sub({0, 1}).matrix().cwiseAbs().maxCoeff(), 0.0f);
    std::vector<int> input = {model->config().generation.decoderStartTokenId};
    const auto greedy = ids(g["greedy"]["ids"]);
    input.insert(input.end(), greedy.begin(), greedy.end() - 1);
    const MarianForcedOutput forced = model->decodeForced(input, enc, &ablation);
    const float dl = maxAbsDiff(forced.logits, gt.load("logits"));
    QVERIFY2(dl < kTol, qPrintable(QString("ablated logits differ by %1").arg(dl)));
    QVERIFY2(maxAbsDiff(forced.selfAttention, gt.load("decoder")) < kTol, "ablated decoder attention");
    QVERIFY2(maxAbsDiff(forced.crossAttention, gt.load("cross")) < kTol, "ablated cross attention");
    QCOMPARE(forced.crossAttention.sub({1, 1}).matrix().cwiseAbs().maxCoeff(), 0.0f);
    QCOMPARE(forced.selfAttention.sub({1, 0}).matrix().cwiseAbs().maxCoeff(), 0.0f);

    // Beam search with the ablation: the captured rows of its result equal the ablated forced pass over it.
    DecodeOptions beam = opt;
    beam.numBeams = 3;
    DecodeSession beamSession(model, tok, g["source"].get<std::string>(), beam);
    beamSession.run();
    const auto trace = beamSession.trace();
    std::vector<int> beamInput = {model->config().generation.decoderStartTokenId};
    beamInput.insert(beamInput.end(), trace->targetIds.begin(), trace->targetIds.end() - 1);
    const MarianForcedOutput beamForced = model->decodeForced(beamInput, enc, &ablation);
    QVERIFY2(maxAbsDiff(trace->crossAttention, beamForced.crossAttention) < kTol, "beam cross rows");

    // No ablation: bit-identical to the plain encode.
    const MarianAblation none;
    QVERIFY(!none.any());
    QCOMPARE(model->encode(src, true, &none).selfAttention.toVector(),
             model->encode(src).selfAttention.toVector());
    MarianAblation bad;
    QVERIFY_THROWS_EXCEPTION(Error, bad.add(AttentionKind::EncoderSelf, 2, 0, model->config()));
    QVERIFY_THROWS_EXCEPTION(Error, bad.add(AttentionKind::Cross, 0, 4, model->config()));
}

// marianSequenceLogProb equals the sum of the decoder's own per-token log-probabilities over the greedy
// output (the last token left out: it may be a forced </s>, whose processed log-probability is 0); the
// importance of a head is that log-probability's drop with the head off alone.
void TestMarianDecode::sequenceLogProbAndHeadImportance() {
    const auto model = MarianModel::load(variantDir("tiny-f32"));
    const Json g = golden("tiny-f32")["cases"][0];
    DecodeOptions opt;
    opt.numBeams = 1;
    opt.maxNewTokens = g["greedy"]["max_new_tokens"].get<int>();
    DecodeSession session(model, nullptr, encodingFrom(g), opt);
    session.run();
    const auto trace = session.trace();
    const std::vector<int> prefix(trace->targetIds.begin(), trace->targetIds.end() - 1);
    double expected = 0;
    for (size_t t = 0; t < prefix.size(); ++t)
        expected += trace->tokenLogprobs[t];
    const double logp = marianSequenceLogProb(*model, trace->sourceIds, prefix);
    QVERIFY2(std::abs(logp - expected) < 1e-3, qPrintable(QString("%1 vs %2").arg(logp).arg(expected)));
    const RowMatrix drop = marianHeadImportance(*model, trace->sourceIds, prefix, AttentionKind::Cross);
    QCOMPARE(drop.rows(), Eigen::Index(2));
    QCOMPARE(drop.cols(), Eigen::Index(4));
    MarianAblation one;
    one.add(AttentionKind::Cross, 1, 3, model->config());
    QVERIFY(std::abs(drop(1, 3) - (logp - marianSequenceLogProb(*model, trace->sourceIds, prefix, &one))) <
            1e-4);
}

QTEST_GUILESS_MAIN(TestMarianDecode)
#include "test_marian_decode.moc"
