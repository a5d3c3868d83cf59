// attnlens-cli vision: classify one image with a ViT and export its attention (docs/architecture.md, "The CLI
// contract").
//
//   stdout: the top-5 classes as "label<TAB>probability" (nothing for a checkpoint without classifier)
//   --json OUT: {"image", "input_size": [H, W], "patch", "grid": [rows, cols], "cls": true (false: SigLIP),
//                "registers": R, "top": [{"index", "label", "prob"}], "logits": [..], "token_norms": [L][T],
//                "attentions": [L][H][T][T] (T = 1 + R + N: CLS, DINOv2's R registers, the patches; SigLIP:
//                N), "probe_attention": [H][N] (SigLIP's pooling probe), "domain_mismatch": ["in colour", …]
//                only for the built-in model on a picture unlike Fashion-MNIST}
//   stderr: "note: not like the built-in model's … training pictures: …" in that case
//   --ablate L:H[,L:H…]: those heads switched off (transformers' head_mask = 0); stdout, the JSON (plus
//   "ablated"
//                [[L, H]…] and "baseline_top", the plain run's top-5) and the overlay are of the ablated run;
//                stderr says how the top class changed.
//   --overlay OUT.png: the attention map of --layer (0-based, default the last) and --head (0-based index,
//                or mean|max|min over heads; default mean) for --query (cls, ROW,COL of a patch, 0-based,
//                probe = SigLIP's pooling probe (its --head or heads fused; SigLIP's default, having no CLS),
//                or rollout = attention rollout through layers 0..--layer (SigLIP: from the probe's heads'
//                mean), or flow = attention flow of CLS
//                through layers 0..--layer, refused above kFlowBudget, regK = register K's row, or norms =
//                the patch tokens' norms after --layer, or text:K / relevance:K = text K's cosine similarity
//                / relevance map, with --texts), over the original image.
//   --texts "A|B|…" (a CLIPModel or SiglipModel folder): each text's zero-shot probability (CLIP: softmax
//   over
//                the texts; SigLIP: each text's sigmoid) to stdout ("text<TAB>prob", most probable first) and
//                in the JSON "clip": {"logit_scale", "logit_bias", "scores": "softmax"|"sigmoid", "texts":
//                [{"text", "ids", "logit", "prob", "similarity": [rows][cols], "relevance": [rows][cols]}]}
//                (core/analysis/clip_texts.h)

#include "cli_common.h"
#include "cli_image.h"
#include "cli_overlay.h"
#include "core/analysis/attention_flow.h"
#include "core/analysis/attention_maps.h"
#include "core/analysis/clip_texts.h"
#include "core/analysis/precision_parity.h"
#include "core/export/overlay.h"
#include "core/export/tensor_json.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/vit_model.h"
#include "core/ops/gemm.h"
#include "core/util/error.h"
#include "core/vision/domain_check.h"

#include <cstdio>
#include <fstream>
#include <iostream>

namespace {

using namespace attnlens;

// The JSON document, streamed (cli_tensor_json.h).
void writeVisionJson(const std::string& path, Json head, const VitOutput& output) {
    std::string text = head.dump();
    text.pop_back(); // the closing brace; the token norms and the attentions follow
    text += ",\"token_norms\":";
    attnlens::appendNested(text, output.tokenNorms.data(), output.tokenNorms.shape());
    const Tensor& attentions = output.attentions;
    text += ",\"attentions\":";
    attnlens::appendNested(text, attentions.data(), attentions.shape());
    text += "}\n";
    attnlens::writeText(path, text);
}

// SigLIP's pooling probe over the patches [N]: one head's row or the heads fused.
Eigen::VectorXf probeRow(const VitOutput& output, const HeadSelection& heads) {
    const Tensor& probe = output.probeAttention; // [H, N]
    if (heads.head >= 0) return probe.matrix().row(heads.head).transpose();
    return fuseHeads(static_cast<int>(probe.dim(0)), heads.fusion,
                     [&](int h) { return RowMatrix(probe.matrix().row(h)); })
        .row(0)
        .transpose();
}

// The overlay map [rows, cols] for --query.
RowMatrix overlayMap(const std::string& query, const VitOutput& output, int layer, const HeadSelection& heads,
                     const PatchGrid& grid) {
    const Tensor& attentions = output.attentions;
    if (query == "probe" || (query == "cls" && !grid.hasCls())) {
        if (output.probeAttention.empty())
            throw cli::UsageError(
                "--query probe: only SigLIP has a pooling probe; this model's summary is CLS");
        return tokensToGrid(probeRow(output, heads), grid.rows(), grid.cols(), 0);
    }
    if (query == "rollout") {
        RolloutOptions opt;
        opt.fusion = heads.head >= 0 ? HeadFusion::Mean : heads.fusion;
        opt.lastLayer = layer;
        const RowMatrix r = attentionRollout(attentions, opt);
        if (!grid.hasCls()) // SigLIP: from the probe (heads' mean), which reads the last layer's tokens
            return tokensToGrid((output.probeAttention.matrix().colwise().mean() * r).transpose(),
                                grid.rows(), grid.cols(), 0);
        return tokensToGrid(r.row(0).transpose(), grid.rows(), grid.cols(), grid.prefixTokens());
    }
    if (query == "flow" && !grid.hasCls())
        throw cli::UsageError("--query flow: starts from CLS, which SigLIP has not; use rollout or probe");
    if (query == "flow") {
        const int tokens = static_cast<int>(attentions.dim(2));
        if (attentionFlowCost(layer + 1, tokens) > kFlowBudget)
            throw cli::UsageError("--query flow: " + std::to_string(tokens) + " tokens through " +
                                  std::to_string(layer + 1) + " layers is too many max-flows (cost " +
                                  std::to_string(attentionFlowCost(layer + 1, tokens)) + " > " +
                                  std::to_string(kFlowBudget) + "); use rollout, or a lower --layer");
        FlowOptions opt;
        opt.fusion = heads.head >= 0 ? HeadFusion::Mean : heads.fusion;
        opt.lastLayer = layer;
        const std::vector<float> f = attentionFlow(attentions, 0, opt);
        return tokensToGrid(Eigen::Map<const Eigen::VectorXf>(f.data(), static_cast<Eigen::Index>(f.size())),
                            grid.rows(), grid.cols(), grid.prefixTokens());
    }
    int token = 0;
    if (query.size() > 3 && query.compare(0, 3, "reg") == 0) { // a register's row (DINOv2 with registers)
        const std::string digits = query.substr(3);
        const int k = digits.find_first_not_of("0123456789") == std::string::npos && digits.size() < 6
                          ? std::stoi(digits)
                          : -1;
        if (k < 0 || k >= grid.registers())
            throw cli::UsageError("--query " + query + ": this model has " +
                                  std::to_string(grid.registers()) + " register(s), numbered from 0");
        token = 1 + k;
    } else if (query != "cls") {
        const auto patch = cli::parseIntPair(query, ',');
        if (!patch)
            throw cli::UsageError("--query: expected cls, probe, regK, rollout, flow, norms, text:K, "
                                  "relevance:K or ROW,COL, got '" +
                                  query + "'");
        const auto [row, col] = *patch;
        if (row < 0 || row >= grid.rows() || col < 0 || col >= grid.cols())
            throw cli::UsageError("--query: patch " + query + " is outside the " +
                                  std::to_string(grid.rows()) + "×" + std::to_string(grid.cols()) +
                                  " grid (rows and columns are numbered from 0)");
        token = grid.tokenOfPatch(grid.index(row, col));
    }
    const RowMatrix a = layerAttention(attentions, layer, heads); // [N+1, N+1]
    const int queries[] = {token};
    return tokensToGrid(queryMap(a, queries), grid.rows(), grid.cols(), grid.prefixTokens());
}

// --texts: the CLIP text side and the texts, refused before the forward pass when the folder has none.
std::pair<std::shared_ptr<const ClipTextSide>, std::vector<std::string>>
textsOption(const cli::Args& args, const std::filesystem::path& modelDir) {
    const auto line = args.value("--texts");
    if (!line) return {};
    if (!ClipTextSide::present(modelDir))
        throw cli::UsageError("--texts needs a CLIPModel or SiglipModel folder (config.json model_type "
                              "\"clip\" or \"siglip\", with a text tower); '" +
                              modelDir.string() + "' has none");
    std::vector<std::string> texts;
    try {
        texts = splitClipTexts(*line);
    } catch (const Error& e) {
        throw cli::UsageError(std::string("--texts: ") + e.what());
    }
    if (texts.empty()) throw cli::UsageError("--texts: no text between the '|'s");
    return {ClipTextSide::load(modelDir), std::move(texts)};
}

// stdout: "text<TAB>probability", most probable first.
void printTextScores(const std::vector<ClipTextRun>& runs) {
    std::vector<const ClipTextRun*> byProbability;
    for (const ClipTextRun& r : runs)
        byProbability.push_back(&r);
    std::stable_sort(
        byProbability.begin(), byProbability.end(),
        [](const ClipTextRun* a, const ClipTextRun* b) { return a->probability > b->probability; });
    for (const ClipTextRun* r : byProbability)
        std::printf("%s\t%.6f\n", r->embedding.text.c_str(), static_cast<double>(r->probability));
}

Json nestedRows(const Eigen::Ref<const RowMatrix>& m) {
    Json rows = Json::array();
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        rows.push_back(std::vector<float>(m.row(r).begin(), m.row(r).end()));
    return rows;
}

Json clipJson(const ClipTextSide& side, const std::vector<ClipTextRun>& runs) {
    Json texts = Json::array();
    const auto nested = [](const RowMatrix& m) { return nestedRows(m); };
    for (const ClipTextRun& r : runs)
        texts.push_back({{"text", r.embedding.text},
                         {"ids", r.embedding.ids},
                         {"logit", r.logit},
                         {"prob", r.probability},
                         {"similarity", nested(r.similarity)},
                         {"relevance", nested(r.relevance)}});
    return {{"logit_scale", side.logitScale()},
            {"logit_bias", side.logitBias()},
            {"scores", side.siglip() ? "sigmoid" : "softmax"},
            {"texts", std::move(texts)}};
}

// --query text:K (the similarity) / relevance:K, or nothing when the query is another kind.
std::optional<RowMatrix> textMap(const std::string& query, const std::vector<ClipTextRun>& runs) {
    const auto colon = query.find(':');
    const std::string kind = query.substr(0, colon);
    if (colon == std::string::npos || (kind != "text" && kind != "relevance")) return std::nullopt;
    if (runs.empty()) throw cli::UsageError("--query " + query + " needs --texts");
    int k = -1;
    try {
        size_t used = 0;
        k = std::stoi(query.substr(colon + 1), &used);
        if (used != query.size() - colon - 1) k = -1;
    } catch (const std::exception&) {
    }
    if (k < 0 || k >= static_cast<int>(runs.size()))
        throw cli::UsageError("--query " + query + ": the texts are numbered 0.." +
                              std::to_string(runs.size() - 1));
    return kind == "relevance" ? runs[size_t(k)].relevance : runs[size_t(k)].similarity;
}

Json topClasses(const std::vector<Prediction>& top) {
    Json out = Json::array();
    for (const auto& p : top)
        out.push_back({{"index", p.index}, {"label", p.label}, {"prob", p.probability}});
    return out;
}

// With heads ablated, what changed: the top classes of the plain run (returned) against the ablated one
// (a note on stderr).
Json baselineTopClasses(const VitModel& model, const VitResult& result, const VitRunOptions& options) {
    VitRunOptions plainOptions = options;
    plainOptions.offHeads.clear();
    plainOptions.captureAttention = false;
    const VitOutput plain = model.forward(result.input.pixels, plainOptions);
    const auto before = model.topK(plain, 5);
    const auto after = model.topK(result.output, 1);
    if (!before.empty() && !after.empty()) {
        const float kept = result.output.probabilities.at({before.front().index});
        std::fprintf(stderr,
                     "note: ablated %zu head(s): top class '%s' %.1f %% -> '%s' %.1f %% (the original "
                     "class now %.1f %%)\n",
                     options.offHeads.size(), before.front().label.c_str(),
                     100.0 * before.front().probability, after.front().label.c_str(),
                     100.0 * after.front().probability, 100.0 * kept);
    }
    return topClasses(before);
}

// The built-in classifier knows ten kinds of clothing on black: say when the picture is not one (as the
// Vision page does beside its predictions).
DomainCheck builtinDomainCheck(const std::filesystem::path& modelDir, const ImageU8& image,
                               const std::vector<Prediction>& top) {
    DomainCheck domain;
    if (modelDir.filename() != builtinModelName(ModelKind::Vit) || top.empty()) return domain;
    domain = checkFashionMnistLikeness(image, top.front().probability);
    if (domain.mismatch()) {
        std::string reasons;
        for (const std::string& r : domain.reasons)
            reasons += (reasons.empty() ? "" : " · ") + r;
        std::cerr << "note: not like the built-in model's Fashion-MNIST training pictures: " << reasons
                  << "; read the prediction with care\n";
    }
    return domain;
}

int runVision(const std::vector<std::string>& argv) {
    const cli::Args args(argv,
                         {"--model", "--json", "--overlay", "--layer", "--head", "--query", "--colormap",
                          "--opacity", "--precision", "--ablate", "--texts"},
                         {"--interpolate-pos"});
    const std::string imagePath = args.single("IMAGE");
    const bool overlay = args.has("--overlay");
    for (const char* flag : {"--layer", "--head", "--query", "--colormap", "--opacity"})
        if (args.has(flag) && !overlay)
            throw cli::UsageError(std::string(flag) + " only applies with --overlay OUT.png");
    const std::filesystem::path modelDir = cli::modelDir(args, attnlens::ModelKind::Vit);

    cli::applyPrecision(args);
    const auto loaded = VitModel::load(modelDir);
    const attnlens::VitModel& model = *loaded;
    const auto [clipText, texts] = textsOption(args, modelDir);
    const VitConfig& cfg = model.config();
    // Parse the overlay options before the (possibly long) forward pass.
    const int layer = args.intValue("--layer", cfg.numLayers - 1, 0, cfg.numLayers - 1);
    const HeadSelection heads = cli::parseHead(args.value("--head", "mean"), cfg.numHeads);
    OverlayOptions overlayOptions = cli::parseOverlayOptions(args);

    VitRunOptions options;
    options.captureAttention = true;
    options.interpolatePositions = args.has("--interpolate-pos");
    if (const auto ablate = args.value("--ablate"))
        options.offHeads = cli::parseHeadList("--ablate", *ablate, cfg.numLayers, cfg.numHeads);
    const ImageU8 image = cli::loadImageQuietly(imagePath);
    const VitResult result = model.run(image, options);
    const Json baselineTop = !options.offHeads.empty() && model.hasClassifier()
                                 ? baselineTopClasses(model, result, options)
                                 : Json();
    if (attnlens::linearPrecision() == attnlens::LinearPrecision::Bf16) // measured on this picture
        std::cerr << "note: bf16 against fp32 on this input: "
                  << describeParity(vitPrecisionParity(model, result.input.pixels, options), "top-1 class")
                  << "\n";

    const auto top = model.topK(result.output, 5);
    for (const auto& p : top)
        std::printf("%s\t%.6f\n", p.label.c_str(), static_cast<double>(p.probability));
    const DomainCheck domain = builtinDomainCheck(modelDir, image, top);
    const std::vector<ClipTextRun> runs =
        clipText ? runClipTexts(*clipText, result.output, result.grid, texts) : std::vector<ClipTextRun>();
    printTextScores(runs);

    if (const auto jsonPath = args.value("--json")) {
        Json head = {{"image", imagePath},
                     {"input_size", {result.input.resized.height, result.input.resized.width}},
                     {"patch", cfg.patchSize},
                     {"grid", {result.grid.rows(), result.grid.cols()}},
                     {"registers", result.grid.registers()},
                     {"top", topClasses(top)},
                     {"logits", result.output.logits.toVector()}};
        if (domain.mismatch()) head["domain_mismatch"] = domain.reasons;
        head["cls"] = result.grid.hasCls();
        if (!result.output.probeAttention.empty())
            head["probe_attention"] = nestedRows(result.output.probeAttention.matrix());
        if (clipText) head["clip"] = clipJson(*clipText, runs);
        if (!options.offHeads.empty()) {
            head["ablated"] = options.offHeads; // the run above is the ablated one
            if (!baselineTop.is_null()) head["baseline_top"] = baselineTop;
        }
        writeVisionJson(*jsonPath, std::move(head), result.output);
    }
    if (overlay) {
        const std::string query = args.value("--query", "cls");
        const Tensor& norms = result.output.tokenNorms; // [L, T]
        const std::optional<RowMatrix> text = textMap(query, runs);
        const RowMatrix map =
            text ? *text
            : query == "norms"
                ? tokensToGrid(ConstVectorMap(norms.data() + layer * norms.dim(1), norms.dim(1)),
                               result.grid.rows(), result.grid.cols(), result.grid.prefixTokens())
                : overlayMap(query, result.output, layer, heads, result.grid);
        overlayOptions.region = result.grid.regionFraction(); // centre-cropped input (DeiT)
        writePng(*args.value("--overlay"), renderOverlay(image, map, overlayOptions));
    }
    return 0;
}

const cli::Registration regVision{
    "vision",
    "[--model DIR] [--json OUT] [--overlay OUT.png [--layer L] [--head H|mean|max|min] [--query "
    "cls|probe|regK|ROW,COL|rollout|flow|norms|text:K|relevance:K] "
    "[--colormap NAME] [--opacity A]] [--ablate L:H[,L:H…]] [--texts \"A|B|…\"] [--interpolate-pos] "
    "[--precision fp32|bf16] IMAGE",
    "classify an image with a ViT (or score texts against it with CLIP / SigLIP, --texts); top-5 (or the "
    "texts' zero-shot probabilities) to stdout, logits and every head's attention to --json, an attention "
    "overlay "
    "to --overlay; --ablate switches heads off (layers, heads, rows, columns and texts numbered from 0)",
    &runVision};

} // namespace
