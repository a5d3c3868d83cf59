// The Llama family from GGUF files (core/models/llama_gguf.h) against the same checkpoints' Hugging Face
// folders (tests/data/llm, checked against transformers in test_llama_model):
// tools/golden/make_gguf_fixtures.py lays them out as llama.cpp's converter does (its names and keys, the
// llama architecture's q/k rows reordered per head, 1-D tensors F32). F32 and BF16 files give the folder's
// logits and attention (the interleaved rope turns the same pairs); F16, Q8_0 and Q4_K_M ones stay within the
// error their rounding makes, measured here, with the quantised weights kept as blocks; the config comes from
// the metadata; damaged metadata is one clear error.

#include "core/io/gguf.h"
#include "core/io/json_file.h"
#include "core/io/safetensors.h"
#include "core/models/llama_gguf.h"
#include "core/models/text_folder.h"
#include "core/util/error.h"
#include "support/cli_run.h"
#include "support/error_of.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace attnlens;

namespace {

const std::filesystem::path kData = ATTNLENS_TEST_DATA;

float maxAbsDiff(const Eigen::Ref<const RowMatrix>& a, const Eigen::Ref<const RowMatrix>& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    return (a - b).cwiseAbs().maxCoeff();
}

// The GGUF file's weights as a Hugging Face folder: every tensor decoded to float32 under its transformers
// name, the llama architecture's q/k rows put back in transformers' order (row i ← 2i, half + i ← 2i + 1 per
// head), beside the original folder's config.json — what the quantised file is, run by the folder loader.
std::filesystem::path decodedFolder(const std::filesystem::path& gguf, const std::string& folder,
                                    const QTemporaryDir& tmp) {
    const GgufFile f = GgufFile::open(gguf);
    const LlamaConfig c = llamaConfigFromGguf(f);
    const TensorFile t =
        f.toTensorFile(transformersTensorNames(f.string("general.architecture").value_or("")));
    std::vector<TensorToWrite> out;
    for (const TensorInfo& info : t.tensors()) {
        Tensor w = t.load(info).clone();
        const bool q = info.name.find("q_proj.weight") != std::string::npos,
                   k = info.name.find("k_proj.weight") != std::string::npos;
        if (c.ropeInterleaved && (q || k)) {
            const Tensor stored = w.clone();
            const int64_t cols = w.dim(1), heads = q ? c.heads : c.kvHeads, hd = c.headDim, half = hd / 2;
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t i = 0; i < half; ++i) {
                    std::copy_n(stored.data() + (h * hd + 2 * i) * cols, cols,
                                w.data() + (h * hd + i) * cols);
                    std::copy_n(stored.data() + (h * hd + 2 * i + 1) * cols, cols,
                                w.data() + (h * hd + half + i) * cols);
                }
        }
        out.push_back({info.name, std::move(w), DType::F32});
    }
    const std::filesystem::path dir = tmp.filePath("decoded").toStdString();
    std::filesystem::create_directories(dir);
    writeSafeTensors(dir / "model.safetensors", out);
    std::filesystem::copy_file(kData / "llm" / folder / "config.json", dir / "config.json");
    return dir;
}

std::vector<int> promptOf(const std::string& folder) {
    return readJsonFile(kData / "llm" / folder / "golden.json")["cases"][1]["ids"].get<std::vector<int>>();
}

} // namespace

class TestLlamaGguf : public QObject {
    Q_OBJECT
private slots:
    void matchesTheFolder_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("folder");
        QTest::addColumn<double>("logitBound");     // max |Δ logit|
        QTest::addColumn<double>("relativeBound");  // |Δ logits| / |logits| (rms over every position)
        QTest::addColumn<double>("attentionBound"); // max |Δ weight|
        QTest::addColumn<double>("meanBound");      // mean |Δ weight|
        // float32 and bfloat16 as stored: the same numbers up to the order of float sums
        QTest::newRow("llama F32") << "llama-gqa.f32.gguf"
                                   << "llama-gqa" << 1e-4 << 1e-5 << 1e-5 << 1e-6;
        QTest::newRow("qwen2 F32") << "qwen2-bias.f32.gguf"
                                   << "qwen2-bias" << 1e-4 << 1e-5 << 1e-5 << 1e-6;
        QTest::newRow("qwen3 BF16") << "qwen3-qknorm.bf16.gguf"
                                    << "qwen3-qknorm" << 1e-4 << 1e-5 << 1e-5 << 1e-6;
        QTest::newRow("gemma3 BF16") << "gemma3-gguf.bf16.gguf"
                                     << "gemma3-gguf" << 1e-4 << 1e-5 << 1e-5 << 1e-6;
        QTest::newRow("llama3 rope_freqs F32") << "llama3-rope.f32.gguf"
                                               << "llama3-rope" << 1e-4 << 1e-5 << 1e-5 << 1e-6;
        // Rounded weights against float32. Their relative rms error per weight (make_gguf_fixtures.py prints
        // it): F16 0.00021, Q8_0 0.0054 (a 255-step grid per 32 weights), Q6_K 0.019, Q4_K 0.078 (a 15-step
        // grid per 32 weights: step ≈ range / 15 ≈ 4σ / 15, error step / √12 ≈ 0.077σ). These fixtures'
        // q/k projections are scaled ×3 so that rows are peaked (make_llm_fixtures.py), and their softmax
        // amplifies the rounding about 6-10× into the logits. Measured here: F16 logits 0.0078 max (0.0012
        // relative), attention 0.0042; Q8_0 0.49 / 0.33 max (0.057 / 0.053 relative), attention 0.53 / 0.20
        // max, 0.0027 / 0.0029 mean (llama / qwen2); Q4_K_M (Q6_K output) 2.7 max, 0.45 relative, top-1 on 7
        // of 12 positions, attention 0.98 max (peaked rows move to another key), 0.027 mean. The bounds
        // leave about 1.5× room. That the files are exactly their decoded weights is
        // quantisedIsItsDecodedWeights.
        QTest::newRow("llama F16") << "llama-gqa.f16.gguf"
                                   << "llama-gqa" << 0.02 << 0.003 << 0.01 << 2e-4;
        QTest::newRow("llama Q8_0") << "llama-gqa.q8_0.gguf"
                                    << "llama-gqa" << 1.0 << 0.09 << 0.8 << 0.005;
        QTest::newRow("qwen2 Q8_0") << "qwen2-bias.q8_0.gguf"
                                    << "qwen2-bias" << 1.0 << 0.09 << 0.8 << 0.005;
        QTest::newRow("llama Q4_K_M") << "llama-q4k.q4_k.gguf"
                                      << "llama-q4k" << 4.0 << 0.7 << 1.0 << 0.04;
    }
    void matchesTheFolder() {
        QFETCH(QString, file);
        QFETCH(QString, folder);
        QFETCH(double, logitBound);
        QFETCH(double, relativeBound);
        QFETCH(double, attentionBound);
        QFETCH(double, meanBound);
        const auto gguf = LlamaModel::load(kData / "gguf" / file.toStdString());
        const auto hf = LlamaModel::load(kData / "llm" / folder.toStdString());
        const LlamaConfig &a = gguf->config(), &b = hf->config();
        QCOMPARE(a.modelType, b.modelType);
        QCOMPARE(a.hiddenSize, b.hiddenSize);
        QCOMPARE(a.heads, b.heads);
        QCOMPARE(a.kvHeads, b.kvHeads);
        QCOMPARE(a.headDim, b.headDim);
        QCOMPARE(a.vocabSize, b.vocabSize);
        QCOMPARE(a.tied, b.tied);
        QCOMPARE(a.attentionBias, b.attentionBias);
        QCOMPARE(a.qkNorm, b.qkNorm);
        QCOMPARE(a.gemma, b.gemma);
        QCOMPARE(a.windows, b.windows);
        QCOMPARE(a.sliding, b.sliding);
        QCOMPARE(a.queryScale, b.queryScale);
        QCOMPARE(int(a.activation), int(b.activation));
        QCOMPARE(a.rope.theta, b.rope.theta);
        QCOMPARE(a.localRope.theta, b.localRope.theta);
        QCOMPARE(a.ropeInterleaved, a.modelType == "llama");
        const std::vector<int> ids = promptOf(folder.toStdString());
        const TextForward x = gguf->forward(ids), y = hf->forward(ids);
        const float logits = maxAbsDiff(x.logits, y.logits);
        float attention = 0;
        for (int64_t i = 0; i < x.attentions.numel(); ++i)
            attention = std::max(attention, std::abs(x.attentions.data()[i] - y.attentions.data()[i]));
        const float relative = (x.logits - y.logits).norm() / y.logits.norm();
        double meanAttention = 0;
        for (int64_t i = 0; i < x.attentions.numel(); ++i)
            meanAttention += std::abs(x.attentions.data()[i] - y.attentions.data()[i]);
        meanAttention /= double(x.attentions.numel());
        int agree = 0;
        for (int64_t r = 0; r < x.logits.rows(); ++r) {
            int argX = 0, argY = 0;
            x.logits.row(r).maxCoeff(&argX);
            y.logits.row(r).maxCoeff(&argY);
            agree += argX == argY;
        }
        qInfo("%s: logits %.3g (relative rms %.3g, top-1 %d/%d), attention %.3g (mean %.3g)",
              qPrintable(file), logits, relative, agree, int(x.logits.rows()), attention, meanAttention);
        QVERIFY2(logits <= logitBound, qPrintable(QString("logits differ by %1").arg(logits)));
        QVERIFY2(attention <= attentionBound, qPrintable(QString("attention differs by %1").arg(attention)));
        QVERIFY2(relative <= relativeBound,
                 qPrintable(QString("logits differ by %1 relative").arg(relative)));
        QVERIFY2(meanAttention <= meanBound,
                 qPrintable(QString("attention differs by %1 on average").arg(meanAttention)));
        QCOMPARE(x.attentions.shape(), y.attentions.shape());
        // greedy continuations agree where the logits are this close
        if (logitBound <= 1e-3) {
            int argX = 0, argY = 0;
            x.logits.row(x.logits.rows() - 1).maxCoeff(&argX);
            y.logits.row(y.logits.rows() - 1).maxCoeff(&argY);
            QCOMPARE(argX, argY);
        }
    }

    // A rounded file is exactly its decoded weights: run as blocks (decoded row by row, the q/k rows in
    // llama.cpp's order with the interleaved rope) it gives what the folder loader gives on those weights
    // decoded once.
    void quantisedIsItsDecodedWeights_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("folder");
        QTest::newRow("llama F16") << "llama-gqa.f16.gguf"
                                   << "llama-gqa";
        QTest::newRow("llama Q8_0") << "llama-gqa.q8_0.gguf"
                                    << "llama-gqa";
        QTest::newRow("qwen2 Q8_0") << "qwen2-bias.q8_0.gguf"
                                    << "qwen2-bias";
        QTest::newRow("llama Q4_K_M") << "llama-q4k.q4_k.gguf"
                                      << "llama-q4k";
    }
    void quantisedIsItsDecodedWeights() {
        QFETCH(QString, file);
        QFETCH(QString, folder);
        QTemporaryDir tmp;
        const std::filesystem::path gguf = kData / "gguf" / file.toStdString();
        const auto blocks = LlamaModel::load(gguf);
        const auto decoded = LlamaModel::load(decodedFolder(gguf, folder.toStdString(), tmp));
        for (int n : {5, 12}) { // decoding-step rows and a prompt's (block-wise) path
            std::vector<int> ids = promptOf(folder.toStdString());
            ids.resize(size_t(std::min<int>(n, int(ids.size()))));
            const TextForward x = blocks->forward(ids), y = decoded->forward(ids);
            float attention = 0;
            for (int64_t i = 0; i < x.attentions.numel(); ++i)
                attention = std::max(attention, std::abs(x.attentions.data()[i] - y.attentions.data()[i]));
            QVERIFY2(maxAbsDiff(x.logits, y.logits) < 1e-4f,
                     qPrintable(QString("%1 tokens: logits %2").arg(n).arg(maxAbsDiff(x.logits, y.logits))));
            QVERIFY2(attention < 1e-4f, qPrintable(QString("%1 tokens: attention %2").arg(n).arg(attention)));
        }
    }

    // The quantised matrices stay blocks in memory (read row by row when used); norms stay float32.
    void blocksStayBlocks() {
        const auto m = LlamaModel::load(kData / "gguf" / "llama-gqa.q8_0.gguf");
        const LinearWeights& o = m->blocks()[0].attention.outWeights();
        QVERIFY(!o.half.empty());
        QCOMPARE(o.half.format(), HalfMatrix::Format::Ggml);
        QCOMPARE(o.half.ggmlType(), GgmlType::Q8_0);
        QCOMPARE(o.half.bytes(), int64_t(64 * 64 / 32 * 34));
        const auto f16 = LlamaModel::load(kData / "gguf" / "llama-gqa.f16.gguf");
        QCOMPARE(f16->blocks()[0].attention.outWeights().half.format(), HalfMatrix::Format::F16);
        const auto q4 = LlamaModel::load(kData / "gguf" / "llama-q4k.q4_k.gguf"); // 4.5 bits a weight
        const HalfMatrix& q4o = q4->blocks()[0].attention.outWeights().half;
        QCOMPARE(q4o.ggmlType(), GgmlType::Q4_K);
        QCOMPARE(q4o.bytes(), int64_t(256 * 256 / 256 * 144));
    }

    // Opened as a text model (the Text page's and `attnlens-cli text`'s loader): the file's own byte-level
    // vocabulary (one token per byte), its attention the folder's on the same ids.
    void opensAsATextModel() {
        const std::filesystem::path gguf = kData / "gguf" / "llama-gqa.f32.gguf";
        const TextFolder f = loadTextFolder(gguf);
        QCOMPARE(f.modelType, std::string("llama"));
        const TextEncoding e = f.encode("Hi there");
        QCOMPARE(e.ids.size(), size_t(8)); // no merges: a token per byte, no BOS (add_bos_token false)
        QCOMPARE(f.tokenText(e.ids[2]), std::string(" "));
        QTemporaryDir tmp;
        const QString json = tmp.filePath("run.json");
        const auto r = clitest::run(
            {"text", "--model", QString::fromStdString(gguf.string()), "--json", json, "Hi there"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Json j = readJsonFile(json.toStdString());
        const auto folder = LlamaModel::load(kData / "llm" / "llama-gqa");
        const TextForward want = folder->forward(e.ids);
        QCOMPARE(j["attentions"].size(), size_t(2));
        for (int h : {0, 5})
            for (int q = 0; q < 8; ++q)
                for (int k = 0; k <= q; ++k)
                    QVERIFY(std::abs(j["attentions"][1][h][q][k].get<float>() -
                                     want.attentions.at({1, h, q, k})) < 1e-5f);
    }

    void configFromMetadata() {
        const GgufFile f = GgufFile::open(kData / "gguf" / "qwen3-qknorm.bf16.gguf");
        const LlamaConfig c = llamaConfigFromGguf(f);
        QCOMPARE(c.headDim, 32); // attention.key_length, not 64 / 4
        QVERIFY(c.qkNorm && c.tied && !c.ropeInterleaved);
        QCOMPARE(c.rope.theta, 10000.0f);
        QCOMPARE(transformersTensorName("blk.12.attn_k_norm.weight"),
                 std::string("model.layers.12.self_attn.k_norm.weight"));
        QCOMPARE(transformersTensorName("blk.0.attn_q.bias"),
                 std::string("model.layers.0.self_attn.q_proj.bias"));
        QCOMPARE(transformersTensorName("output.weight"), std::string("lm_head.weight"));
        QVERIFY(transformersTensorName("blk.x.attn_q.weight").empty());
        QVERIFY(transformersTensorName("rope_freqs.weight").empty());
    }

    void damagedMetadataIsOneClearError() {
        QTemporaryDir tmp;
        auto patched = [&](const std::string& file, const std::string& from, const std::string& to) {
            std::ifstream in(kData / "gguf" / file, std::ios::binary);
            std::string bytes{std::istreambuf_iterator<char>(in), {}};
            const size_t at = bytes.find(from);
            bytes.replace(at, from.size(), to);
            const std::filesystem::path p = tmp.filePath("bad.gguf").toStdString();
            std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
            return p;
        };
        // another architecture's name: its keys are missing
        QVERIFY(errorOf([&] {
                    LlamaModel::load(patched("qwen2-bias.f32.gguf", "qwen2", "llama"));
                }).contains("metadata 'llama.embedding_length' is missing"));
        QVERIFY(errorOf([&] {
                    LlamaModel::load(patched("llama-gqa.f32.gguf", "llama", "gemma"));
                }).contains("architecture 'gemma'"));
        // a layer's tensor under another name: one weight problem naming it
        const QString missing =
            errorOf([&] { LlamaModel::load(patched("llama-gqa.f32.gguf", "blk.1.ffn_up", "blk.1.ffn_xx")); });
        QVERIFY2(missing.contains("model.layers.1.mlp.up_proj.weight") && missing.contains("its metadata"),
                 qPrintable(missing));
    }
};

QTEST_GUILESS_MAIN(TestLlamaGguf)
#include "test_llama_gguf.moc"
