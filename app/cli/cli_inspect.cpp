// attnlens-cli inspect --model DIR|FILE.gguf [--json OUT]: what a model folder holds — architecture, the
// config's key sizes, tensor count, parameter count and dtypes, and which companion files are present; for a
// GGUF file its header, tensor types and metadata (cli_inspect_gguf.cpp).

#include "cli_common.h"
#include "cli_inspect_gguf.h"
#include "core/diffusion/diffusion_model.h"
#include "core/io/gguf.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/io/ollama.h"
#include "core/io/safetensors.h"
#include "core/models/llama_model.h"
#include "core/registry/model_registry.h"

#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace {

using attnlens::Json;

std::string humanCount(uint64_t n) {
    std::ostringstream s;
    if (n >= 1000000000ull)
        s << std::fixed << std::setprecision(2) << n / 1e9 << " B";
    else if (n >= 1000000ull)
        s << std::fixed << std::setprecision(2) << n / 1e6 << " M";
    else if (n >= 1000ull)
        s << std::fixed << std::setprecision(1) << n / 1e3 << " k";
    else
        s << n;
    return s.str();
}

// A diffusers folder (bare UNet2DModel or a pipeline): the U-Net's shape, its attention layers at the
// trained sample size, the scheduler.
// The dtype line ("F32 ×40, BF16 ×2") and the weights line of both printouts.
void printWeights(const std::map<std::string, uint64_t>& dtypeCounts, const attnlens::TensorFile& weights) {
    bool first = true;
    for (const auto& [dtype, count] : dtypeCounts) {
        std::cout << (first ? "" : ", ") << dtype << " ×" << count;
        first = false;
    }
    std::cout << "\nweights:      " << weights.path().filename().string() << " ("
              << attnlens::TensorFile::formatName(weights.format()) << ", " << humanCount(weights.fileSize())
              << "B)\n";
}

int inspectDiffusion(const std::filesystem::path& dir, const std::optional<std::string>& jsonPath) {
    const auto model = attnlens::loadDiffusionModel(dir);
    const auto& c = model.unet->config();
    const auto weights = attnlens::TensorFile::open(
        attnlens::findWeightsFile(model.folder.unetDir, "diffusion_pytorch_model"));
    std::map<std::string, uint64_t> dtypeCounts;
    for (const auto& t : weights.tensors())
        dtypeCounts[std::string(attnlens::dtypeName(t.dtype))] += 1;
    const int size = c.sampleSize ? c.sampleSize : 32;
    Json layers = Json::array();
    for (const auto& l : model.unet->attentionLayers(size, size))
        layers.push_back({{"name", l.name},
                          {"path", attnlens::unetPathName(l.path)},
                          {"heads", l.heads},
                          {"spatial", {l.height, l.width}}});
    const auto& sc = model.scheduler;
    Json out = {
        {"model", dir.string()},
        {"architecture", "UNet2DModel"},
        {"pipeline", model.folder.pipeline
                         ? Json(model.folder.pipelineClass.empty() ? "pipeline" : model.folder.pipelineClass)
                         : Json()},
        {"supported", true},
        {"tensor_count", weights.tensors().size()},
        {"parameter_count", model.unet->parameterCount()},
        {"dtypes", dtypeCounts},
        {"file_bytes", weights.fileSize()},
        {"weights_file", weights.path().filename().string()},
        {"weights_format", std::string(attnlens::TensorFile::formatName(weights.format()))},
        {"sizes",
         {{"sample_size", c.sampleSize},
          {"in_channels", c.inChannels},
          {"out_channels", c.outChannels},
          {"block_out_channels", c.blockOutChannels},
          {"layers_per_block", c.layersPerBlock},
          {"num_class_embeds", c.numClassEmbeds}}},
        {"attention_layers", layers},
        {"scheduler",
         {{"num_train_timesteps", sc.numTrainTimesteps},
          {"beta_schedule", sc.betaSchedule},
          {"from_file", !model.folder.schedulerConfig.empty()}}},
        {"config", attnlens::readJsonFile(model.folder.unetDir / "config.json")}};
    if (jsonPath) attnlens::writeJsonFile(*jsonPath, out, 1);
    std::cout << "model:        " << dir.string() << "\n"
              << "architecture: UNet2DModel (diffusers"
              << (model.folder.pipeline
                      ? ", " +
                            (model.folder.pipelineClass.empty() ? std::string("pipeline")
                                                                : model.folder.pipelineClass) +
                            " folder"
                      : std::string(", bare U-Net folder"))
              << ")\n"
              << "tensors:      " << weights.tensors().size() << "\n"
              << "parameters:   " << model.unet->parameterCount() << " ("
              << humanCount(static_cast<uint64_t>(model.unet->parameterCount())) << ")\n"
              << "dtype:        ";
    printWeights(dtypeCounts, weights);
    std::cout << "sample:       " << c.inChannels << " channels, "
              << (c.sampleSize ? std::to_string(c.sampleSize) + "x" + std::to_string(c.sampleSize)
                               : "no sample_size")
              << (c.numClassEmbeds ? ", " + std::to_string(c.numClassEmbeds) + " classes"
                                   : std::string(", unconditional"))
              << "\n"
              << "scheduler:    " << sc.numTrainTimesteps << " timesteps, " << sc.betaSchedule << " betas"
              << (model.folder.schedulerConfig.empty()
                      ? " (DDPMScheduler defaults: the folder has no scheduler config)"
                      : "")
              << "\n"
              << "attention:    " << layers.size() << " layers at " << size << "x" << size << "\n";
    for (const auto& l : layers)
        std::cout << "  " << std::left << std::setw(28) << l["name"].get<std::string>() << std::setw(12)
                  << l["path"].get<std::string>() << l["spatial"][0].get<int>() << "x"
                  << l["spatial"][1].get<int>() << ", " << l["heads"].get<int>() << " head(s)\n";
    return 0;
}

// Parameters counted once where a PyTorch checkpoint ties tensors to one storage (embeddings, LM head);
// tensors counted per dtype.
uint64_t countParameters(const attnlens::TensorFile& weights, std::map<std::string, uint64_t>& dtypeCounts) {
    uint64_t parameters = 0;
    std::set<std::tuple<size_t, uint64_t, uint64_t>> seen;
    for (const auto& t : weights.tensors()) {
        if (seen.insert({t.storage, t.begin, t.end}).second)
            parameters += static_cast<uint64_t>(attnlens::shapeNumel(t.shape));
        dtypeCounts[std::string(attnlens::dtypeName(t.dtype))] += 1;
    }
    return parameters;
}

// The size-defining keys of the architectures we know; others are listed by the full config in --json.
Json configSizes(const attnlens::JsonConfig& config) {
    static const char* kKeys[] = {"d_model",
                                  "encoder_layers",
                                  "decoder_layers",
                                  "encoder_attention_heads",
                                  "decoder_attention_heads",
                                  "encoder_ffn_dim",
                                  "decoder_ffn_dim",
                                  "vocab_size",
                                  "activation_function",
                                  "hidden_size",
                                  "num_hidden_layers",
                                  "num_attention_heads",
                                  "intermediate_size",
                                  "hidden_act",
                                  "image_size",
                                  "patch_size",
                                  "num_channels",
                                  "max_position_embeddings",
                                  "n_embd",
                                  "n_layer",
                                  "n_head",
                                  "n_positions",
                                  "num_key_value_heads",
                                  "head_dim",
                                  "sliding_window"};
    Json sizes = Json::object();
    for (const char* key : kKeys)
        if (config.has(key)) sizes[key] = config.json()[key];
    if (config.has("id2label") && config.json()["id2label"].is_object())
        sizes["num_labels"] = config.json()["id2label"].size();
    return sizes;
}

// A Llama-style decoder's attention as the engine reads its config: query and key/value heads, head_dim, the
// rope, the sliding windows, tied embeddings, eos ids (null for other folders).
Json llamaAttention(const std::filesystem::path& dir, const std::string& modelType) {
    if (!attnlens::isLlamaModelType(modelType)) return nullptr;
    attnlens::LlamaConfig c;
    try {
        c = attnlens::readLlamaConfig(dir);
    } catch (const attnlens::Error& e) { // inspect describes what it cannot open too
        return {{"not_supported", e.what()}};
    }
    std::vector<int> windowed;
    int window = 0;
    for (size_t l = 0; l < c.windows.size(); ++l)
        if (c.windows[l] > 0) windowed.push_back(static_cast<int>(l)), window = c.windows[l];
    Json rope = {{"type", c.rope.type}, {"theta", c.rope.theta}, {"factor", c.rope.factor}};
    if (c.localRope.theta != c.rope.theta) rope["local_theta"] = c.localRope.theta;
    return {{"query_heads", c.heads},    {"kv_heads", c.kvHeads},
            {"head_dim", c.headDim},     {"rope", rope},
            {"sliding_window", window},  {"windowed_layers", windowed},
            {"tied_embeddings", c.tied}, {"eos_ids", c.eosIds},
            {"qk_norm", c.qkNorm},       {"score_scale", c.queryScale}};
}

void printLlamaAttention(const Json& a) {
    if (a.contains("not_supported")) {
        std::cout << "attention:    not opened: " << a["not_supported"].get<std::string>() << "\n";
        return;
    }
    const int q = a["query_heads"], kv = a["kv_heads"];
    std::cout << "attention:    " << q << " query heads, " << kv << " key/value head" << (kv == 1 ? "" : "s")
              << (kv == q   ? " (multi-head)"
                  : kv == 1 ? " (multi-query)"
                            : " (grouped-query)")
              << ", head_dim " << a["head_dim"].get<int>() << (a["qk_norm"].get<bool>() ? ", q/k norm" : "")
              << "\n"
              << "rope:         " << a["rope"]["type"].get<std::string>() << ", theta "
              << a["rope"]["theta"].dump();
    if (a["rope"].contains("local_theta"))
        std::cout << " (sliding layers " << a["rope"]["local_theta"].dump() << ")";
    if (a["rope"]["factor"].get<double>() != 1.0) std::cout << ", factor " << a["rope"]["factor"].dump();
    std::cout << "\nwindow:       ";
    if (a["windowed_layers"].empty())
        std::cout << "none (every layer attends to all earlier tokens)";
    else
        std::cout << a["sliding_window"].get<int>() << " tokens in layers " << a["windowed_layers"].dump();
    std::cout << "\nembeddings:   "
              << (a["tied_embeddings"].get<bool>() ? "tied to the LM head" : "own LM head") << "; eos "
              << a["eos_ids"].dump() << "\n";
}

// The files of a model folder that the loaders read (or a person looks for), those present.
Json presentFiles(const std::filesystem::path& dir) {
    Json files = Json::array();
    for (const char* f :
         {"config.json", "generation_config.json", "preprocessor_config.json", "model.safetensors",
          "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json", "source.spm",
          "target.spm", "vocab.json", "vocab.txt", "merges.txt", "tokenizer.json", "tokenizer_config.json",
          "README.md"}) {
        std::error_code ec;
        if (std::filesystem::exists(dir / f, ec)) files.push_back(f);
    }
    return files;
}

int runInspect(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--model", "--json"});
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals()[0] + "'");
    const auto given = args.value("--model");
    if (!given) throw cli::UsageError("--model DIR is required");
    const std::optional<std::string> model = attnlens::resolveModelReference(*given).string(); // ollama:NAME
    if (std::error_code ec;
        std::filesystem::is_regular_file(*model, ec) && attnlens::GgufFile::isGguf(*model))
        return cli::inspectGguf(*model, args.value("--json"));
    if (const auto kind = attnlens::detectModelKind(*model);
        kind == attnlens::ModelKind::Diffusion || kind == attnlens::ModelKind::TextToImage)
        return inspectDiffusion(*model, args.value("--json"));
    const auto folder = attnlens::inspectModelFolder(*model);
    const attnlens::JsonConfig config(folder.dir / "config.json");
    const auto weights = attnlens::TensorFile::open(folder.weights);
    std::map<std::string, uint64_t> dtypeCounts;
    const uint64_t parameters = countParameters(weights, dtypeCounts);
    std::string architecture = folder.modelType;
    if (config.has("architectures") && config.json()["architectures"].is_array() &&
        !config.json()["architectures"].empty())
        architecture = config.json()["architectures"][0].get<std::string>();
    const Json sizes = configSizes(config);
    const Json files = presentFiles(folder.dir);
    const Json attention = llamaAttention(folder.dir, folder.modelType);

    Json out = {{"model", folder.dir.string()},
                {"model_type", folder.modelType},
                {"architecture", architecture},
                {"supported", folder.kind != attnlens::ModelKind::Unknown},
                {"tensor_count", weights.tensors().size()},
                {"parameter_count", parameters},
                {"dtypes", dtypeCounts},
                {"file_bytes", weights.fileSize()},
                {"weights_file", weights.path().filename().string()},
                {"weights_format", std::string(attnlens::TensorFile::formatName(weights.format()))},
                {"sizes", sizes},
                {"files", files},
                {"attention", attention},
                {"metadata", weights.metadata()},
                {"config", config.json()}};
    if (const auto path = args.value("--json")) attnlens::writeJsonFile(*path, out, 1);

    std::cout << "model:        " << folder.dir.string() << "\n"
              << "architecture: " << architecture << " (model_type " << folder.modelType
              << (folder.kind == attnlens::ModelKind::Unknown
                      ? ", not supported by this version, which opens " + attnlens::supportedFamilies()
                      : std::string())
              << ")\n"
              << "tensors:      " << weights.tensors().size() << "\n"
              << "parameters:   " << parameters << " (" << humanCount(parameters) << ")\n"
              << "dtype:        ";
    printWeights(dtypeCounts, weights);
    if (!attention.is_null()) printLlamaAttention(attention);
    for (const auto& [key, value] : sizes.items())
        std::cout << "  " << std::left << std::setw(24) << key << value.dump() << "\n";
    std::cout << "files:        ";
    for (size_t i = 0; i < files.size(); ++i)
        std::cout << (i ? ", " : "") << files[i].get<std::string>();
    std::cout << "\n";
    return 0;
}

const cli::Registration regInspect{
    "inspect", "--model DIR|FILE.gguf|ollama:NAME [--json OUT]",
    "architecture, config sizes, tensor and parameter count, dtypes of a model folder; a "
    "GGUF file's types and metadata (an Ollama model's by its name)",
    &runInspect};

} // namespace
