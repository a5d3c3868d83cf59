// Llama-style decoders (tests/data/llm, tools/golden/make_llm_fixtures.py: tiny random checkpoints written by
// transformers' own save_pretrained, goldens from its own modeling classes in float32): attention and logits
// within 1e-4, the greedy continuation through the KV cache identical, incremental steps equal to one pass;
// sharded checkpoints; what is not implemented refused naming the field.

#include "core/io/json_file.h"
#include "core/io/tensor_file.h"
#include "core/models/llama_model.h"
#include "core/util/error.h"
#include "support/error_of.h"
#include "support/on_demand_check.h"
#include "support/text_fixtures.h"

#include <QTest>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace attnlens;

namespace {

const std::filesystem::path kLlm = std::filesystem::path(ATTNLENS_TEST_DATA) / "llm";
using texttest::kTol;
using texttest::maxDiff;

using texttest::argmax;

std::filesystem::path withConfig(const QTemporaryDir& tmp, const std::string& model, const std::string& key,
                                 const Json& value) {
    return texttest::withConfig(tmp, kLlm / model, key, value);
}

} // namespace

class TestLlamaModel : public QObject {
    Q_OBJECT
private slots:
    void matchesTransformers_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("Llama, GQA 8/2") << "llama-gqa";
        QTest::newRow("Llama, MQA, tied, bf16, linear rope") << "llama-mqa-tied-bf16";
        QTest::newRow("Llama, hidden 256 (the Q4_K_M GGUF's original), bf16") << "llama-q4k";
        QTest::newRow("Llama 3 rope scaling") << "llama3-rope";
        QTest::newRow("Llama, sharded safetensors") << "llama-sharded";
        QTest::newRow("Mistral, sliding window 4") << "mistral-window";
        QTest::newRow("Qwen2, q/k/v bias, tied") << "qwen2-bias";
        QTest::newRow("Qwen2, use_sliding_window from max_window_layers") << "qwen2-window";
        QTest::newRow("Qwen3, q/k norm, head_dim 32") << "qwen3-qknorm";
        QTest::newRow("Gemma 3, mixed layers") << "gemma3";
        QTest::newRow("Gemma 3, every 6th layer full (the GGUF fixture's original)") << "gemma3-gguf";
    }
    void matchesTransformers() {
        QFETCH(QString, model);
        const auto dir = kLlm / model.toStdString();
        const auto m = LlamaModel::load(dir);
        const auto golden = TensorFile::open(dir / "golden.safetensors");
        const Json cases = readJsonFile(dir / "golden.json")["cases"];
        QVERIFY(cases.size() >= 2);
        for (size_t i = 0; i < cases.size(); ++i) {
            const auto ids = cases[i]["ids"].get<std::vector<int>>();
            const TextForward f = m->forward(ids);
            const std::string p = "t" + std::to_string(i) + ".";
            const Tensor att = golden.load(p + "attentions"), logits = golden.load(p + "logits");
            QCOMPARE(shapeToString(f.attentions.shape()), shapeToString(att.shape()));
            const double da = maxDiff(f.attentions.data(), att.data(), att.numel());
            QVERIFY2(da < kTol, qPrintable(QString("case %1 attention off by %2").arg(i).arg(da)));
            QCOMPARE(f.logits.size(), logits.numel());
            const double dl = maxDiff(f.logits.data(), logits.data(), logits.numel());
            QVERIFY2(dl < kTol, qPrintable(QString("case %1 logits off by %2").arg(i).arg(dl)));
            // Greedy through the KV cache, one token a step, as the Text page generates.
            TextCache cache = m->newCache();
            TextForward step = m->extend(ids, cache, true, true, {});
            std::vector<int> greedy;
            for (size_t k = 0; k < cases[i]["greedy"].size(); ++k) {
                greedy.push_back(argmax(step.logits.data(), step.logits.cols()));
                const int next = greedy.back();
                step = m->extend(std::span<const int>(&next, 1), cache, true, true, {});
            }
            QCOMPARE(greedy, cases[i]["greedy"].get<std::vector<int>>());
        }
    }

    // Token by token through the cache gives the rows of one pass (windows and rotations at the right place).
    // Above the capture budget the attention is kept on demand; its maps equal the captured ones bit for bit
    // (sliding windows, q/k norms, Gemma 3's local rope, grouped heads; heads switched off).
    void onDemandEqualsCaptured_data() { matchesTransformers_data(); }
    void onDemandEqualsCaptured() {
        QFETCH(QString, model);
        const auto dir = kLlm / model.toStdString();
        const auto m = LlamaModel::load(dir);
        const auto ids = readJsonFile(dir / "golden.json")["cases"][1]["ids"].get<std::vector<int>>();
        texttest::checkOnDemand(*m, ids, {{0, 1}, {m->layers() - 1, 0}});
        RunControls overBudget;
        overBudget.captureBudget = 0;
        const TextForward f = m->forward(ids, false, overBudget);
        QVERIFY(f.onDemand && f.onDemand->bytes() > 0 && f.attentions.empty());
    }

    void stepsEqualOnePass_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("mistral-window") << "mistral-window";
        QTest::newRow("gemma3") << "gemma3";
        QTest::newRow("qwen3-qknorm") << "qwen3-qknorm";
    }
    void stepsEqualOnePass() {
        QFETCH(QString, model);
        const auto m = LlamaModel::load(kLlm / model.toStdString());
        const auto ids = readJsonFile(kLlm / model.toStdString() / "golden.json")["cases"][1]["ids"]
                             .get<std::vector<int>>();
        const TextForward whole = m->forward(ids);
        const auto t = static_cast<int64_t>(ids.size());
        TextCache cache = m->newCache();
        for (int64_t i = 0; i < t; ++i) {
            const TextForward one =
                m->extend(std::span<const int>(&ids[size_t(i)], 1), cache, true, true, {});
            for (int l = 0; l < m->layers(); ++l)
                for (int h = 0; h < m->heads(); ++h)
                    for (int64_t j = 0; j <= i; ++j)
                        QVERIFY(std::abs(one.attentions.at({l, h, 0, j}) -
                                         whole.attentions.at({l, h, i, j})) < 1e-5);
            QVERIFY(maxDiff(one.logits.data(), whole.logits.row(i).data(), m->vocabSize()) < 1e-4);
        }
    }

    void slidingWindowInTheMaps() {
        const auto m = LlamaModel::load(kLlm / "mistral-window");
        const int w = m->config().windows.at(0);
        QVERIFY(w > 0);
        const auto ids =
            readJsonFile(kLlm / "mistral-window" / "golden.json")["cases"][1]["ids"].get<std::vector<int>>();
        QVERIFY(static_cast<int>(ids.size()) > w + 2);
        const TextForward f = m->forward(ids);
        const auto t = static_cast<int64_t>(ids.size());
        for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j) {
                const bool visible = j <= i && j > i - w;
                QCOMPARE(f.attentions.at({0, 0, i, j}) > 0.0f, visible);
            }
        const LlamaConfig gemma = LlamaModel::load(kLlm / "gemma3")->config();
        QVERIFY(std::count(gemma.windows.begin(), gemma.windows.end(), 0) >= 1); // a global layer
        QVERIFY(std::count_if(gemma.windows.begin(), gemma.windows.end(), [](int x) { return x > 0; }) >= 1);
    }

    void configsRead() {
        const LlamaConfig gqa = readLlamaConfig(kLlm / "llama-gqa");
        QCOMPARE(gqa.heads / gqa.kvHeads, 4);
        const LlamaConfig qwen3 = readLlamaConfig(kLlm / "qwen3-qknorm");
        QVERIFY(qwen3.headDim * qwen3.heads != qwen3.hiddenSize);
        QVERIFY(qwen3.qkNorm);
        QVERIFY(readLlamaConfig(kLlm / "qwen2-bias").attentionBias);
        QVERIFY(readLlamaConfig(kLlm / "llama-mqa-tied-bf16").tied);
        QCOMPARE(readLlamaConfig(kLlm / "llama3-rope").rope.type, std::string("llama3"));
        // Keys left out mean the config class's defaults; null means none (review of issue 39).
        QTemporaryDir tmp;
        const LlamaConfig gemma = readLlamaConfig(withConfig(tmp, "gemma3", "sliding_window", nullptr));
        QCOMPARE(gemma.windows, (std::vector<int>{4096, 4096, 0}));
        QCOMPARE(gemma.localRope.theta, 10000.0f);
        QVERIFY(readLlamaConfig(withConfig(tmp, "mistral-window", "attention_bias", true)).attentionBias ==
                false);
        const auto noWindow =
            withConfig(tmp, "mistral-window", "layer_types", Json::array({"full_attention"}));
        QCOMPARE(readLlamaConfig(noWindow).windows, (std::vector<int>{4, 4})); // Mistral: every layer
    }

    void badInputRefused() {
        QTemporaryDir tmp;
        QVERIFY(errorOf([&] {
                    LlamaModel::load(
                        withConfig(tmp, "llama-gqa", "rope_scaling", {{"rope_type", "yarn"}, {"factor", 4}}));
                }).contains("rope_scaling of type 'yarn' is not supported"));
        // Dynamic NTK scaling re-rotates by the current length (cached keys keep their old rotation):
        // refused.
        QVERIFY(errorOf([&] {
                    LlamaModel::load(kLlm / "llama-dynamic");
                }).contains("rope_scaling of type 'dynamic' is not supported"));
        QVERIFY(errorOf([&] {
                    LlamaModel::load(withConfig(tmp, "llama-gqa", "num_local_experts", 8));
                }).contains("num_local_experts"));
        QVERIFY(errorOf([&] {
                    LlamaModel::load(withConfig(tmp, "llama-gqa", "num_key_value_heads", 3));
                }).contains("num_key_value_heads"));
        QVERIFY(errorOf([&] {
                    LlamaModel::load(withConfig(tmp, "llama-gqa", "vocab_size", 300));
                }).contains("the checkpoint does not match config.json"));
        // a layer count no model has is refused before anything is sized by it (issue 46: a fuzzed GGUF's
        // block_count of 721 million asked for 2.9 GB; tests/fuzz/regressions/fuzz_gguf replays it)
        QVERIFY(errorOf([&] {
                    LlamaModel::load(withConfig(tmp, "llama-gqa", "num_hidden_layers", 721000000));
                }).contains("'num_hidden_layers' is 721000000, more than 1024 layers"));
        // so are widths no model has (a head_dim of 2·10⁹ took 7.9 GB and 25 s before its weights refused it)
        for (const char* key : {"head_dim", "hidden_size", "intermediate_size", "vocab_size"})
            QVERIFY2(errorOf([&] {
                         LlamaModel::load(withConfig(tmp, "llama-gqa", key, 2000000000));
                     }).contains("is more than 1048576 (no model is that wide)"),
                     key);
        const auto m = LlamaModel::load(kLlm / "llama-gqa");
        QVERIFY(errorOf([&] {
                    m->forward(std::vector<int>(size_t(m->maxPositions()) + 1, 5));
                }).contains("the text is too long"));
        QVERIFY(errorOf([&] {
                    m->forward(std::vector<int>{1, m->vocabSize()});
                }).contains("outside the vocabulary"));
    }

    void shardsChecked() {
        QTemporaryDir tmp;
        const auto dir = withConfig(tmp, "llama-sharded", "model_type", "llama");
        const Json index = readJsonFile(dir / "model.safetensors.index.json");
        const std::string shard = index["weight_map"].begin().value().get<std::string>();
        std::filesystem::remove(dir / shard);
        QVERIFY(errorOf([&] {
                    LlamaModel::load(dir);
                }).contains("shard '" + QString::fromStdString(shard) + "' is missing"));
        Json bad = index;
        bad["weight_map"]["model.norm.weight"] = "../x.safetensors";
        std::ofstream(dir / "model.safetensors.index.json") << bad.dump();
        QVERIFY(errorOf([&] { LlamaModel::load(dir); }).contains("not a file beside the index"));
    }
};

QTEST_GUILESS_MAIN(TestLlamaModel)
#include "test_llama_model.moc"
