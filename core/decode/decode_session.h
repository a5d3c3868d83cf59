#pragma once
// DecodeSession: greedy and beam-search translation with a step API and every attention head
// captured while decoding. The search follows transformers v4.33 generate():
//   * logits processors: bad_words_ids (single-token entries, e.g. [[pad]]) -> -inf at every step;
//     forced_eos_token_id: when the sequence (start token included) has max_length - 1 tokens, every
//     token but </s> is -inf (</s> gets log-probability 0);
//   * greedy: argmax of the processed logits (first index on ties), stop at </s> or max_length;
//   * beam (BeamSearchScorer): scores are sum of processed log_softmax values; 2*num_beams
//     candidates per step; </s> only from the top num_beams ranks, added as a finished hypothesis
//     scored sum_logprobs / len^length_penalty (len = tokens before </s>, start token included);
//     early_stopping true/false/"never" decide when the search is done; at max_length the running
//     beams are added too; the best finished hypothesis is the result.
//   * max_length = 1 + max_new_tokens (so the max_new_tokens-th new token is forced to </s>).
//
// Basic usage:
//   auto model = MarianModel::load(dir);
//   auto tok = MarianTokenizer::load(dir);
//   DecodeSession session(model, tok, "Der Hund läuft.", DecodeOptions{.numBeams = 4});
//   while (session.step()) { auto snapshot = session.trace(); /* show it */ }
//   session.back();   // one step back (state identical to before the last step())
//   session.run(callbacks);  // to the end; progress + cancel between steps
//
// Threading: a session is NOT thread-safe; drive it from one (worker) thread. trace() returns an
// immutable snapshot (shared_ptr<const ...>) that may be handed to another thread.

#include "core/models/marian_model.h"
#include "core/text/marian_tokenizer.h"
#include "core/util/callbacks.h"

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace attnlens {

struct DecodeOptions {
    std::optional<int> numBeams = {};        // default: generation config (1 = greedy)
    std::optional<int> maxNewTokens = {};    // default: generation config max_new_tokens, else max_length - 1
    std::optional<float> lengthPenalty = {}; // default: generation config
    std::optional<EarlyStopping> earlyStopping = {};
    int topK = 10;                // candidates recorded per step
    bool captureAttention = true; // every head of every layer
    MarianAblation ablation = {}; // heads switched off (none: the plain model)
};

struct TokenCandidate {
    int id = 0;
    std::string piece;
    float logprob = 0.0f; // processed log-probability (log_softmax, then bad words / forced eos)
    float prob = 0.0f;    // exp(logprob)
};

// One node of the search tree. The root (id 0) is the decoder start token. A node's attention rows
// are those of the decoder step that PRODUCED its token (query position depth - 1), shared between
// siblings: selfAttention [L][H][depth], crossAttention [L][H][S].
struct BeamNode {
    int id = 0;
    int parent = -1;
    int token = 0;
    int depth = 0;           // generated tokens up to and including this one (root: 0)
    int step = -1;           // the step() that created it (depth - 1)
    float logprob = 0.0f;    // of this token given the parent
    float score = 0.0f;      // cumulative sum of logprob (HF beam score)
    bool finished = false;   // this token is </s> (a finished hypothesis)
    float finalScore = 0.0f; // finished: score / depth^length_penalty as ranked by the search
    Tensor selfAttention;    // [L_dec, H, depth]
    Tensor crossAttention;   // [L_dec, H, S]
    Tensor selfValueNorms; // [L_dec, H] ‖v · W_O,hᵀ‖ of the key that step appended (decoder input depth - 1)
    std::vector<TokenCandidate> candidates; // top-k of the distribution this token was chosen from
};

// A complete, immutable picture of one hypothesis (the best one) for display and export.
struct TranslationTrace {
    std::string source;
    std::vector<std::string> sourceTokens; // pieces, "</s>" last
    std::vector<int> sourceIds;
    std::vector<int> targetIds;            // generated ids, no start token, final </s> kept if produced
    std::vector<std::string> targetTokens; // vocab.json pieces of targetIds
    std::string translation;               // target.spm decoding of targetIds (special tokens skipped)
    std::vector<float> tokenLogprobs;      // per target position
    std::vector<std::vector<TokenCandidate>> candidates; // per target position
    bool finished = false;
    float score = 0.0f;      // beam: normalised hypothesis score; greedy: sum of logprobs
    Tensor encoderAttention; // [L_enc, H, S, S]
    Tensor decoderAttention; // [L_dec, H, T, T]; row t = step producing targetIds[t]; causal zeros
    Tensor crossAttention;   // [L_dec, H, T, S]
    // ‖v_j · W_O,hᵀ‖ of every key of each kind (value-weighted maps, core/analysis/value_weighting.h), empty
    // when the attention is not captured: the encoder's [L_enc, H, S], the decoder's [L_dec, H, T] (key j is
    // decoder input j: the start token, then targetIds[j - 1]), the cross-attention's [L_dec, H, S].
    Tensor encoderValueNorms, decoderValueNorms, crossValueNorms;
};

// Fills t's target side from the search tree: the ids, pieces (when `tokenizer` is given), log-probabilities,
// candidates, decoder and cross rows and decoder value norms of the nodes along `path` (root excluded, in
// order); the attention stays empty when the nodes carry none. Source fields are the caller's.
void fillHypothesis(TranslationTrace& t, const std::vector<BeamNode>& nodes, std::span<const int> path,
                    const MarianTokenizer* tokenizer);

class DecodeSession {
public:
    // Tokenizes `source` and runs the encoder. Throws attnlens::Error for bad input (non-UTF-8,
    // too long) or inconsistent settings.
    DecodeSession(std::shared_ptr<const MarianModel> model, std::shared_ptr<const MarianTokenizer> tokenizer,
                  const std::string& source, DecodeOptions options = {});
    // With source ids given directly (tokenizer may be null: pieces/translation are then empty).
    DecodeSession(std::shared_ptr<const MarianModel> model, std::shared_ptr<const MarianTokenizer> tokenizer,
                  MarianEncoding source, DecodeOptions options = {}, std::string sourceText = {});

    // One decoding step (one new token for every live hypothesis). Returns false (and does nothing)
    // when the search is already finished.
    bool step();
    // Undoes the last step(); returns false at the start. The state afterwards equals the state
    // before that step (tokens, tree, scores, caches).
    bool back();
    // Back to the start (encoder output kept).
    void reset();
    // Steps until finished. Reports progress (steps / max_new_tokens) and throws attnlens::Cancelled
    // when callbacks.cancelled() returns true between steps (the session stays usable).
    void run(const Callbacks& callbacks = {});
    // Like run(), but returns after the step during which `budget` ran out (at least one step is
    // taken unless finished): lets a caller show a long decoding as it grows. Returns finished().
    bool runFor(std::chrono::milliseconds budget, const Callbacks& callbacks = {});

    bool finished() const { return m_done; }
    int stepCount() const { return static_cast<int>(m_history.size()); }
    int numBeams() const { return m_numBeams; }
    int maxNewTokens() const { return m_maxLength - 1; }
    bool isBeamSearch() const { return m_numBeams > 1; }

    // The best hypothesis so far: the final result when finished, else the top live beam.
    int bestNode() const;
    std::vector<int> tokens() const; // its generated ids (no start token)
    // Top-k candidates of the last step on the best hypothesis (empty before the first step).
    std::vector<TokenCandidate> currentCandidates() const;

    const MarianEncoding& source() const { return m_source; }
    const Tensor& encoderAttention() const { return m_encoder.selfAttention; } // [L_enc, H, S, S]
    // Beam tree (greedy: a chain). Nodes are appended in step order; back() removes the last step's.
    const std::vector<BeamNode>& nodes() const { return m_nodes; }
    std::vector<int> liveBeams() const;          // node ids of the running hypotheses, best first
    std::vector<int> finishedHypotheses() const; // node ids kept by the search, in insertion order
    std::vector<int> pathTo(int node) const;     // node ids root..node (root excluded)

    // Snapshot of the hypothesis ending at `node` (default: bestNode()).
    std::shared_ptr<const TranslationTrace> trace(std::optional<int> node = std::nullopt) const;

private:
    const MarianAblation* ablation() const {
        return m_options.ablation.any() ? &m_options.ablation : nullptr;
    }
    struct Live {
        int node = 0;
        float score = 0.0f;
        MarianDecoderCache cache; // positions [0, depth(node)) i.e. everything before node's token
    };
    struct Hyp {
        int node = 0;
        double score = 0.0; // Python float in transformers' BeamHypotheses
    };
    struct Snapshot {
        size_t nodeCount = 0;
        std::vector<std::pair<int, float>> live;
        std::vector<Hyp> hyps;
        double worst = 1e9;
        bool done = false;
        int result = -1;
    };
    struct Expansion {
        std::vector<float> logprobs; // processed, [V]
        std::vector<float> logits;   // processed raw logits (greedy argmax), [V]
        Tensor selfAttention, crossAttention, selfValueNorms;
        std::vector<TokenCandidate> candidates;
    };

    void init(DecodeOptions options);
    // Decodes one step of `live` (its cache grows in place).
    Expansion expand(Live& live, int curLen);
    // Turns the raw step output of `node` into an Expansion (processors, log-softmax, top-k).
    Expansion finishExpansion(int node, MarianStepOutput out, const MarianDecoderCache& cache, int curLen);
    // The next beams' caches from the live slots they continue (origin[b] indexes m_live): the first
    // continuation of a slot takes its cache without a copy, each further one gets a copy of the used
    // rows into the buffers of a beam that was dropped.
    void reorderCaches(std::vector<Live>& next, const std::vector<int>& origin);
    void stepGreedy();
    void stepBeam();
    int addNode(int parent, int token, float logprob, float score, const Expansion& e);
    void addHyp(int node, float sumLogprobs, int hypLength);
    bool isDone(double bestSum, int curLen) const;
    void finalize();
    MarianDecoderCache rebuildCache(int node) const;

    std::shared_ptr<const MarianModel> m_model;
    std::shared_ptr<const MarianTokenizer> m_tokenizer;
    std::string m_sourceText;
    MarianEncoding m_source;
    MarianEncoderOutput m_encoder;
    DecodeOptions m_options;

    int m_numBeams = 1;
    int m_maxLength = 20;
    float m_lengthPenalty = 1.0f;
    EarlyStopping m_earlyStopping = EarlyStopping::False;
    std::vector<int> m_banned;
    std::optional<int> m_forcedEos;
    int m_eos = 0;
    int m_pad = -1; // masked before the log-softmax in beam search (Marian's adjust_logits_during_generation)

    std::vector<BeamNode> m_nodes;
    std::vector<std::vector<float>>
        m_nodeKv; // per node: its token's self-attention K/V rows (after expansion)
    std::vector<Live> m_live;
    std::vector<Hyp> m_hyps;
    double m_worst = 1e9;
    bool m_done = false;
    int m_result = -1;
    std::vector<Snapshot> m_history;
};

} // namespace attnlens
