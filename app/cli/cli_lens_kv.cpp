// attnlens-cli lens --kv-policy POLICY [--generate N] [--free] [--timing] [--json OUT] "prompt"
// The prompt's greedy continuation of N tokens (default 32) made with the whole cache, then again with the
// cache POLICY keeps (full, streaming:SINKS,WINDOW, h2o:BUDGET,RECENT, snapkv:BUDGET,WINDOW, keep:0,2-5).
// stdout: per step the token fed, the baseline's next token and the policy's, the log-probability of the
// baseline's next token under both, KL(baseline ‖ policy), the cache entries kept and their memory; then the
// summary. --free: the policy writes its own text (log-probabilities and KL until it first differs).
// OUT: {"model_type", "tokens", "ids", "policy", "mode", "prompt_length", "entry_bytes", "baseline_text",
//       "policy_text" (--free; else null), "changed", "first_change", "logprob_sum", "base_logprob_sum",
//       "steps": [{"fed", "original", "chosen", "logprob", "base_logprob", "kl", "kept", "cache_bytes"}],
//       "kept": [[0|1 …] per step over keys 0 … P + s]} (NaN: null)

#include "cli_lens_kv.h"

#include "core/analysis/kv_rerun.h"
#include "core/export/tensor_json.h"
#include "core/io/json_file.h"
#include "core/models/text_generation.h"
#include "core/util/error.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace cli {

namespace {

using attnlens::Json;
using attnlens::KvRerun;

Json number(float v) {
    return std::isfinite(v) ? Json(v) : Json(nullptr);
}

std::string joined(const attnlens::TextFolder& folder, const std::vector<int>& ids) {
    std::string text;
    for (int id : ids)
        text += folder.tokenText(id);
    return text;
}

std::string piece(const attnlens::TextFolder& folder, int id) {
    return "\"" + folder.tokenText(id) + "\"";
}

void printSteps(const attnlens::TextFolder& folder, const KvRerun& r) {
    std::printf(
        "step\tfed\tbaseline next\tpolicy next\tlog p (policy)\tlog p (baseline)\tKL\tkept\tcache KiB\n");
    for (size_t s = 0; s < r.steps.size(); ++s) {
        const auto& st = r.steps[s];
        std::printf("%zu\t%s\t%s\t%s%s\t%.4f\t%.4f\t%.4f\t%d\t%.1f\n", s, piece(folder, st.fed).c_str(),
                    piece(folder, st.original).c_str(), piece(folder, st.chosen).c_str(),
                    st.chosen != st.original ? " *" : "", st.logprob, st.baseLogprob, st.kl, st.kept,
                    double(st.cacheBytes) / 1024.0);
    }
}

Json rerunJson(const attnlens::TextFolder& folder, const attnlens::KvBaseline& base, const KvRerun& r) {
    Json steps = Json::array(), kept = Json::array();
    std::vector<int> policyText{base.tokens.front()}; // Free: t_0, then each step's choice
    const std::vector<int>& baseText = base.tokens;
    const KvRerun::Totals totals = r.totals();
    for (const auto& st : r.steps) {
        steps.push_back({{"fed", st.fed},
                         {"original", st.original},
                         {"chosen", st.chosen},
                         {"logprob", number(st.logprob)},
                         {"base_logprob", st.baseLogprob},
                         {"kl", number(st.kl)},
                         {"kept", st.kept},
                         {"cache_bytes", st.cacheBytes}});
        policyText.push_back(st.chosen);
    }
    for (const auto& row : r.kept.rows)
        kept.push_back(std::vector<int>(row.begin(), row.end()));
    return {{"policy", attnlens::kvPolicyName(r.policy)},
            {"mode", r.mode == attnlens::KvRerunMode::Free ? "free" : "forced"},
            {"prompt_length", base.promptLength()},
            {"entry_bytes", base.entryBytes},
            {"baseline_text", joined(folder, baseText)},
            {"policy_text",
             r.mode == attnlens::KvRerunMode::Free ? Json(joined(folder, policyText)) : Json(nullptr)},
            {"changed", r.changed()},
            {"first_change", r.firstChange},
            {"logprob_sum", totals.logprob},
            {"base_logprob_sum", totals.baseLogprob},
            {"steps", steps},
            {"kept", kept}};
}

void printSummary(const attnlens::KvBaseline& base, const KvRerun& r) {
    const KvRerun::Totals t = r.totals(); // Free mode: the steps before the texts part
    const auto last = r.steps.empty() ? attnlens::KvRerunStep{} : r.steps.back();
    const std::string first = r.firstChange < 0 ? "none" : "first at step " + std::to_string(r.firstChange);
    const int all = base.promptLength() + int(r.steps.size());
    std::printf("%s (%s): %d of %zu steps choose another token (%s); log p of the baseline's continuation "
                "%.4f (baseline %.4f) over %d steps; mean KL %.4f nats; cache at the last step %d entries, "
                "%.1f KiB (all %d: %.1f KiB)\n",
                attnlens::kvPolicyName(r.policy).c_str(),
                r.mode == attnlens::KvRerunMode::Free ? "free" : "forced", r.changed(), r.steps.size(),
                first.c_str(), t.logprob, t.baseLogprob, t.compared, t.meanKl(), last.kept,
                double(last.cacheBytes) / 1024.0, all, double(base.entryBytes) * all / 1024.0);
}

// --timing: the same steps as a plain greedy generation from the prompt's cache, no attention kept
double plainStepsSeconds(const attnlens::TextFolder& folder, const attnlens::KvBaseline& base) {
    attnlens::TextCache cache = base.promptCache;
    attnlens::RunControls plain;
    plain.captureAttention = false;
    const auto t0 = std::chrono::steady_clock::now();
    attnlens::RowMatrix logits = attnlens::RowMatrix::Zero(1, folder.vocabSize());
    logits(0, base.tokens.front()) = 1.0f; // the first token is the prompt's own choice
    attnlens::greedyContinuation(folder, logits, cache, base.steps(), plain, {}, attnlens::StopAt::Count);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int runKvWhatIf(const Args& args, const attnlens::TextFolder& folder, const attnlens::TextEncoding& prompt) {
    if (!folder.decoderOnly()) throw UsageError("--kv-policy: a decoder-only model (this one is an encoder)");
    attnlens::KvPolicy policy;
    try {
        policy = attnlens::parseKvPolicy(*args.value("--kv-policy"));
    } catch (const attnlens::Error& e) {
        throw UsageError(e.what());
    }
    const int steps = args.intValue("--generate", 32, 1, attnlens::kMaxKvSteps);
    const auto mode = args.has("--free") ? attnlens::KvRerunMode::Free : attnlens::KvRerunMode::Forced;
    const attnlens::KvBaseline base = attnlens::kvBaseline(*folder.model, prompt.ids, {.steps = steps});
    const KvRerun r = attnlens::kvRerun(*folder.model, base, policy, mode);
    printSteps(folder, r);
    printSummary(base, r);
    if (args.has("--timing"))
        std::fprintf(
            stderr,
            "timing: prompt %.0f ms; baseline %d steps %.0f ms (attention kept); the same steps as a "
            "plain generation %.0f ms; the re-run %.0f ms\n",
            base.promptSeconds * 1e3, base.steps(), base.stepsSeconds * 1e3,
            plainStepsSeconds(folder, base) * 1e3, r.seconds * 1e3);
    if (const auto path = args.value("--json")) {
        Json out = {{"model_type", folder.modelType}, {"tokens", prompt.tokens}, {"ids", prompt.ids}};
        out.update(rerunJson(folder, base, r));
        attnlens::writeText(*path, out.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    return 0;
}

} // namespace cli
