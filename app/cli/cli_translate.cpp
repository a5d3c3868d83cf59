// attnlens-cli translate [--model DIR] [--beam N] [--max-new-tokens N] [--json OUT] [--value-weighted]
//                        [--heatmap OUT.png|svg [--kind K] [--layer L] [--head H] [--colormap NAME] [--cell
//                        PX]] "Satz"
// stdout: the translation. OUT: source, tokens, ids, translation and every attention head
// (encoder [L][H][S][S], decoder [L][H][T][T], cross [L][H][T][S]; decoder row t is the step that
// produced target_ids[t], i.e. decoder input = [start] + target_ids[:-1]). --heatmap: one labelled
// matrix drawn by the Translate page's own heatmap code (ui/render/heatmap_scene.h). --value-weighted: OUT
// gets "value_weighted" {encoder, decoder, cross} beside the weights (α_ij·‖v_j·W_O,hᵀ‖ renormalised per
// row), and
// --heatmap draws the value-weighted matrix.

#include "cli_common.h"
#include "cli_heatmap.h"
#include "cli_overlay.h"
#include "core/analysis/ablation_change.h"
#include "core/analysis/attention_flow.h"
#include "core/analysis/precision_parity.h"
#include "core/decode/decode_session.h"
#include "core/decode/trace_attention.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/marian_folder.h"
#include "core/ops/gemm.h"
#include "ui/render/trace_heatmap.h"

#include <iostream>

namespace {

using attnlens::Json;
using attnlens::Tensor;

// A rank-4 tensor as nested JSON arrays [a][b][c][d].
Json nested4(const Tensor& t) {
    Json out = Json::array();
    if (t.rank() != 4) return out;
    for (int64_t a = 0; a < t.dim(0); ++a) {
        Json ja = Json::array();
        for (int64_t b = 0; b < t.dim(1); ++b) {
            const auto m = t.slice2d({a, b});
            Json jb = Json::array();
            for (Eigen::Index r = 0; r < m.rows(); ++r)
                jb.push_back(std::vector<float>(m.row(r).data(), m.row(r).data() + m.cols()));
            ja.push_back(std::move(jb));
        }
        out.push_back(std::move(ja));
    }
    return out;
}

// What --heatmap draws, parsed before the (possibly long) decoding.
struct HeatmapRequest {
    std::string path;
    attnlens::AttentionKind kind = attnlens::AttentionKind::Cross;
    int layer = -1; // -1 = the last layer
    attnlens::HeadSelection heads;
    attnlens::ColorMap colorMap = attnlens::ColorMap::Viridis;
    int cell = 0;
};

std::optional<HeatmapRequest> parseHeatmapRequest(const cli::Args& args, const attnlens::MarianConfig& cfg) {
    const auto path = args.value("--heatmap");
    if (!path) {
        for (const char* flag : {"--kind", "--layer", "--head", "--colormap", "--cell"})
            if (args.has(flag))
                throw cli::UsageError(std::string(flag) + " only applies with --heatmap OUT.png|svg");
        return std::nullopt;
    }
    cli::checkHeatmapPath("--heatmap", *path);
    HeatmapRequest r;
    r.path = *path;
    const std::string kind = args.value("--kind", "cross");
    const auto parsed = attnlens::parseAttentionKind(kind);
    if (!parsed) throw cli::UsageError("--kind: expected encoder, decoder or cross, got '" + kind + "'");
    r.kind = *parsed;
    const bool encoder = r.kind == attnlens::AttentionKind::EncoderSelf;
    const int layers = encoder ? cfg.encoderLayers : cfg.decoderLayers;
    r.layer = args.intValue("--layer", layers - 1, 0, layers - 1);
    r.heads = cli::parseHead(args.value("--head", "mean"), encoder ? cfg.encoderHeads : cfg.decoderHeads);
    r.colorMap = cli::parseColorMapOption(args, r.colorMap);
    r.cell = args.intValue("--cell", 0, 1, 128);
    return r;
}

// --ablate KIND:L:H[,…] (KIND encoder, decoder or cross; layers and heads from 0) into `ablation`; returns
// the list as JSON [[KIND, L, H], …].
Json parseAblation(const std::string& text, const attnlens::MarianConfig& config,
                   attnlens::MarianAblation& ablation) {
    Json list = Json::array();
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        const size_t colon = item.find(':');
        const auto kind =
            colon == std::string::npos ? std::nullopt : attnlens::parseAttentionKind(item.substr(0, colon));
        if (!kind)
            throw cli::UsageError(
                "--ablate: expected KIND:LAYER:HEAD with KIND encoder, decoder or cross, got '" + item + "'");
        const auto [layer, head] = cli::parseLayerHead("--ablate", item.substr(colon + 1));
        try {
            ablation.add(*kind, layer, head, config);
        } catch (const attnlens::Error& e) {
            throw cli::UsageError(std::string("--ablate: ") + e.what());
        }
        list.push_back({std::string(attnlens::attentionKindId(*kind)), layer, head});
        start = end + 1;
    }
    return list;
}

// With heads ablated, what changed against the plain model: the plain translation (returned) and, in
// `change`, where the tokens part and p(plain token) with and without the heads, top 5 (teacher-forced over
// the plain output).
std::string ablationChange(const attnlens::MarianFolder& folder, const std::string& text,
                           const attnlens::DecodeOptions& options, const attnlens::TranslationTrace& trace,
                           size_t ablatedHeads, Json& change) {
    attnlens::DecodeOptions plainOptions = options;
    plainOptions.ablation = {};
    plainOptions.captureAttention = false;
    attnlens::DecodeSession plain(folder.model, folder.tokenizer, text, plainOptions);
    plain.run();
    const auto p = plain.trace();
    if (!p->targetIds.empty()) {
        const attnlens::AblationChange c = attnlens::marianAblationChange(
            *folder.model, trace.sourceIds, p->targetIds, trace.targetIds, options.ablation);
        const auto top = [&folder](const std::vector<attnlens::TokenChoice>& list) {
            Json out = Json::array();
            for (const auto& t : list)
                out.push_back(
                    {{"id", t.id}, {"piece", folder.tokenizer->idToPiece(t.id)}, {"p", t.probability}});
            return out;
        };
        change = {{"parts_at", c.partsAt >= 0 ? Json(c.partsAt) : Json(nullptr)},
                  {"position", c.position},
                  {"baseline_token_probs", c.plainProbability},
                  {"ablated_token_probs", c.ablatedProbability},
                  {"top5_all_heads", top(c.topPlain)},
                  {"top5_ablated", top(c.topAblated)}};
    }
    size_t same = 0;
    while (same < p->targetIds.size() && same < trace.targetIds.size() &&
           p->targetIds[same] == trace.targetIds[same])
        ++same;
    std::cerr << "note: ablated " << ablatedHeads << " head(s): \"" << p->translation << "\" -> \""
              << trace.translation << "\""
              << (same == p->targetIds.size() && same == trace.targetIds.size()
                      ? std::string(" (same tokens)")
                      : " (the tokens part at target position " + std::to_string(same) + ")")
              << "\n";
    return p->translation;
}

// --through: the encoder through layers 0…through — rollout, and attention flow when within the budget.
void writeThrough(const Tensor& enc, int through, Json& j) {
    attnlens::RolloutOptions ro;
    ro.lastLayer = through;
    const attnlens::RowMatrix rollout = attnlens::attentionRollout(enc, ro);
    const int tokens = static_cast<int>(enc.dim(2));
    const int64_t cost = attnlens::attentionFlowCost(through + 1, tokens) * tokens;
    Json rows = Json::array(), flow = Json::array();
    for (Eigen::Index r = 0; r < rollout.rows(); ++r)
        rows.push_back(std::vector<float>(rollout.row(r).data(), rollout.row(r).data() + rollout.cols()));
    if (cost <= attnlens::kFlowBudget) {
        attnlens::FlowOptions fo;
        fo.lastLayer = through;
        for (int q = 0; q < tokens; ++q)
            flow.push_back(attnlens::attentionFlow(enc, q, fo));
    } else {
        flow = nullptr;
        std::cerr << "note: attention flow of " << tokens << " tokens through " << through + 1
                  << " layers exceeds the budget (" << double(cost) / double(attnlens::kFlowBudget)
                  << "x); only the rollout is written\n";
    }
    j["through_layer"] = through;
    j["encoder_rollout"] = rows;
    j["encoder_flow"] = flow;
}

Json traceJson(const attnlens::TranslationTrace& trace) {
    return {{"source", trace.source},
            {"source_tokens", trace.sourceTokens},
            {"source_ids", trace.sourceIds},
            {"target_tokens", trace.targetTokens},
            {"target_ids", trace.targetIds},
            {"translation", trace.translation},
            {"attentions",
             {{"encoder", nested4(trace.encoderAttention)},
              {"decoder", nested4(trace.decoderAttention)},
              {"cross", nested4(trace.crossAttention)}}}};
}

Json valueWeightedJson(const attnlens::TranslationTrace& trace) {
    using attnlens::AttentionKind;
    return {{"encoder", nested4(attnlens::traceValueWeighted(trace, AttentionKind::EncoderSelf))},
            {"decoder", nested4(attnlens::traceValueWeighted(trace, AttentionKind::DecoderSelf))},
            {"cross", nested4(attnlens::traceValueWeighted(trace, AttentionKind::Cross))}};
}

// The trace with its three attentions value-weighted (what --heatmap draws with --value-weighted).
attnlens::TranslationTrace withValueWeighted(const attnlens::TranslationTrace& trace) {
    using attnlens::AttentionKind;
    attnlens::TranslationTrace t = trace;
    t.encoderAttention = attnlens::traceValueWeighted(trace, AttentionKind::EncoderSelf);
    t.decoderAttention = attnlens::traceValueWeighted(trace, AttentionKind::DecoderSelf);
    t.crossAttention = attnlens::traceValueWeighted(trace, AttentionKind::Cross);
    return t;
}

int runTranslate(const std::vector<std::string>& argv) {
    const cli::Args args(argv,
                         {"--model", "--beam", "--max-new-tokens", "--json", "--heatmap", "--kind", "--layer",
                          "--head", "--colormap", "--cell", "--precision", "--ablate", "--through"},
                         {"--value-weighted"});
    const std::string& text = args.single("the sentence to translate");
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Marian);
    attnlens::DecodeOptions options;
    if (args.has("--beam")) options.numBeams = args.intValue("--beam", 1, 1, 64);
    if (args.has("--max-new-tokens")) options.maxNewTokens = args.intValue("--max-new-tokens", 1, 1, 100000);
    cli::applyPrecision(args);
    const auto folder = attnlens::loadMarianFolder(dir);
    if (attnlens::linearPrecision() == attnlens::LinearPrecision::Bf16) // measured on this sentence
        std::cerr << "note: bf16 against fp32 on this input: "
                  << attnlens::describeParity(
                         attnlens::marianPrecisionParity(folder.model, folder.tokenizer, text, options),
                         "translation")
                  << "\n";
    const auto heatmap = parseHeatmapRequest(args, folder.model->config());
    Json ablated = Json::array();
    if (const auto list = args.value("--ablate"))
        ablated = parseAblation(*list, folder.model->config(), options.ablation);
    const int through = args.has("--through")
                            ? args.intValue("--through", 0, 0, folder.model->config().encoderLayers - 1)
                            : -1;
    if (through >= 0 && !args.has("--json"))
        throw cli::UsageError("--through writes to the --json file; give one");
    const bool valueWeighted = args.has("--value-weighted");
    if (valueWeighted && !args.has("--json") && !heatmap)
        throw cli::UsageError("--value-weighted: with --json OUT or --heatmap OUT");
    attnlens::DecodeSession session(folder.model, folder.tokenizer, text, options);
    session.run();
    const auto trace = session.trace();
    std::cout << trace->translation << "\n";
    std::string baseline;
    Json change;
    if (options.ablation.any())
        baseline = ablationChange(folder, text, options, *trace, ablated.size(), change);
    if (const auto out = args.value("--json")) {
        Json j = traceJson(*trace);
        if (through >= 0) writeThrough(trace->encoderAttention, through, j);
        if (valueWeighted) j["value_weighted"] = valueWeightedJson(*trace);
        if (!ablated.empty()) {
            j["ablated"] = ablated; // the run above is the ablated one
            j["baseline_translation"] = baseline;
            j["change"] = change;
        }
        attnlens::writeJsonFile(*out, j);
    }
    if (heatmap) {
        attnlens::TranslationTrace shown = *trace;
        if (valueWeighted) shown = withValueWeighted(*trace);
        auto scene = attnlens::ui::traceHeatmapScene(shown, heatmap->kind, heatmap->layer, heatmap->heads,
                                                     attnlens::decoderStartPiece(folder));
        scene.colorMap = heatmap->colorMap;
        scene.updateImage();
        cli::writeHeatmap(heatmap->path, scene, heatmap->cell);
    }
    return 0;
}

const cli::Registration regTranslate{
    "translate",
    "[--model DIR] [--beam N] [--max-new-tokens N] [--json OUT] [--heatmap OUT.png|svg [--kind "
    "encoder|decoder|cross] "
    "[--layer L] [--head H|mean|max|min] [--colormap NAME] [--cell PX]] [--ablate KIND:L:H[,…]] [--through "
    "L] "
    "[--precision fp32|bf16] [--value-weighted] "
    "\"Satz\"",
    "translate German to English with a Marian model; every attention head to JSON; one labelled attention "
    "matrix "
    "to --heatmap (default: cross-attention, last layer, mean over heads; layers and heads numbered from 0)",
    &runTranslate};

} // namespace
