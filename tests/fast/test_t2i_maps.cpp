// What the Text-to-image page and `attnlens-cli t2i` draw from a run (core/diffusion/t2i_maps.h), checked
// against the run's own tensors on the tiny pipeline of the goldens: the prompt's words (CLIP pieces merged
// at </w>), a word's map (equal to DAAM's aggregate per token; at a layer's own resolution, the sum of the
// token columns itself), heads, halves, a pixel's words, and the self-attention replayed on demand equal to
// the same layer captured in a full forward. Runs under ASan + UBSan in CI (label fast).

#include "core/analysis/value_weighting.h"
#include "core/diffusion/t2i_maps.h"
#include "core/util/error.h"
#include "support/error_of.h"
#include "support/unet_fixtures.h"

#include <QTest>

using namespace attnlens;
using unettest::maxAbsDiff;

namespace {

std::shared_ptr<const TextToImagePipeline> tinyPipe() {
    static const auto pipe =
        TextToImagePipeline::load(std::filesystem::path(ATTNLENS_TEST_DATA) / "t2i" / "tiny-pipe");
    return pipe;
}

T2iResult runTiny(const std::string& prompt, float guidance, bool allHeads, bool valueWeighted = false) {
    T2iRequest r;
    r.prompt = prompt;
    r.steps = 2;
    r.guidance = guidance;
    r.allHeads = allHeads;
    r.valueWeighted = valueWeighted;
    r.height = 16;
    r.width = 24;
    return runTextToImage(*tinyPipe(), r, nullptr);
}

// The [h, w] grid of a layer at one step: the sum of the tokens' columns of one kept head (or the mean).
RowMatrix layerGrid(const T2iCrossMap& m, const Tensor& w, int head, const std::vector<int>& tokens) {
    RowMatrix g = RowMatrix::Zero(m.layer.height, m.layer.width);
    const int64_t pixels = w.dim(1), keys = w.dim(2);
    for (int64_t p = 0; p < pixels; ++p)
        for (int t : tokens)
            g.data()[p] += w.data()[(head * pixels + p) * keys + t];
    return g;
}

float maxDiff(const RowMatrix& a, const RowMatrix& b) {
    return (a - b).cwiseAbs().maxCoeff();
}

} // namespace

class TestT2iMaps : public QObject {
    Q_OBJECT
private slots:
    void wordsMergePiecesAndKeepSpecialsApart() {
        const T2iResult r = runTiny("a sneaker above a bag", 7.5f, false);
        const auto words = t2iWords(r);
        std::vector<std::string> texts;
        for (const auto& w : words)
            texts.push_back(w.text);
        QCOMPARE(texts, (std::vector<std::string>{"<start>", "a", "sneaker", "above", "a", "bag", "<end>",
                                                  "padding"}));
        int pieces = 0;
        for (const auto& w : words)
            pieces += static_cast<int>(w.tokens.size());
        QCOMPARE(pieces, 77); // every token in one chip
        QCOMPARE(words.back().tokens.front(), r.promptTokens);
        QVERIFY(words[0].special() && !words[2].special());
        // a word the vocabulary does not hold whole: several pieces, one chip, shown without </w>
        const T2iResult split = runTiny("zxqvbag", 1.0f, false);
        const auto w2 = t2iWords(split);
        QCOMPARE(w2[1].text, std::string("zxqvbag"));
        QVERIFY(w2[1].tokens.size() >= 2);
        QCOMPARE(w2[2].text, std::string("<end>"));
    }

    void aWordIsFoundByItsTextFirstThenItsIndex() {
        std::vector<T2iWord> words{
            {"<start>", {0}, T2iWord::Kind::Start}, {"a", {1}}, {"2", {2}}, {"bags", {3}}, {"a", {4}},
            {"<end>", {5}, T2iWord::Kind::End}};
        QCOMPARE(t2iFindWord(words, "a"), 1); // the first of two
        QCOMPARE(t2iFindWord(words, "bags"), 3);
        QCOMPARE(t2iFindWord(words, "2"), 2); // a word that reads as a number is the word
        QCOMPARE(t2iFindWord(words, "4"), 4); // else an index
        QCOMPARE(t2iFindWord(words, "<end>"), 5);
        QCOMPARE(t2iFindWord(words, "6"), -1); // past the end
        QCOMPARE(t2iFindWord(words, "shoe"), -1);
        QCOMPARE(t2iFindWord(words, ""), -1);
        QCOMPARE(t2iFindWord(words, "-1"), -1);
        QCOMPARE(t2iFindWord(words, "99999999999"), -1); // no overflow
    }

    void wordMapIsDaamsAggregateAndTheLayersOwnGrid() {
        const T2iResult r = runTiny("a sneaker above a bag", 7.5f, false);
        const Tensor daam = aggregateWordMaps(r, 16, 24);
        for (int t : {0, 2, 5, 6, 40}) {
            T2iMapQuery q;
            q.tokens = {t};
            const RowMatrix m = t2iWordMap(r, q, 16, 24);
            QVERIFY(maxDiff(m, Eigen::Map<const RowMatrix>(daam.data() + t * 16 * 24, 16, 24)) < 1e-5f);
        }
        // at a layer's own resolution the bicubic upsampling is the identity: the map is the tokens' columns
        const auto layers = t2iCrossLayers(r);
        for (int l = 0; l < static_cast<int>(layers.size()); ++l) {
            T2iMapQuery q;
            q.tokens = {2, 3};
            q.step = 1;
            q.layer = l;
            const T2iCrossMap& m = r.steps[1].maps[size_t(l)];
            const RowMatrix got = t2iWordMap(r, q, m.layer.height, m.layer.width);
            QVERIFY(maxDiff(got, layerGrid(m, m.cond, 0, {2, 3})) < 1e-6f);
            q.half = T2iHalf::Uncond;
            QVERIFY(maxDiff(t2iWordMap(r, q, m.layer.height, m.layer.width),
                            layerGrid(m, m.uncond, 0, {2, 3})) < 1e-6f);
            q.half = T2iHalf::Difference;
            QVERIFY(maxDiff(t2iWordMap(r, q, m.layer.height, m.layer.width),
                            layerGrid(m, m.cond, 0, {2, 3}) - layerGrid(m, m.uncond, 0, {2, 3})) < 1e-6f);
        }
    }

    void headsNeedEveryHeadKept() {
        const T2iResult mean = runTiny("a bag", 7.5f, false);
        QVERIFY(!t2iHasAllHeads(mean));
        T2iMapQuery q;
        q.tokens = {2};
        q.heads = {1, HeadFusion::Mean};
        QVERIFY(errorOf([&] { t2iWordMap(mean, q, 16, 24); }).contains("every head kept"));
        q.heads = {-1, HeadFusion::Max};
        QVERIFY(errorOf([&] { t2iWordMap(mean, q, 16, 24); }).contains("every head kept"));
        const T2iResult all = runTiny("a bag", 7.5f, true);
        QVERIFY(t2iHasAllHeads(all));
        const T2iCrossMap& m = all.steps[0].maps[0];
        q.step = 0;
        q.layer = 0;
        q.heads = {1, HeadFusion::Mean};
        QVERIFY(maxDiff(t2iWordMap(all, q, m.layer.height, m.layer.width), layerGrid(m, m.cond, 1, {2})) <
                1e-6f);
        q.heads = {-1, HeadFusion::Max};
        RowMatrix top = layerGrid(m, m.cond, 0, {2});
        for (int h = 1; h < m.layer.heads; ++h)
            top = top.cwiseMax(layerGrid(m, m.cond, h, {2}));
        QVERIFY(maxDiff(t2iWordMap(all, q, m.layer.height, m.layer.width), top) < 1e-6f);
        q.heads = {m.layer.heads, HeadFusion::Mean};
        QVERIFY(errorOf([&] { t2iWordMap(all, q, 16, 24); }).contains("out of range"));
        // the mean over every kept head equals the run that kept only their mean
        q.heads = {};
        QVERIFY(maxDiff(t2iWordMap(all, q, 16, 24), t2iWordMap(mean, q, 16, 24)) < 1e-5f);
    }

    void badQueriesAreNamed() {
        const T2iResult unguided = runTiny("a bag", 1.0f, false);
        T2iMapQuery q;
        q.tokens = {2};
        q.half = T2iHalf::Uncond;
        QVERIFY(errorOf([&] { t2iWordMap(unguided, q, 16, 24); }).contains("guidance > 1"));
        q.half = T2iHalf::Cond;
        q.step = 3;
        QVERIFY(errorOf([&] { t2iWordMap(unguided, q, 16, 24); }).contains("step 3"));
        q.step = -1;
        q.tokens = {77};
        QVERIFY(errorOf([&] { t2iWordMap(unguided, q, 16, 24); }).contains("token 77"));
        q.tokens = {};
        QVERIFY(errorOf([&] { t2iWordMap(unguided, q, 16, 24); }).contains("no token"));
        QVERIFY(errorOf([&] { t2iPixelTokens(unguided, q, 16, 0, 16, 24); }).contains("outside"));
    }

    void aPixelsWordsAreItsRow() {
        const T2iResult r = runTiny("a sneaker above a bag", 7.5f, false);
        const auto words = t2iWords(r);
        T2iMapQuery q;
        const std::vector<float> tokens = t2iPixelTokens(r, q, 9, 17, 16, 24);
        float sum = 0;
        for (float v : tokens)
            sum += v;
        QVERIFY(std::abs(sum - 1.0f) < 1e-4f);
        const std::vector<float> perWord = t2iPixelWords(r, words, q, 9, 17, 16, 24);
        QCOMPARE(perWord.size(), words.size());
        QVERIFY(std::abs(perWord[2] - tokens[2]) < 1e-7f);
        // one step, one layer: the row of the layer's position of that pixel
        q.step = 1;
        q.layer = 0;
        const T2iCrossMap& m = r.steps[1].maps[0];
        const int64_t p = int64_t{9} * m.layer.height / 16 * m.layer.width + int64_t{17} * m.layer.width / 24;
        const std::vector<float> row = t2iPixelTokens(r, q, 9, 17, 16, 24);
        for (int k = 0; k < 77; ++k)
            QCOMPARE(row[size_t(k)], m.cond.data()[p * 77 + k]);
    }

    void selfAttentionReplayEqualsTheFullCapture() {
        const auto pipe = tinyPipe();
        const T2iResult r = runTiny("a sneaker above a bag", 7.5f, false);
        const Tensor states = pipe->encodePrompt(*pipe->loadTextEncoder(), "a sneaker above a bag");
        const T2iStep& step = r.steps[1];
        UNetConditioning c;
        c.encoderHiddenStates = states;
        const UNetOutput full = pipe->unet().forward(step.input, step.timestep, c);
        int checked = 0;
        for (int l = 0; l < static_cast<int>(full.attentions.size()); ++l) {
            if (full.attentions[size_t(l)].info.cross) {
                QVERIFY(errorOf([&] { t2iSelfAttention(*pipe, states, step, l); }).contains("not a self"));
                continue;
            }
            const UNetAttentionMap one = t2iSelfAttention(*pipe, states, step, l);
            QCOMPARE(one.info.name, full.attentions[size_t(l)].info.name);
            QCOMPARE(maxAbsDiff(one.weights, full.attentions[size_t(l)].weights), 0.0f);
            ++checked;
        }
        QVERIFY(checked >= 4);
        // the replayed step is the run's own call: its cross-attention equals what the run kept
        UNetRunOptions o;
        o.captureLayer = 1;
        const UNetOutput cross = pipe->unet().forward(step.input, step.timestep, c, o);
        QCOMPARE(cross.attentions.size(), size_t(1));
        QVERIFY(cross.attentions[0].info.cross);
        QVERIFY(maxAbsDiff(cross.attentions[0].weights, full.attentions[1].weights) == 0.0f);
        QCOMPARE(maxAbsDiff(cross.noisePred, full.noisePred), 0.0f);
    }

    // Value-weighted maps (issue 42): kept beside the weights when asked — the replayed call's weights times
    // its tokens' ‖v·W_O‖, renormalised per head, then the heads kept as asked; both halves; word maps and a
    // pixel's words read them; a run without them says so.
    void valueWeightedMapsAreTheReplayedCallsWeighted() {
        const auto pipe = tinyPipe();
        const T2iResult all = runTiny("a sneaker above a bag", 7.5f, true, true);
        const T2iResult mean = runTiny("a sneaker above a bag", 7.5f, false, true);
        const T2iStep& step = all.steps[1];
        UNetConditioning c;
        c.encoderHiddenStates = pipe->encodePrompt(*pipe->loadTextEncoder(), "a sneaker above a bag");
        const UNetOutput replay = pipe->unet().forward(step.input, step.timestep, c);
        size_t cross = 0;
        for (const UNetAttentionMap& a : replay.attentions) {
            if (!a.info.cross) continue;
            Tensor want = a.weights.clone();
            for (int64_t h = 0; h < want.dim(0); ++h)
                valueWeightRows(want.slice2d({h}), a.valueNorms.slice2d({}).row(h));
            const T2iCrossMap& kept = step.maps.at(cross);
            QVERIFY2(maxAbsDiff(kept.condWeighted, want) < 1e-5f, a.info.name.c_str());
            QCOMPARE(kept.uncondWeighted.shape(), kept.uncond.shape());
            const T2iCrossMap& meanKept = mean.steps[1].maps.at(cross);
            QCOMPARE(meanKept.condWeighted.dim(0), int64_t(1));
            const auto row = meanKept.condWeighted.slice2d({0}).row(3);
            QVERIFY(std::abs(row.sum() - 1.0f) < 1e-5f); // the mean of rows that sum to 1
            ++cross;
        }
        QVERIFY(cross >= 2);
        QVERIFY(t2iHasValueWeighted(all) && !t2iHasValueWeighted(runTiny("a bag", 1.0f, false)));
        T2iMapQuery q;
        q.tokens = t2iWords(mean)[2].tokens;
        const RowMatrix plain = t2iWordMap(mean, q, 16, 24);
        q.valueWeighted = true;
        QVERIFY(maxDiff(t2iWordMap(mean, q, 16, 24), plain) > 1e-4f);
        const std::vector<float> tokens = t2iPixelTokens(mean, q, 5, 7, 16, 24);
        double sum = 0;
        for (float v : tokens)
            sum += v;
        QVERIFY(std::abs(sum - 1.0) < 1e-4);
        const T2iResult bare = runTiny("a bag", 1.0f, false);
        QVERIFY(errorOf([&] { t2iWordMap(bare, q, 16, 24); }).contains("value-weighted"));
    }

    void imagesAndPreviews() {
        Tensor image({3, 1, 2});
        const float values[] = {0.0f, 1.0f, 0.5f, NAN, 2.0f, -1.0f};
        std::copy(values, values + 6, image.data());
        const ImageU8 u8 = t2iImageU8(image);
        QCOMPARE(u8.pixels, (std::vector<uint8_t>{0, 128, 255, 255, 0, 0}));
        Tensor latents({4, 2, 2});
        for (int64_t i = 0; i < latents.numel(); ++i)
            latents.data()[i] = static_cast<float>(i % 5) - 2.0f;
        const ImageU8 preview = latentPreview(latents);
        QCOMPARE(preview.width, 2);
        QCOMPARE(preview.channels, 3);
        QCOMPARE(*std::max_element(preview.pixels.begin(), preview.pixels.end()), uint8_t(255));
    }
};

QTEST_GUILESS_MAIN(TestT2iMaps)
#include "test_t2i_maps.moc"
