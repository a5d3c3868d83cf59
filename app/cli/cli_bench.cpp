// attnlens-cli bench [--model DIR] (--image IMG | --src TEXT [--new-tokens N] [--beam N] | --text TEXT
// [--new-tokens N]
//                    | [--sample X.npy] [--timestep T] [--class C]) [--repeat N] [--warmup N] [--threads N]
//                    [--precision fp32|bf16]
// With --precision bf16 the output also holds "parity": bf16 against float32 on the same input.
// A diffusers folder as --model times the U-Net (on --sample, or seeded noise of its sample_size).
// stdout: one JSON object {"task", "threads", "repeat", "median_ms", "min_ms", "max_ms", ...}; every
// head is captured exactly as in a normal run. Each task is one entry of kTasks: add a task by
// writing a BenchFn and listing it there.

#include "cli_common.h"
#include "core/analysis/precision_parity.h"
#include "core/decode/decode_session.h"
#include "core/diffusion/diffusion_model.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/io/npy_reader.h"
#include "core/models/marian_folder.h"
#include "core/models/text_folder.h"
#include "core/models/text_generation.h"
#include "core/models/vit_model.h"
#include "core/ops/gemm.h"
#include "core/util/parallel.h"
#include "core/util/random.h"
#include "core/vision/image_io.h"
#include "core/vision/preprocess.h"

#include <algorithm>
#include <chrono>
#include <iostream>

namespace {

using attnlens::Json;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct BenchSettings {
    int repeat = 5;
    int warmup = 1;
    int threads = 1;
};

// A task runs warmup + repeat timed iterations and returns the timings of the repeats (total_ms)
// plus task-specific fields (merged into the output object).
struct BenchRun {
    std::vector<double> totalMs;
    Json extra = Json::object();
};
using BenchFn = BenchRun (*)(const cli::Args& args, const BenchSettings& settings);

// bf16 against float32 on the benchmark's own input (core/analysis/precision_parity).
Json parityJson(const attnlens::PrecisionParity& p) {
    return {{"compared", p.quantity},
            {"max_abs_logits", p.maxAbsLogits},
            {"fp32_max_abs_logits", p.logitScale},
            {"max_abs_attention", p.attentionCompared ? Json(p.maxAbsAttention) : Json(nullptr)},
            {"same_result", p.sameResult},
            {"fp32_result", p.reference},
            {"result", p.result},
            {"fp32_ms", p.referenceMs},
            {"bf16_ms", p.resultMs}};
}

BenchRun benchTranslation(const cli::Args& args, const BenchSettings& settings) {
    const std::string text = *args.value("--src");
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Marian);
    attnlens::DecodeOptions options;
    options.numBeams = args.intValue("--beam", 1, 1, 64);
    options.maxNewTokens = args.intValue("--new-tokens", 32, 1, 100000);
    options.captureAttention = true;

    const auto loadStart = Clock::now();
    const auto folder = attnlens::loadMarianFolder(dir);
    const double loadMs = msSince(loadStart);

    BenchRun run;
    std::vector<double> encodeMs, perTokenMs;
    int tokens = 0;
    for (int i = 0; i < settings.warmup + settings.repeat; ++i) {
        const auto start = Clock::now();
        attnlens::DecodeSession session(folder.model, folder.tokenizer, text, options); // tokenize + encode
        const double enc = msSince(start);
        session.run();
        const auto trace = session.trace(); // assembling the full tensors is part of a normal run
        const double total = msSince(start);
        if (i < settings.warmup) continue;
        tokens = static_cast<int>(trace->targetIds.size());
        run.totalMs.push_back(total);
        encodeMs.push_back(enc);
        perTokenMs.push_back(tokens > 0 ? (total - enc) / tokens : 0.0);
    }
    if (attnlens::linearPrecision() == attnlens::LinearPrecision::Bf16)
        run.extra["parity"] =
            parityJson(attnlens::marianPrecisionParity(folder.model, folder.tokenizer, text, options));
    run.extra.update(Json{{"encode_ms", median(encodeMs)},
                          {"per_token_ms", median(perTokenMs)},
                          {"load_ms", loadMs},
                          {"source_tokens", folder.tokenizer->encode(text).ids.size()},
                          {"new_tokens", tokens},
                          {"beams", *options.numBeams}});
    return run;
}

// One iteration = decode the image file, preprocess, forward with every head captured, top-5.
BenchRun benchVision(const cli::Args& args, const BenchSettings& settings) {
    const std::filesystem::path imagePath = *args.value("--image");
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Vit);
    const auto loadStart = Clock::now();
    const auto loaded = attnlens::VitModel::load(dir);
    const attnlens::VitModel& model = *loaded;
    const double loadMs = msSince(loadStart);
    BenchRun run;
    std::vector<double> forwardMs;
    int tokens = 0;
    for (int i = 0; i < settings.warmup + settings.repeat; ++i) {
        const auto start = Clock::now();
        const auto image = attnlens::loadImage(imagePath);
        const auto pre = attnlens::preprocessImage(image, model.processor(), model.config().numChannels);
        const auto forwardStart = Clock::now();
        const auto output = model.forward(pre.pixels);
        const double fwd = msSince(forwardStart);
        (void)model.topK(output, 5);
        const double total = msSince(start);
        if (i < settings.warmup) continue;
        tokens = static_cast<int>(output.attentions.dim(2));
        run.totalMs.push_back(total);
        forwardMs.push_back(fwd);
    }
    if (attnlens::linearPrecision() == attnlens::LinearPrecision::Bf16) {
        const auto pre = attnlens::preprocessImage(attnlens::loadImage(imagePath), model.processor(),
                                                   model.config().numChannels);
        run.extra["parity"] = parityJson(attnlens::vitPrecisionParity(model, pre.pixels));
    }
    run.extra.update(Json{{"forward_ms", median(forwardMs)},
                          {"load_ms", loadMs},
                          {"tokens", tokens},
                          {"layers", model.config().numLayers},
                          {"heads", model.config().numHeads}});
    return run;
}

// One iteration = one U-Net forward with every attention layer captured (a text-conditioned U-Net: one guided
// step, below). The sample is --sample X.npy,
// or seeded noise of the model's sample_size when only --model names a diffusers folder.
BenchRun benchUnet(const cli::Args& args, const BenchSettings& settings) {
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Diffusion);
    const auto loadStart = Clock::now();
    const auto model = attnlens::loadDiffusionModel(dir);
    const double loadMs = msSince(loadStart);
    attnlens::Tensor sample;
    if (const auto path = args.value("--sample")) {
        sample = attnlens::readNpy(*path);
        if (sample.rank() == 4 && sample.dim(0) == 1)
            sample = sample.reshaped({sample.dim(1), sample.dim(2), sample.dim(3)});
    } else {
        const int size = model.unet->config().sampleSize;
        if (size <= 0)
            throw cli::UsageError("the model's config.json has no sample_size: give --sample X.npy");
        sample = attnlens::NormalRng(0).tensor({model.unet->config().inChannels, size, size});
    }
    model.unet->checkSample(sample.shape());
    const int timestep = args.intValue("--timestep", 500, 0, model.scheduler.numTrainTimesteps - 1);
    attnlens::UNetConditioning conditioning;
    if (model.unet->config().numClassEmbeds > 0)
        conditioning.classLabel = args.intValue("--class", 0, 0, model.unet->config().numClassEmbeds - 1);
    else if (args.has("--class"))
        throw cli::UsageError("--class: this model is unconditional");
    // A text-conditioned U-Net: one iteration = one guided text-to-image step as t2i runs it (the
    // unconditional and the conditional half, cross-attention captured, self-attention not), on seeded states
    // of 77 tokens.
    const bool guided = model.unet->textConditioned();
    attnlens::UNetConditioning unconditional;
    attnlens::UNetRunOptions options;
    if (guided) {
        const int width = model.unet->config().crossAttentionDim;
        conditioning.encoderHiddenStates = attnlens::NormalRng(1).tensor({77, width});
        unconditional.encoderHiddenStates = attnlens::NormalRng(2).tensor({77, width});
        options.captureSelf = false;
    }
    BenchRun run;
    size_t layers = 0;
    for (int i = 0; i < settings.warmup + settings.repeat; ++i) {
        const auto start = Clock::now();
        if (guided) (void)model.unet->forward(sample, static_cast<float>(timestep), unconditional, options);
        const auto out = model.unet->forward(sample, static_cast<float>(timestep), conditioning, options);
        const double total = msSince(start);
        layers = out.attentions.size();
        if (i >= settings.warmup) run.totalMs.push_back(total);
    }
    run.extra = {{"load_ms", loadMs},          {"parameters", model.unet->parameterCount()},
                 {"attention_layers", layers}, {"guided_step", guided},
                 {"sample", sample.shape()},   {"timestep", timestep}};
    if (attnlens::linearPrecision() == attnlens::LinearPrecision::Bf16) // the conditional half's U-Net pass
        run.extra["parity"] = parityJson(attnlens::unetPrecisionParity(
            *model.unet, sample, static_cast<float>(timestep), conditioning, options));
    return run;
}

// BERT / GPT-2 (--text): one forward over the text with every head captured; with --new-tokens N
// (decoder-only), one iteration = the prompt through the KV cache (prompt_ms), then N greedy tokens one at a
// time, every head's new attention row captured (per_token_ms).
BenchRun benchText(const cli::Args& args, const BenchSettings& settings) {
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Text);
    const auto loadStart = Clock::now();
    const auto folder = attnlens::loadTextFolder(dir);
    const double loadMs = msSince(loadStart);
    const auto ids = folder.encode(*args.value("--text")).ids;
    const int newTokens = args.intValue("--new-tokens", 0, 0, 100000);
    if (newTokens > 0 && !folder.decoderOnly())
        throw cli::UsageError("--new-tokens: an encoder (" + folder.modelType + ") does not generate");
    if (static_cast<int>(ids.size()) + newTokens > folder.maxPositions())
        throw cli::UsageError("the text is too long: " + std::to_string(ids.size() + size_t(newTokens)) +
                              " tokens, the model has " + std::to_string(folder.maxPositions()) +
                              " positions");
    BenchRun run;
    std::vector<double> promptMs, perTokenMs, headMs;
    std::shared_ptr<const attnlens::AttentionStore> attention;
    for (int i = 0; i < settings.warmup + settings.repeat; ++i) {
        const auto start = Clock::now();
        if (newTokens == 0 && !folder.decoderOnly()) {
            attention = folder.forward(ids).attentionStore();
        } else if (newTokens == 0) { // as the Text page runs a prompt: the last token's logits only
            attnlens::TextCache cache = folder.model->newCache();
            attention = folder.model->extend(ids, cache, true, true, {}).attentionStore();
        } else {
            attnlens::TextCache cache = folder.model->newCache();
            const auto prompt = folder.model->extend(ids, cache, true, true, {});
            const double promptMsNow = msSince(start);
            (void)attnlens::greedyContinuation(folder, prompt.logits, cache, newTokens, {}, {},
                                               attnlens::StopAt::Count);
            if (i >= settings.warmup) {
                promptMs.push_back(promptMsNow);
                perTokenMs.push_back((msSince(start) - promptMsNow) / newTokens);
            }
        }
        if (i >= settings.warmup) run.totalMs.push_back(msSince(start));
    }
    run.extra = {{"load_ms", loadMs},
                 {"model_type", folder.modelType},
                 {"tokens", ids.size()},
                 {"layers", folder.layers()},
                 {"heads", folder.heads()}};
    if (attention) { // what the kept attention holds, and (on demand) what one head's map costs to make
        run.extra["attention_mb"] = double(attention->bytes()) / (1 << 20);
        run.extra["attention_on_demand"] = attention->onDemand();
        attnlens::RowMatrix map(attention->rows(), attention->cols());
        for (int k = 0; attention->onDemand() && k < 8; ++k) {
            const auto start = Clock::now();
            attention->headInto(k * 7 % folder.layers(), k * 5 % folder.heads(), map.data());
            headMs.push_back(msSince(start));
        }
        if (!headMs.empty()) run.extra["head_map_ms"] = median(headMs);
    }
    if (newTokens > 0)
        run.extra.update(Json{{"prompt_ms", median(promptMs)},
                              {"per_token_ms", median(perTokenMs)},
                              {"new_tokens", newTokens}});
    if (attnlens::linearPrecision() == attnlens::LinearPrecision::Bf16)
        run.extra["parity"] = parityJson(
            attnlens::textPrecisionParity(*folder.model, ids, [&](int id) { return folder.tokenText(id); }));
    return run;
}

struct Task {
    const char* name;
    BenchFn fn;
};
constexpr Task kTasks[] = {
    {"translation", &benchTranslation}, {"vision", &benchVision}, {"unet", &benchUnet}, {"text", &benchText}};

int runBench(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--model", "--image", "--src", "--text", "--new-tokens", "--beam", "--sample",
                                "--timestep", "--class", "--repeat", "--warmup", "--precision"});
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals()[0] + "'");
    const bool unet = args.has("--sample") ||
                      (!args.has("--image") && !args.has("--src") && !args.has("--text") &&
                       args.value("--model") && attnlens::isDiffusionFolder(*args.value("--model")));
    const bool image = args.has("--image"), src = args.has("--src"), text = args.has("--text");
    if (int(image) + int(src) + int(unet) + int(text) != 1)
        throw cli::UsageError(
            "give exactly one of --image IMG, --src TEXT, --text TEXT or --sample X.npy (or --model with a "
            "diffusers folder)");
    if (!src && !text && args.has("--new-tokens"))
        throw cli::UsageError("--new-tokens applies to --src and --text only");
    if (!src && args.has("--beam")) throw cli::UsageError("--beam applies to --src only");
    if (!unet && (args.has("--timestep") || args.has("--class")))
        throw cli::UsageError("--timestep and --class apply to --sample only");
    BenchSettings settings;
    settings.repeat = args.intValue("--repeat", 5, 1, 10000);
    settings.warmup = args.intValue("--warmup", 1, 0, 10000);
    settings.threads = attnlens::computeThreads(); // main's --threads (every subcommand's)

    cli::applyPrecision(args);
    const std::string taskName = image ? "vision" : unet ? "unet" : text ? "text" : "translation";
    const auto* task =
        std::find_if(std::begin(kTasks), std::end(kTasks), [&](const Task& t) { return t.name == taskName; });
    const BenchRun run = task->fn(args, settings);
    Json out = {{"task", taskName},
                {"threads", settings.threads},
                {"repeat", settings.repeat},
                {"median_ms", median(run.totalMs)},
                {"min_ms", *std::min_element(run.totalMs.begin(), run.totalMs.end())},
                {"max_ms", *std::max_element(run.totalMs.begin(), run.totalMs.end())},
                {"gemm_kernel", attnlens::gemmKernelName(attnlens::activeGemmKernel())},
                {"onednn_isa", attnlens::onednnIsa()},
                {"precision", attnlens::linearPrecisionName(attnlens::linearPrecision())}};
    out.update(run.extra);
    std::cout << out.dump() << "\n";
    return 0;
}

const cli::Registration regBench{
    "bench",
    "[--model DIR] (--image IMG | --src TEXT [--new-tokens N] [--beam N] | --text TEXT [--new-tokens N] "
    "| --sample X.npy [--timestep T] [--class C]) [--repeat N] [--warmup N] [--threads N] "
    "[--precision fp32|bf16]",
    "time a run with every head captured; prints one JSON object", &runBench};

} // namespace
