// attnlens-cli lens --logit-lens --model MARIAN_DIR [--position P|all] [--target-id N] [--top K] [--json OUT]
//                   "source sentence"
// attnlens-cli lens --logit-lens --model VIT_DIR [--target-id CLASS] [--top K] [--json OUT] image.png
// Marian: the sentence is translated greedily; at each target position (from 0; default all) the decoder's
// stream entering each layer (0: the embeddings) and leaving the last, through the LM head and
// final_logits_bias. stdout: one position: per layer the top tokens and the target's rank; all: layers ×
// positions of top-1 pieces. ViT: the CLS token's stream per layer through the final layernorm and the
// classifier: per layer the top classes and the target's (default: the model's own top class) rank.
// OUT: {"model_type", "tokens" (target pieces | —), "lens": [{"position", "target", "target_token",
//       "layers": [{"top": [{"id", "token", "prob"}], "target_rank", "target_prob", "target_logit"}]}]}

#include "cli_lens_models.h"

#include "cli_image.h"
#include "core/analysis/model_lenses.h"
#include "core/decode/decode_session.h"
#include "core/export/tensor_json.h"
#include "core/io/json_file.h"
#include "core/models/marian_folder.h"
#include "core/vision/preprocess.h"

#include <cstdio>
#include <functional>
#include <numeric>

namespace cli {

using attnlens::Json;
using attnlens::LogitLens;
using Name = std::function<std::string(int)>;

Json lensJson(const LogitLens& lens, const std::function<std::string(int)>& name) {
    Json layers = Json::array();
    for (const auto& layer : lens.layers) {
        Json top = Json::array();
        for (const auto& t : layer.top)
            top.push_back({{"id", t.id}, {"token", name(t.id)}, {"prob", t.prob}});
        layers.push_back({{"top", top},
                          {"target_rank", layer.targetRank},
                          {"target_prob", layer.targetProb},
                          {"target_logit", layer.targetLogit}});
    }
    return {{"position", lens.position},
            {"target", lens.target},
            {"target_token", name(lens.target)},
            {"layers", layers}};
}

namespace {

void printOne(const LogitLens& lens, const Name& name, const char* what) {
    std::printf("%s, target \"%s\" (id %d); layer 0 = the embeddings, %zu = the output\n", what,
                name(lens.target).c_str(), lens.target, lens.layers.size() - 1);
    std::printf("layer\ttarget rank\ttarget p\ttop\n");
    for (size_t l = 0; l < lens.layers.size(); ++l) {
        const auto& row = lens.layers[l];
        std::printf("%zu\t%d\t%.4f\t", l, row.targetRank, row.targetProb);
        for (const auto& t : row.top)
            std::printf(" \"%s\" %.3f", name(t.id).c_str(), t.prob);
        std::printf("\n");
    }
}

void write(const Args& args, Json out, const std::vector<LogitLens>& lenses, const Name& name) {
    Json all = Json::array();
    for (const auto& lens : lenses)
        all.push_back(lensJson(lens, name));
    out["lens"] = all;
    if (const auto path = args.value("--json"))
        attnlens::writeText(*path, out.dump(-1, ' ', false, Json::error_handler_t::replace));
}

int marianLens(const Args& args, const std::filesystem::path& dir) {
    const auto folder = attnlens::loadMarianFolder(dir);
    attnlens::DecodeSession session(folder.model, folder.tokenizer, args.single("the source sentence"),
                                    attnlens::DecodeOptions{.numBeams = 1});
    session.run();
    const auto trace = session.trace();
    const std::vector<int> input = folder.model->forcedDecoderInput(trace->targetIds);
    const int n = static_cast<int>(input.size());
    std::vector<int> positions(static_cast<size_t>(n));
    std::iota(positions.begin(), positions.end(), 0);
    if (args.value("--position", "all") != "all") positions = {args.intValue("--position", 0, 0, n - 1)};
    const int target = args.intValue("--target-id", -1, 0, int(folder.model->config().decoderVocabSize) - 1);
    const std::vector<int> targets(target >= 0 ? positions.size() : 0, target);
    const auto lenses =
        attnlens::marianLogitLens(*folder.model, folder.model->encode(session.source().ids, false), input,
                                  positions, targets, args.intValue("--top", 5, 1, 100));
    const Name name = [&](int id) { return folder.tokenizer->idToPiece(id); };
    std::printf("translation: %s\n", trace->translation.c_str());
    if (lenses.size() == 1) {
        const std::string what =
            "decoder logit lens at target position " + std::to_string(lenses[0].position);
        printOne(lenses[0], name, what.c_str());
    } else {
        std::printf(
            "decoder logit lens: top-1 piece per layer (rows, 0 = the embeddings) and target position "
            "(columns)\n");
        for (size_t l = 0; l < lenses.front().layers.size(); ++l) {
            std::printf("%zu", l);
            for (const auto& lens : lenses)
                std::printf("\t%s", name(lens.layers[l].top.front().id).c_str());
            std::printf("\n");
        }
    }
    write(args,
          {{"model_type", "marian"}, {"tokens", trace->targetTokens}, {"translation", trace->translation}},
          lenses, name);
    return 0;
}

int vitLens(const Args& args, const std::filesystem::path& dir) {
    if (args.has("--position")) throw UsageError("--position: a ViT's lens reads the CLS token only");
    const auto model = attnlens::VitModel::load(dir);
    if (!model->hasClassifier())
        throw UsageError("'" + dir.string() + "' has no classifier: nothing to read out to");
    const attnlens::ImageU8 image = loadImageQuietly(args.single("the image"));
    const auto input = attnlens::preprocessImage(image, model->processor(), model->config().numChannels);
    const int target = args.intValue("--target-id", -1, 0, model->numLabels() - 1);
    const LogitLens lens =
        attnlens::vitLogitLens(*model, input.pixels, target, args.intValue("--top", 5, 1, 100));
    const Name name = [&](int id) { return model->label(id); };
    printOne(lens, name, "ViT logit lens of the CLS token");
    write(args, {{"model_type", "vit"}}, {lens}, name);
    return 0;
}

} // namespace

int runModelLens(const Args& args, const std::filesystem::path& dir, attnlens::ModelKind kind) {
    if (!args.has("--logit-lens"))
        throw UsageError(
            "a translator or a ViT: --logit-lens only (--contrib and --kv-policy need a text decoder)");
    for (const char* flag : {"--target", "--chat"})
        if (args.has(flag)) throw UsageError(std::string(flag) + ": text models only (use --target-id)");
    return kind == attnlens::ModelKind::Marian ? marianLens(args, dir) : vitLens(args, dir);
}

} // namespace cli
