// The shipped built-in models (resources/models) against the training code's own PyTorch inference
// (goldens written by tools/train/make_goldens.py into tests/data/builtin): the C++ engines must give the
// same ids exactly and the same logits and attention to 1e-4.

#include "core/decode/decode_session.h"
#include "core/diffusion/denoise_session.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/marian_folder.h"
#include "core/models/text_folder.h"
#include "core/models/vit_model.h"
#include "core/vision/image_io.h"
#include "support/json_compare.h"

#include <QTest>

#include <cmath>

using namespace attnlens;

namespace {

const std::string kGoldens = std::string(ATTNLENS_TEST_DATA) + "/builtin";
const std::string kSource = std::string(ATTNLENS_TEST_DATA) + "/../.."; // the repository root

using jsontest::maxDiff;

std::vector<std::string> goldenFiles(const char* prefix) {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(kGoldens))
        if (entry.path().filename().string().rfind(prefix, 0) == 0) files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

class TestBuiltinParity : public QObject {
    Q_OBJECT
private slots:
    void vit();
    void marian();
    void unet();
    void gpt2();
    void llama();
};

// A built-in text model against its goldens: ids, every head, the last logits, the greedy continuation of 8
// tokens (through the KV cache here, a full pass per token there).
static void checkTextGoldens(const char* prefix, const std::string& model) {
    const auto files = goldenFiles(prefix);
    QVERIFY(files.size() >= 3);
    const auto folder = loadTextFolder(builtinModelDir(model));
    for (const auto& file : files) {
        const Json g = readJsonFile(file);
        const auto e = folder.encode(g["text"].get<std::string>());
        QCOMPARE(e.ids, g["ids"].get<std::vector<int>>());
        const TextForward f = folder.forward(e.ids);
        QVERIFY2(maxDiff(f.attentions, g["attentions"]) < 1e-4, file.c_str());
        const int64_t vocab = f.logits.cols();
        const Tensor last = Tensor::fromMatrix(f.logits.bottomRows(1)).reshaped({vocab});
        QVERIFY2(maxDiff(last, g["last_logits"]) < 1e-4, file.c_str());
        TextCache cache = folder.model->newCache();
        RunControls quiet;
        quiet.captureAttention = false;
        auto step = folder.model->extend(e.ids, cache, true, true, quiet);
        std::vector<int> greedy;
        for (int i = 0; i < 8; ++i) {
            greedy.push_back(topCandidates(step.logits.data(), vocab, 1).front().id);
            step = folder.model->extend(std::vector<int>{greedy.back()}, cache, true, true, quiet);
        }
        QCOMPARE(greedy, g["greedy_ids"].get<std::vector<int>>());
    }
}

// The built-in GPT-2 against tools/golden/text_reference.py on its shipped weights.
void TestBuiltinParity::gpt2() {
    checkTextGoldens("gpt2_", "gpt2-en-tiny");
}

// The built-in Llama-architecture model (bf16 weights kept as stored) against transformers' own
// LlamaForCausalLM run in float32 on the same stored values (tools/golden/make_llm_fixtures.py --builtin),
// its ids from an independent BPE.
void TestBuiltinParity::llama() {
    QCOMPARE(loadTextFolder(builtinModelDir("llama-en-tiny")).modelType, std::string("llama"));
    checkTextGoldens("llama_", "llama-en-tiny");
}

void TestBuiltinParity::vit() {
    const auto files = goldenFiles("vit_");
    QVERIFY(files.size() >= 3);
    const auto loaded = VitModel::load(builtinModelDir("vit-fashion-mnist"));
    const VitModel& model = *loaded;
    for (const auto& file : files) {
        const Json g = readJsonFile(file);
        const auto result = model.run(loadImage(kSource + "/" + g["image"].get<std::string>()));
        // Logits and attention: float32 on both sides, different summation order → 1e-4 absolute.
        QVERIFY2(maxDiff(result.input.pixels.reshaped({28, 28}), g["pixel_values"]) < 1e-6, file.c_str());
        QVERIFY2(maxDiff(result.output.logits, g["logits"]) < 1e-4, file.c_str());
        QVERIFY2(maxDiff(result.output.attentions, g["attentions"]) < 1e-4, file.c_str());
        QCOMPARE(model.topK(result.output, 1).front().index, g["predicted"].get<int>());
        QCOMPARE(model.topK(result.output, 1).front().label, g["predicted_label"].get<std::string>());
    }
}

void TestBuiltinParity::marian() {
    const auto files = goldenFiles("marian_");
    QVERIFY(files.size() >= 3);
    const auto folder = loadMarianFolder(builtinModelDir("marian-de-en-tiny"));
    for (const auto& file : files) {
        const Json g = readJsonFile(file);
        const std::string source = g["source"].get<std::string>();
        const auto encoding = folder.tokenizer->encode(source);
        QCOMPARE(encoding.ids, g["source_ids"].get<std::vector<int>>());

        DecodeOptions options;
        options.numBeams = g["num_beams"].get<int>();
        options.maxNewTokens = g["max_new_tokens"].get<int>();
        DecodeSession session(folder.model, folder.tokenizer, source, options);
        session.run();
        const auto trace = session.trace();
        QCOMPARE(trace->targetIds, g["target_ids"].get<std::vector<int>>()); // ids exactly
        QCOMPARE(trace->translation, g["translation"].get<std::string>());

        // Attention captured during decoding vs the reference's teacher-forced pass.
        QVERIFY2(maxDiff(trace->encoderAttention, g["attentions"]["encoder"]) < 1e-4, file.c_str());
        QVERIFY2(maxDiff(trace->decoderAttention, g["attentions"]["decoder"]) < 1e-4, file.c_str());
        QVERIFY2(maxDiff(trace->crossAttention, g["attentions"]["cross"]) < 1e-4, file.c_str());

        const auto enc = folder.model->encode(encoding.ids);
        const auto forced = folder.model->decodeForced(g["decoder_input_ids"].get<std::vector<int>>(), enc);
        QVERIFY2(maxDiff(forced.logits, g["logits"]) < 1e-4, file.c_str());
    }
}

void TestBuiltinParity::unet() {
    const auto files = goldenFiles("unet_");
    QVERIFY(!files.empty());
    const auto model = loadDiffusionModel(builtinModelDir("ddpm-fashion-tiny"));
    for (const auto& file : files) {
        const Json g = readJsonFile(file);
        const auto& c = model.unet->config();
        Tensor sample({c.inChannels, c.sampleSize, c.sampleSize});
        const std::vector<float> flat = jsontest::flatten(g["sample"]);
        QCOMPARE(static_cast<int64_t>(flat.size()), sample.numel());
        std::copy(flat.begin(), flat.end(), sample.data());
        const int cls = g["class"].get<int>();
        const UNetOutput out = model.unet->forward(sample, g["timestep"].get<float>(), cls);
        QVERIFY2(maxDiff(out.noisePred, g["noise_pred"]) < 1e-4, file.c_str());
        QCOMPARE(out.attentions.size(), g["attentions"].size());
        for (size_t i = 0; i < out.attentions.size(); ++i) {
            QCOMPARE(out.attentions[i].info.name, g["attentions"][i]["name"].get<std::string>());
            QVERIFY2(maxDiff(out.attentions[i].weights, g["attentions"][i]["weights"]) < 1e-4, file.c_str());
        }
        DenoiseOptions options;
        options.scheduler = SchedulerKind::Ddim;
        options.steps = 10;
        options.classLabel = cls;
        options.initNoise = sample;
        DenoiseSession session(model, options);
        session.run();
        QCOMPARE(session.timesteps(), g["ddim10"]["timesteps"].get<std::vector<int>>());
        QVERIFY2(maxDiff(session.finalSample(), g["ddim10"]["final_sample"]) < 1e-3, file.c_str());
    }
}

QTEST_GUILESS_MAIN(TestBuiltinParity)
#include "test_builtin_parity.moc"
