// Value-weighted attention (issue 42, core/analysis/value_weighting.h): the norms ‖v_j · W_O,hᵀ‖ on a
// hand-made layer, and on the fixtures (GPT-2, Llama with grouped KV heads, bf16) against the product made in
// full; rows value-weighted sum to 1 and keep α_ij n_j / α_ik n_k; `attnlens-cli text --value-weighted`
// writes both maps. A translation (greedy and beam search, the built-in Marian and a save_pretrained fixture)
// carries the norms its decoding met step by step, equal to a teacher-forced pass's over the same pieces, for
// every hypothesis of the tree; `attnlens-cli translate --value-weighted` writes the three maps.

#include "core/analysis/value_weighting.h"
#include "core/decode/trace_attention.h"
#include "core/io/json_file.h"
#include "core/models/llama_model.h"
#include "core/models/marian_folder.h"
#include "core/models/text_folder.h"
#include "core/util/error.h"
#include "support/cli_run.h"

#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>

using namespace attnlens;

namespace {

const std::filesystem::path kData = ATTNLENS_TEST_DATA;

LinearWeights dense(const RowMatrix& w) {
    return {Tensor::fromMatrix(w), {}, {}, {}};
}

std::shared_ptr<const TextModel> load(const std::string& folder) {
    if (folder.rfind("llm/", 0) == 0) return LlamaModel::load(kData / folder);
    return loadTextFolder(kData / folder).model;
}

} // namespace

class TestValueWeighting : public QObject {
    Q_OBJECT
private slots:
    // 2 heads of 2: W_O = diag(1, 2, 3, 4); key 0's value (1, 0 | 0, 1), key 1's (0, 1 | 1, 0).
    void handMadeLayer() {
        const RowMatrix eye = RowMatrix::Identity(4, 4);
        RowMatrix o = RowMatrix::Zero(4, 4);
        o.diagonal() << 1, 2, 3, 4;
        const MultiHeadAttention a(dense(eye), dense(eye), dense(eye), dense(o), 2);
        RowMatrix values(2, 4);
        values << 1, 0, 0, 1, //
            0, 1, 1, 0;
        const RowMatrix n = a.valueNorms(values);
        QCOMPARE(n.rows(), Eigen::Index(2));
        QVERIFY(std::abs(n(0, 0) - 1.0f) < 1e-6 &&
                std::abs(n(0, 1) - 2.0f) < 1e-6); // head 0: (1,0)→1, (0,1)→2
        QVERIFY(std::abs(n(1, 0) - 4.0f) < 1e-6 &&
                std::abs(n(1, 1) - 3.0f) < 1e-6); // head 1: (0,1)→4, (1,0)→3
        RowMatrix map(2, 2);
        map << 0.5f, 0.5f, //
            1.0f, 0.0f;
        valueWeightRows(map, n.row(1));
        QVERIFY(std::abs(map(0, 0) - 4.0f / 7.0f) < 1e-6 && std::abs(map(0, 1) - 3.0f / 7.0f) < 1e-6);
        QCOMPARE(map(1, 0), 1.0f);
        QCOMPARE(map(1, 1), 0.0f);
        RowMatrix zero = RowMatrix::Zero(1, 2);
        valueWeightRows(zero, n.row(0)); // a row of zeros stays zeros
        QCOMPARE(zero.sum(), 0.0f);
        QVERIFY_THROWS_EXCEPTION(Error, a.valueNorms(RowMatrix::Zero(2, 3)));
        QVERIFY_THROWS_EXCEPTION(Error, valueWeightRows(map, Eigen::RowVectorXf::Ones(3)));
    }

    void normsAreTheFullProduct_data() {
        QTest::addColumn<QString>("folder");
        QTest::newRow("GPT-2") << "text/gpt2";
        QTest::newRow("BERT") << "text/bert-mlm";
        QTest::newRow("Llama, GQA 8/2") << "llm/llama-gqa";
        QTest::newRow("Llama, MQA, bf16") << "llm/llama-mqa-tied-bf16";
    }
    void normsAreTheFullProduct() {
        QFETCH(QString, folder);
        const auto m = load(folder.toStdString());
        std::vector<int> ids;
        for (int i = 0; i < 7; ++i)
            ids.push_back((5 + 31 * i) % m->vocabSize());
        const auto norms = textValueNorms(*m, ids);
        QCOMPARE(norms.size(), size_t(m->layers()));
        const TransformerBlock& block = m->blocks()[1];
        // layer 1's values, made again: its input through the attention norm (pre) or as it is (post), v_proj
        ResidualTrace trace;
        RunControls run;
        run.trace = &trace;
        run.captureAttention = false;
        m->forward(ids, false, run);
        RowMatrix x = trace.layers[1].input, q, k, v;
        if (block.placement == TransformerBlock::Placement::Pre) block.attentionNorm.apply(x);
        block.attention.projectKeyValue(x, k, v);
        const MultiHeadAttention& a = block.attention;
        const LinearWeights& o = a.outWeights();
        RowMatrix w(o.outFeatures(), o.inFeatures());
        for (Eigen::Index r = 0; r < w.rows(); ++r)
            o.rowInto(r, w.row(r).data());
        const int64_t d = a.headDim();
        for (int h = 0; h < a.heads(); ++h) {
            const int kv = a.kvHeads() == a.heads() ? h : h / (a.heads() / a.kvHeads());
            const RowMatrix sent = v.middleCols(kv * d, d) * w.middleCols(h * d, d).transpose(); // [m, D]
            for (Eigen::Index j = 0; j < sent.rows(); ++j) {
                const float full = sent.row(j).norm();
                QVERIFY2(std::abs(norms[1](h, j) - full) <= 1e-4f * std::max(1.0f, full),
                         qPrintable(QString("head %1 key %2: %3 against %4")
                                        .arg(h)
                                        .arg(j)
                                        .arg(norms[1](h, j))
                                        .arg(full)));
            }
        }
        // value-weighted rows sum to 1 and keep the ratios
        TextForward f = m->forward(ids, false);
        Tensor weighted = f.attentions.clone();
        valueWeightAttentions(weighted, norms);
        for (int h = 0; h < a.heads(); ++h) {
            const float* raw = f.attentions.data() + ((1 * a.heads() + h) * 7 + 6) * 7; // layer 1, last query
            const float* got = weighted.data() + ((1 * a.heads() + h) * 7 + 6) * 7;
            double sum = 0;
            for (int j = 0; j < 7; ++j)
                sum += got[j];
            QVERIFY(std::abs(sum - 1.0) < 1e-5);
            const double ratio = double(got[0]) / got[6],
                         expected = double(raw[0]) * norms[1](h, 0) / (raw[6] * norms[1](h, 6));
            QVERIFY(std::abs(ratio - expected) <= 1e-4 * std::max(1.0, expected));
        }
    }

    // A decoder's cache gives the same norms with no pass at all
    void theCacheGivesTheSameNorms_data() { normsAreTheFullProduct_data(); }
    void theCacheGivesTheSameNorms() {
        QFETCH(QString, folder);
        const auto m = load(folder.toStdString());
        if (!m->decoderOnly()) QSKIP("encoders keep no cache");
        std::vector<int> ids;
        for (int i = 0; i < 9; ++i)
            ids.push_back((5 + 29 * i) % m->vocabSize());
        TextCache cache = m->newCache();
        m->extend(ids, cache, false, true, {});
        const auto expected = textValueNorms(*m, ids);
        const auto norms = cacheValueNorms(*m, cache);
        QCOMPARE(norms.size(), expected.size());
        for (size_t l = 0; l < norms.size(); ++l)
            QVERIFY((norms[l] - expected[l]).cwiseAbs().maxCoeff() < 1e-5);
    }

    // The norms a decoding collects (the encoder's pass, each step's appended key, beams batched) are those
    // of one teacher-forced pass over the same hypothesis.
    void translationNormsAreTheForcedPasses_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<int>("beams");
        const QString builtin =
            QString::fromStdString((kData / "../../resources/models/marian-de-en-tiny").string());
        QTest::newRow("built-in, greedy") << builtin << 1;
        QTest::newRow("built-in, 3 beams") << builtin << 3;
        QTest::newRow("fixture, 2 beams")
            << QString::fromStdString((kData / "marian/tiny-f32").string()) << 2;
    }
    void translationNormsAreTheForcedPasses() {
        QFETCH(QString, folder);
        QFETCH(int, beams);
        const MarianFolder f = loadMarianFolder(folder.toStdString());
        DecodeOptions options;
        options.numBeams = beams;
        options.maxNewTokens = 12;
        DecodeSession session(f.model, f.tokenizer, "Der kleine Hund schläft im Garten.", options);
        session.run();
        std::vector<int> nodes{session.bestNode()};
        const int last = int(session.nodes().size()) - 1; // a hypothesis the search left behind, likely
        if (beams > 1 && last != session.bestNode()) nodes.push_back(last);
        for (int node : nodes) {
            const auto trace = session.trace(node);
            const MarianModel& m = *f.model;
            ResidualTrace encoderTrace, decoderTrace;
            encoderTrace.values = decoderTrace.values = true;
            const MarianEncoderOutput encoder = m.encode(trace->sourceIds, false, nullptr, &encoderTrace);
            m.decodeForced(m.forcedDecoderInput(trace->targetIds), encoder, nullptr, &decoderTrace);
            const int64_t T = int64_t(trace->targetIds.size()), S = int64_t(trace->sourceIds.size());
            QCOMPARE(trace->decoderValueNorms.shape(),
                     Shape({m.config().decoderLayers, m.config().decoderHeads, T}));
            QCOMPARE(trace->crossValueNorms.shape(),
                     Shape({m.config().decoderLayers, m.config().decoderHeads, S}));
            QCOMPARE(trace->encoderValueNorms.shape(),
                     Shape({m.config().encoderLayers, m.config().encoderHeads, S}));
            auto close = [](const RowMatrix& got, const RowMatrix& want) {
                return got.rows() == want.rows() && got.cols() == want.cols() &&
                       (got - want).cwiseAbs().maxCoeff() <=
                           1e-4f * std::max(1.0f, want.cwiseAbs().maxCoeff());
            };
            for (int l = 0; l < m.config().encoderLayers; ++l)
                QVERIFY(
                    close(trace->encoderValueNorms.slice2d({l}), encoderTrace.layers[size_t(l)].valueNorms));
            for (int l = 0; l < m.config().decoderLayers; ++l) {
                QVERIFY2(
                    close(trace->decoderValueNorms.slice2d({l}), decoderTrace.layers[size_t(l)].valueNorms),
                    qPrintable(QString("node %1 decoder layer %2").arg(node).arg(l)));
                QVERIFY(close(trace->crossValueNorms.slice2d({l}),
                              decoderTrace.layers[size_t(l)].crossValueNorms));
            }
            // value-weighted rows sum to 1 (causal decoder rows over the keys they see)
            for (AttentionKind kind :
                 {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross}) {
                const Tensor w = traceValueWeighted(*trace, kind);
                QCOMPARE(w.shape(), traceAttention(*trace, kind).shape());
                const auto map = w.slice2d({1, 1});
                for (Eigen::Index r = 0; r < map.rows(); ++r)
                    QVERIFY(std::abs(map.row(r).sum() - 1.0f) < 1e-5f);
            }
        }
    }

    void cliWritesBothMaps() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("run.json");
        const auto r = clitest::run({"text", "--value-weighted", "--json", out, "Once upon a time"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json j = readJsonFile(out.toStdString());
        QCOMPARE(j["value_weighted"].size(), j["attentions"].size());
        const auto& row = j["value_weighted"][2][1][3];
        double sum = 0;
        for (const auto& v : row)
            sum += v.get<double>();
        QVERIFY(std::abs(sum - 1.0) < 1e-5);
        QVERIFY(j["value_weighted"][2][1][3][0].get<double>() != j["attentions"][2][1][3][0].get<double>());
    }

    void cliWritesTheTranslationsMaps() {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("run.json"), png = tmp.filePath("cross.png");
        const auto r = clitest::run(
            {"translate", "--value-weighted", "--json", out, "--heatmap", png, "Ich habe Hunger."});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(QFileInfo(png).size() > 0);
        const Json j = readJsonFile(out.toStdString());
        for (const char* kind : {"encoder", "decoder", "cross"}) {
            const Json& w = j["value_weighted"][kind];
            QCOMPARE(w.size(), j["attentions"][kind].size());
            double sum = 0;
            for (const auto& v : w[0][1][1])
                sum += v.get<double>();
            QVERIFY2(std::abs(sum - 1.0) < 1e-5, kind);
        }
        QVERIFY(j["value_weighted"]["cross"][0][0][0] != j["attentions"]["cross"][0][0][0]);
        const auto bad = clitest::run({"translate", "--value-weighted", "Ich habe Hunger."});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(bad.err.startsWith("error: "));
    }
};

QTEST_GUILESS_MAIN(TestValueWeighting)
#include "test_value_weighting.moc"
