// The neuron view (core/analysis/neuron_view) on ViT and Marian: for several heads, queries and keys of every
// layer and attention kind, the softmax weight rebuilt from the raw q and k vectors equals the attention the
// plain forward pass captured (ViT forward, Marian encode / decodeForced); masked keys of the decoder's
// causal self-attention get weight 0; the layer inputs come from the models' own probes. (The U-Net's is in
// test_unet.)

#include "core/analysis/neuron_view.h"
#include "core/io/json_file.h"
#include "core/models/marian_model.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"
#include "marian_test_util.h"
#include "support/cli_run.h"
#include "support/error_of.h"
#include "support/vit_fixtures.h"

#include <QTemporaryDir>
#include <QTest>

using namespace attnlens;

namespace {

// Every (head, query, key) of a few spread-out positions of one [H, n, m] capture.
void compareWithCapture(const AttentionInputs& inputs, const Tensor& probs, const QString& where) {
    const int heads = static_cast<int>(probs.dim(0));
    const int n = static_cast<int>(probs.dim(1)), m = static_cast<int>(probs.dim(2));
    const ProjectedAttention projected = projectAttention(inputs); // what the dialog computes once per layer
    for (int h = 0; h < heads; ++h)
        for (int q : {0, n / 2, n - 1})
            for (int k : {0, m / 3, m - 1}) {
                const NeuronTerms t = neuronTerms(inputs, h, q, k);
                const double captured = probs.at({h, q, k});
                QVERIFY2(std::abs(t.weight - captured) < 1e-5,
                         qPrintable(QString("%1 head %2 query %3 key %4: %5 vs %6")
                                        .arg(where)
                                        .arg(h)
                                        .arg(q)
                                        .arg(k)
                                        .arg(t.weight)
                                        .arg(captured)));
                const NeuronTerms viaProjection = neuronTerms(projected, h, q, k);
                QVERIFY(std::abs(viaProjection.weight - t.weight) < 1e-6);
                QCOMPARE(viaProjection.masked, t.masked);
                double sum = 0;
                for (float p : t.product)
                    sum += p;
                QVERIFY(std::abs(sum - t.dot) < 1e-4 * std::max(1.0, std::abs(t.dot)));
            }
}

} // namespace

class TestNeuronView : public QObject {
    Q_OBJECT
private slots:
    void vitWeightsEqualTheCapture() {
        const VitModel vit = *VitModel::load(vittest::modelDir("rgb"));
        const Tensor pixels = vittest::golden("rgb", "photo_97x61", "pixels");
        const VitOutput plain = vit.forward(pixels);
        for (int layer = 0; layer < vit.config().numLayers; ++layer) {
            AttentionInputs inputs;
            VitRunOptions o;
            o.captureAttention = false;
            o.probe = &inputs;
            o.probeLayer = layer;
            vit.forward(pixels, o);
            QVERIFY(inputs.attention);
            QCOMPARE(inputs.queryInput.rows(), plain.attentions.dim(2));
            compareWithCapture(inputs, plain.attentions.sub({layer}), QString("vit layer %1").arg(layer));
        }
    }

    void marianWeightsEqualTheCaptureForEveryKind() {
        const auto model = MarianModel::load(marian_test::variantDir("tiny-f32"));
        const auto g = marian_test::golden("tiny-f32")["cases"][0];
        const std::vector<int> src = marian_test::ids(g["source_ids"]);
        std::vector<int> input = {model->config().decoderStartTokenId};
        const std::vector<int> greedy = marian_test::ids(g["greedy"]["ids"]);
        input.insert(input.end(), greedy.begin(), greedy.end() - 1);
        const MarianEncoderOutput enc = model->encode(src);
        const MarianForcedOutput forced = model->decodeForced(input, enc);
        for (int layer = 0; layer < model->config().encoderLayers; ++layer)
            compareWithCapture(model->attentionInputs(AttentionKind::EncoderSelf, layer, src, input),
                               enc.selfAttention.sub({layer}), QString("encoder layer %1").arg(layer));
        for (int layer = 0; layer < model->config().decoderLayers; ++layer) {
            const AttentionInputs self =
                model->attentionInputs(AttentionKind::DecoderSelf, layer, src, input);
            QVERIFY(self.causal);
            compareWithCapture(self, forced.selfAttention.sub({layer}),
                               QString("decoder layer %1").arg(layer));
            compareWithCapture(model->attentionInputs(AttentionKind::Cross, layer, src, input),
                               forced.crossAttention.sub({layer}), QString("cross layer %1").arg(layer));
            // A key after the query in the causal self-attention is masked: weight 0, and the row still sums
            // to 1.
            const NeuronTerms masked = neuronTerms(self, 0, 0, 1);
            QVERIFY(masked.masked);
            QCOMPARE(masked.weight, 0.0);
            QVERIFY(std::isinf(masked.rowScores[1]));
        }
        QVERIFY(errorOf([&] {
                    model->attentionInputs(static_cast<AttentionKind>(3), 0, src, input);
                }).contains("kind"));
        QVERIFY(errorOf([&] {
                    model->attentionInputs(AttentionKind::EncoderSelf, 9, src, input);
                }).contains("layer 9"));
        QVERIFY(errorOf([&] {
                    model->attentionInputs(AttentionKind::DecoderSelf, 0, src, {});
                }).contains("no input tokens"));
    }

    // attnlens-cli neuron on a sentence (each kind) and a picture: the JSON's weight equals the captured one,
    // the labels are the matrix's, "ROW,COL" picks a patch; bad input is one error line.
    void cliTakesOneScoreApart() {
        QTemporaryDir tmp;
        const QString model = QString::fromStdString(marian_test::variantDir("tiny-f32").string());
        for (const char* kind : {"encoder", "decoder", "cross"}) {
            const QString out = tmp.filePath(QString("%1.json").arg(kind));
            const auto r = clitest::run({"neuron", "--model", model, "--src", "Das Haus ist klein.", "--kind",
                                         kind, "--layer", "1", "--head", "1", "--query", "1", "--key",
                                         "argmax", "--json", out});
            QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
            const Json j = readJsonFile(out.toStdString());
            QCOMPARE(j["kind"].get<std::string>(), std::string(kind));
            QVERIFY(std::abs(j["weight"].get<double>() - j["captured_weight"].get<double>()) < 1e-5);
            QVERIFY(!j["query"]["label"].get<std::string>().empty());
            QCOMPARE(j["q"].size(), size_t(j["head_dim"].get<int>()));
        }
        const QString vit = QString::fromStdString(vittest::modelDir("rgb").string());
        const QString image = QString::fromStdString(vittest::imagePath("photo_97x61.png").string());
        const QString out = tmp.filePath("vit.json");
        const auto r = clitest::run({"neuron", "--model", vit, "--image", image, "--layer", "0", "--head",
                                     "2", "--query", "1,2", "--key", "cls", "--json", out});
        QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(r.err));
        const Json j = readJsonFile(out.toStdString());
        QCOMPARE(j["key"]["index"].get<int>(), 0);
        QVERIFY(std::abs(j["weight"].get<double>() - j["captured_weight"].get<double>()) < 1e-5);
        clitest::expectError(clitest::run({"neuron", "--model", model, "--src", "Hallo", "--layer", "0",
                                           "--head", "0", "--query", "0,1", "--key", "0"}),
                             "pictures only");
        clitest::expectError(clitest::run({"neuron", "--model", model, "--src", "Hallo", "--kind", "sideways",
                                           "--layer", "0", "--head", "0", "--query", "0", "--key", "0"}),
                             "--kind");
        clitest::expectError(clitest::run({"neuron", "--model", vit, "--src", "Hallo", "--image", image,
                                           "--layer", "0", "--head", "0", "--query", "0", "--key", "0"}),
                             "exactly one");
    }
};

QTEST_GUILESS_MAIN(TestNeuronView)
#include "test_neuron_view.moc"
