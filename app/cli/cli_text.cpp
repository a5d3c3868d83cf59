// attnlens-cli text [--model DIR] [--generate N [--temperature T] [--top-k K] [--top-p P] [--seed S]]
// [--logits]
//                   [--json OUT] [--heatmap OUT.png|svg … (cli_text_heatmap.h)] "text"
// BERT-, GPT-2-, Llama-style and CLIP text folders (core/models/text_folder.h). stdout: for a decoder-only
// model the text and its greedy continuation (--generate N), or without --generate the text and a line with
// the 5 most likely next tokens and their probabilities; for an encoder with [MASK] the top 5 for each mask;
// otherwise the tokens, one per line. OUT: {"model_type", "tokens", "ids", "attentions": [L][H][T][T] (the
// forward pass over "ids"),
//       "logits": [T][V] (--logits, LM-head models only), "generated_ids": [...] (--generate N,
//       decoder-only), "last_hidden_state": [T][D] (CLIP text encoders, whose T is always 77),
//       "value_weighted": [L][H][T][T] (--value-weighted: α_ij·‖v_j·W_O,hᵀ‖ renormalised per row)}.

#include "cli_common.h"
#include "cli_text_heatmap.h"
#include "cli_text_input.h"
#include "core/analysis/precision_parity.h"
#include "core/analysis/value_weighting.h"
#include "core/export/tensor_json.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/text_folder.h"
#include "core/models/text_generation.h"

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace {

void printNextTokens(const attnlens::TextFolder& folder, const attnlens::TextForward& forward) {
    const auto last = forward.logits.rows() - 1;
    const auto top = attnlens::topCandidates(forward.logits.data() + last * forward.logits.cols(),
                                             forward.logits.cols(), 5);
    std::cout << "next token (top 5; --generate N continues the text):";
    for (size_t i = 0; i < top.size(); ++i)
        std::cout << (i ? ", \"" : " \"") << folder.tokenText(top[i].id) << "\" " << std::fixed
                  << std::setprecision(3) << top[i].probability;
    std::cout << "\n";
}

// bf16 against fp32 on the text's first 128 tokens (stderr): two more passes, kept short on a long text.
void noteBf16Parity(const attnlens::TextFolder& folder, std::vector<int> ids) {
    ids.resize(std::min<size_t>(ids.size(), 128));
    std::cerr << "note: bf16 against fp32 on this input"
              << (ids.size() == 128 ? " (its first 128 tokens)" : "") << ": "
              << attnlens::describeParity(
                     attnlens::textPrecisionParity(*folder.model, ids,
                                                   [&](int id) { return folder.tokenText(id); }),
                     attnlens::textParityResult(*folder.model))
              << "\n";
}

int runText(const std::vector<std::string>& argv) {
    const cli::Args args(argv,
                         {"--model", "--generate", "--json", "--temperature", "--top-k", "--top-p", "--seed",
                          "--heatmap", "--npy", "--layer", "--head", "--scale", "--colormap", "--cell",
                          "--capture-budget", "--precision"},
                         {"--logits", "--chat", "--ignore-first", "--value-weighted"});
    const std::string text = args.single("the text");
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Text);
    cli::applyPrecision(args);
    const attnlens::TextFolder folder = attnlens::loadTextFolder(dir);
    if (args.has("--generate") && !folder.decoderOnly())
        throw cli::UsageError("--generate: '" + dir.string() + "' is an encoder (" + folder.modelType +
                              "); only decoder-only models generate");
    if (args.has("--logits") && !folder.hasLmHead())
        throw cli::UsageError("--logits: '" + dir.string() + "' has no language-model head");
    const int generate = args.intValue("--generate", 0, 0, 100000);
    attnlens::Sampling sampling;
    sampling.temperature = static_cast<float>(args.doubleValue("--temperature", 0.0, 0.0, 100.0));
    sampling.topK = args.intValue("--top-k", 0, 0, 1000000);
    sampling.topP = static_cast<float>(args.doubleValue("--top-p", 1.0, 1e-6, 1.0));
    sampling.seed = static_cast<uint64_t>(args.intValue("--seed", 0, 0, 2147483647));
    for (const char* flag : {"--temperature", "--top-k", "--top-p", "--seed"})
        if (args.has(flag) && !args.has("--generate"))
            throw cli::UsageError(std::string(flag) + " needs --generate N");
    const auto heatmap = cli::parseTextHeatmap(args, folder);
    const auto encoding = cli::encodeText(folder, text, generate, args.has("--chat"));
    if (attnlens::linearPrecision() == attnlens::LinearPrecision::Bf16) noteBf16Parity(folder, encoding.ids);
    // A decoder asked for nothing more than the text: its most likely next tokens say what the model makes of
    // it.
    const bool nextTokens = folder.decoderOnly() && !args.has("--generate") && folder.hasLmHead();
    attnlens::RunControls controls; // a long text's attention above the budget is kept on demand
    controls.captureBudget = int64_t(args.intValue("--capture-budget", 1024, 0, 1 << 20)) << 20;
    // A decoder's next tokens need only the last row of logits ([T, V] is 2.5 GB for Qwen at 4 096 tokens).
    attnlens::TextCache promptCache;
    const attnlens::TextForward forward =
        nextTokens && !args.has("--logits")
            ? folder.model->extend(encoding.ids, promptCache = folder.model->newCache(), true, true, controls)
            : folder.forward(encoding.ids,
                             args.has("--logits") || nextTokens ||
                                 !folder.maskPositions(encoding.ids).empty(),
                             controls);
    if (args.has("--json") && forward.onDemand)
        throw attnlens::Error(
            "--json: every head of " + std::to_string(encoding.ids.size()) + " tokens takes " +
            std::to_string(attnlens::capturedAttentionBytes(folder.layers(), folder.heads(),
                                                            int64_t(encoding.ids.size()),
                                                            int64_t(encoding.ids.size())) >>
                           20) +
            " MB, over --capture-budget; write one head with --npy OUT.npy --layer L --head H "
            "(or raise --capture-budget MB)");

    std::vector<int> generated;
    if (generate > 0) { // greedy (or sampled) through the KV cache; stops after an end-of-text token
        attnlens::TextCache cache = folder.model->newCache();
        attnlens::RunControls run;
        run.captureAttention = false;
        const auto prompt = folder.model->extend(encoding.ids, cache, true, true, run);
        generated = attnlens::sampleContinuation(folder, prompt.logits, cache, generate, sampling, run);
    }

    if (folder.decoderOnly()) {
        std::cout << (args.has("--chat") ? folder.chat->render(text) : text); // the prompt the model saw
        for (int id : generated)
            if (!folder.isEndOfText(id)) std::cout << folder.tokenText(id);
        std::cout << "\n";
        if (nextTokens) printNextTokens(folder, forward);
    } else if (const auto masks = folder.maskPositions(encoding.ids); !masks.empty() && folder.hasLmHead()) {
        for (int position : masks) {
            std::cout << "[MASK] at " << position << ":";
            const auto top = attnlens::topCandidates(
                forward.logits.data() + int64_t(position) * forward.logits.cols(), forward.logits.cols(), 5);
            for (size_t i = 0; i < top.size(); ++i)
                std::cout << (i ? ", " : " ") << folder.token(top[i].id) << " " << std::fixed
                          << std::setprecision(3) << top[i].probability;
            std::cout << "\n";
        }
    } else {
        for (const auto& t : encoding.tokens)
            std::cout << t << "\n";
    }

    attnlens::Tensor weighted; // --value-weighted: α·‖v·W_O‖ renormalised, beside the plain attention
    if (args.has("--value-weighted")) {
        if (!args.has("--json")) throw cli::UsageError("--value-weighted: with --json OUT");
        weighted = forward.attentions.clone();
        attnlens::valueWeightAttentions(weighted, attnlens::textValueNorms(*folder.model, encoding.ids));
    }
    if (const auto out = args.value("--json")) {
        attnlens::TextRunJson run{.modelType = folder.modelType,
                                  .tokens = encoding.tokens,
                                  .ids = encoding.ids,
                                  .attentions = &forward.attentions,
                                  .valueWeighted = weighted.empty() ? nullptr : &weighted};
        if (args.has("--logits")) {
            run.logits = forward.logits.data();
            run.logitsShape = {forward.logits.rows(), forward.logits.cols()};
        }
        if (args.has("--generate")) run.generated = &generated;
        if (folder.padTo > 0) { // a pipeline's text encoder: what the U-Net's cross-attention reads
            run.hidden = forward.hidden.data();
            run.hiddenShape = {forward.hidden.rows(), forward.hidden.cols()};
        }
        attnlens::writeText(*out, attnlens::textRunJson(run));
    }
    if (heatmap) cli::writeTextHeatmap(*heatmap, folder, encoding.ids, *forward.attentionStore());
    return 0;
}

const cli::Registration regText{
    "text",
    "[--model DIR] [--chat] [--generate N] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--logits] "
    "[--value-weighted] [--json OUT] [--heatmap OUT.png|svg] [--npy OUT.npy] [--layer L] [--head "
    "H|mean|max|min] "
    "[--scale linear|log|clip] [--ignore-first] [--colormap NAME] [--cell PX] [--capture-budget MB] "
    "[--precision fp32|bf16] \"text\"",
    "BERT / GPT-2 / Llama-style / CLIP text folders: tokens, [MASK] predictions, a decoder's next tokens or "
    "its greedy continuation; every head's attention in the JSON (a CLIP text encoder's: the 77 ids the "
    "pipeline feeds it and its last_hidden_state; default model: the built-in llama-en-tiny)",
    &runText};

} // namespace
