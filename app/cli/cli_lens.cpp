// attnlens-cli lens [--model DIR] (--logit-lens | --contrib) [--position P|all]
//                   [--target TEXT | --target-id N] [--top K] [--chat] [--timing] [--json OUT] "text"
// Lenses past the attention weights (core/analysis/logit_lens.h) on a text folder with an LM head:
//   --logit-lens  each layer's residual stream through the model's final norm and head. stdout: per layer
//                 (0 = the embeddings, the last = the model's output) the top tokens with their probabilities
//                 and the target's rank; --position all: every position's top-1 per layer (layers ×
//                 positions).
//   --contrib     the target's logit split over what wrote it (direct logit attribution, the final norm's
//   scale
//                 frozen): stdout the logit, the heads that push it most either way, each layer's MLP, the
//                 embeddings, the constant and their sum.
//   --kv-policy   a KV-cache what-if (app/cli/cli_lens_kv.cpp).
// A translator's or a ViT's folder: the logit lens of Marian's decoder or ViT's CLS token
// (app/cli/cli_lens_models.cpp).
// The target is the model's own top token at the position unless --target / --target-id name one.
// OUT (--logit-lens): {"model_type", "tokens", "ids", "lens": [{"position", "target", "target_token",
//        "layers": [{"top": [{"id", "token", "prob"}], "target_rank", "target_prob", "target_logit"}]}]}
// OUT (--contrib): {"model_type", "tokens", "ids", "position", "target", "target_token", "logit", "softcap",
//        "constant", "embeddings", "heads": [L][H], "output_bias": [L], "cross": [L], "mlp": [L],
//        "split": [L], "whole": [L], "total"}

#include "cli_common.h"
#include "cli_lens_kv.h"
#include "cli_lens_models.h"
#include "cli_text_input.h"
#include "core/analysis/kv_rerun.h"
#include "core/analysis/logit_lens.h"
#include "core/export/tensor_json.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/text_folder.h"
#include "core/registry/model_registry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace {

using attnlens::Json;
using attnlens::TextFolder;

int targetOf(const cli::Args& args, const TextFolder& folder) {
    if (args.has("--target") && args.has("--target-id"))
        throw cli::UsageError("--target and --target-id: one or the other");
    if (args.has("--target-id")) return args.intValue("--target-id", -1, 0, folder.vocabSize() - 1);
    const auto text = args.value("--target");
    if (!text) return -1;
    const auto plain = folder.tokenizer->encodePlain(*text);
    if (plain.ids.size() != 1)
        throw cli::UsageError("--target: '" + *text + "' is " + std::to_string(plain.ids.size()) +
                              " tokens, not one (a word after a space often needs its space: \" Paris\"; or "
                              "use --target-id)");
    return plain.ids.front();
}

std::vector<int> positionsOf(const cli::Args& args, int tokens) {
    const std::string p = args.value("--position", std::to_string(tokens - 1));
    if (p == "all") {
        if (args.has("--contrib")) throw cli::UsageError("--position all: with --logit-lens only");
        std::vector<int> all(static_cast<size_t>(tokens));
        std::iota(all.begin(), all.end(), 0);
        return all;
    }
    return {args.intValue("--position", tokens - 1, 0, tokens - 1)};
}

std::string quoted(const TextFolder& folder, int id) {
    return "\"" + folder.tokenText(id) + "\"";
}

void printLens(const TextFolder& folder, const std::vector<attnlens::LogitLens>& lenses) {
    if (lenses.size() == 1) {
        const auto& lens = lenses.front();
        std::printf(
            "logit lens at position %d, target %s (id %d); layer 0 = the embeddings, %zu = the output\n",
            lens.position, quoted(folder, lens.target).c_str(), lens.target, lens.layers.size() - 1);
        std::printf("layer\ttarget rank\ttarget p\ttop tokens\n");
        for (size_t l = 0; l < lens.layers.size(); ++l) {
            const auto& row = lens.layers[l];
            std::printf("%zu\t%d\t%.4f\t", l, row.targetRank, row.targetProb);
            for (const auto& t : row.top)
                std::printf(" %s %.3f", quoted(folder, t.id).c_str(), t.prob);
            std::printf("\n");
        }
        return;
    }
    std::printf("logit lens: top-1 token per layer (rows, 0 = the embeddings) and position (columns)\n");
    for (size_t l = 0; l < lenses.front().layers.size(); ++l) {
        std::printf("%zu", l);
        for (const auto& lens : lenses)
            std::printf("\t%s", quoted(folder, lens.layers[l].top.front().id).c_str());
        std::printf("\n");
    }
}

void printContributions(const TextFolder& folder, const attnlens::LogitContributions& c) {
    std::printf("logit of %s (id %d) at position %d: %.4f%s\n", quoted(folder, c.target).c_str(), c.target,
                c.position, c.logit,
                c.softcap > 0 ? " (soft-capped; the parts sum to the logit before it)" : "");
    std::vector<std::pair<int, int>> heads;
    for (int l = 0; l < c.heads.rows(); ++l)
        for (int h = 0; h < c.heads.cols(); ++h)
            if (c.split[size_t(l)]) heads.emplace_back(l, h);
    std::sort(heads.begin(), heads.end(), [&](auto a, auto b) {
        return std::abs(c.heads(a.first, a.second)) > std::abs(c.heads(b.first, b.second));
    });
    std::printf("heads that move it most (layer:head from 0; + promotes, − suppresses):\n");
    for (size_t i = 0; i < std::min<size_t>(heads.size(), 10); ++i)
        std::printf("  %d:%d\t%+.4f\n", heads[i].first, heads[i].second,
                    c.heads(heads[i].first, heads[i].second));
    const bool cross = std::any_of(c.cross.begin(), c.cross.end(), [](float v) { return v != 0.0f; });
    std::printf("layer\theads\tbias\tmlp%s\n", cross ? "\tcross" : "");
    for (size_t l = 0; l < c.mlp.size(); ++l) {
        if (!c.split[l]) {
            std::printf("%zu\twhole layer %+.4f (a post-norm layer: its parts do not add to the stream)\n", l,
                        c.whole[l]);
            continue;
        }
        std::printf("%zu\t%+.4f\t%+.4f\t%+.4f", l, c.heads.row(Eigen::Index(l)).sum(), c.outputBias[l],
                    c.mlp[l]);
        if (cross) std::printf("\t%+.4f", c.cross[l]);
        std::printf("\n");
    }
    std::printf("embeddings %+.4f, constant %+.4f; sum %.4f\n", c.embeddings, c.constant, c.total());
}

Json contributionsJson(const TextFolder& folder, const attnlens::LogitContributions& c) {
    Json heads = Json::array();
    for (Eigen::Index l = 0; l < c.heads.rows(); ++l)
        heads.push_back(std::vector<float>(c.heads.row(l).data(), c.heads.row(l).data() + c.heads.cols()));
    std::vector<bool> split(c.split.begin(), c.split.end());
    return {
        {"position", c.position},     {"target", c.target},   {"target_token", folder.tokenText(c.target)},
        {"logit", c.logit},           {"softcap", c.softcap}, {"constant", c.constant},
        {"embeddings", c.embeddings}, {"heads", heads},       {"output_bias", c.outputBias},
        {"cross", c.cross},           {"mlp", c.mlp},         {"split", split},
        {"whole", c.whole},           {"total", c.total()}};
}

int runLens(const std::vector<std::string>& argv) {
    const cli::Args args(
        argv,
        {"--model", "--position", "--target", "--target-id", "--top", "--json", "--kv-policy", "--generate"},
        {"--logit-lens", "--contrib", "--chat", "--timing", "--free"});
    const std::string text = args.single("the text");
    if (int(args.has("--logit-lens")) + int(args.has("--contrib")) + int(args.has("--kv-policy")) != 1)
        throw cli::UsageError("say which lens: --logit-lens, --contrib or --kv-policy POLICY");
    for (const char* flag : {"--generate", "--free"})
        if (args.has(flag) && !args.has("--kv-policy"))
            throw cli::UsageError(std::string(flag) + ": with --kv-policy only");
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Text);
    if (const auto kind = attnlens::detectModelKind(dir);
        kind == attnlens::ModelKind::Marian || kind == attnlens::ModelKind::Vit)
        return cli::runModelLens(args, dir, kind);
    const TextFolder folder = attnlens::loadTextFolder(dir);
    if (!folder.hasLmHead())
        throw cli::UsageError("'" + dir.string() + "' has no language-model head: nothing to read out to");
    const auto encoding = cli::encodeText(
        folder, text, args.has("--kv-policy") ? args.intValue("--generate", 32, 1, attnlens::kMaxKvSteps) : 0,
        args.has("--chat"));
    if (args.has("--kv-policy")) return cli::runKvWhatIf(args, folder, encoding);
    const int tokens = static_cast<int>(encoding.ids.size());
    const std::vector<int> positions = positionsOf(args, tokens);
    const int target = targetOf(args, folder);
    Json out = {{"model_type", folder.modelType}, {"tokens", encoding.tokens}, {"ids", encoding.ids}};
    // --timing: the plain forward pass (no attention kept) timed apart, to tell the lens's own cost from it
    double forwardMs = 0.0;
    if (args.has("--timing")) {
        attnlens::RunControls plain;
        plain.captureAttention = false;
        const auto t0 = std::chrono::steady_clock::now();
        folder.model->forward(encoding.ids, false, plain);
        forwardMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    const auto start = std::chrono::steady_clock::now();
    if (args.has("--logit-lens")) {
        const std::vector<int> targets(target >= 0 ? positions.size() : 0, target);
        const auto lenses = attnlens::logitLens(*folder.model, encoding.ids, positions, targets,
                                                args.intValue("--top", 5, 1, 100));
        printLens(folder, lenses);
        Json all = Json::array();
        for (const auto& lens : lenses)
            all.push_back(cli::lensJson(lens, [&](int id) { return folder.tokenText(id); }));
        out["lens"] = all;
    } else {
        if (args.has("--top")) throw cli::UsageError("--top: with --logit-lens only");
        const auto c = attnlens::logitContributions(*folder.model, encoding.ids, positions.front(), target);
        printContributions(folder, c);
        out.update(contributionsJson(folder, c));
    }
    if (args.has("--timing"))
        std::fprintf(
            stderr,
            "timing: the lens %.0f ms (its traced forward pass included), a plain forward pass %.0f ms\n",
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
            forwardMs);
    // a byte-level piece may be part of a character: its text carries U+FFFD there (the ids are exact)
    if (const auto path = args.value("--json"))
        attnlens::writeText(*path, out.dump(-1, ' ', false, Json::error_handler_t::replace));
    return 0;
}

const cli::Registration regLens{
    "lens",
    "[--model DIR] (--logit-lens | --contrib | --kv-policy POLICY [--generate N] [--free]) [--position "
    "P|all] "
    "[--target TEXT | --target-id N] [--top K] [--chat] [--timing] [--json OUT] \"text\"",
    "past the attention weights: each layer read out through the model's head (logit lens), the target "
    "token's logit split over the heads and MLPs that wrote it (direct logit attribution), or a KV-cache "
    "eviction policy's what-if on a greedy continuation; default model: the built-in llama-en-tiny",
    &runLens};

} // namespace
