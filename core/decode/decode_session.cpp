#include "core/decode/decode_session.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlens {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// log_softmax in float with a double-precision sum (matches torch to ~1e-7). The exponentials are
// Eigen's vectorised float exp (within 1 ulp; a scalar double std::exp per logit was 3 % of a beam step).
std::vector<float> logSoftmax(const std::vector<float>& x) {
    const Eigen::Map<const Eigen::ArrayXf> in(x.data(), static_cast<Eigen::Index>(x.size()));
    const float mx = in.maxCoeff();
    const double sum = (in - mx).exp().cast<double>().sum();
    const float lse = mx + static_cast<float>(std::log(sum));
    std::vector<float> out(x.size());
    Eigen::Map<Eigen::ArrayXf>(out.data(), static_cast<Eigen::Index>(out.size())) = in - lse;
    return out;
}

// The k largest values' indices, best first, ties to the smaller index (what a stable sort puts first),
// in one pass; finiteOnly leaves out -inf (banned tokens). NaN never enters.
std::vector<int> topIndices(const std::vector<float>& values, int k, bool finiteOnly) {
    std::vector<int> best; // sorted, best first
    if (k <= 0) return best;
    best.reserve(static_cast<size_t>(k) + 1);
    for (int i = 0; i < static_cast<int>(values.size()); ++i) {
        const float v = values[static_cast<size_t>(i)];
        if (std::isnan(v) || (finiteOnly && !std::isfinite(v))) continue;
        if (static_cast<int>(best.size()) == k && !(v > values[static_cast<size_t>(best.back())])) continue;
        auto at = std::upper_bound(best.begin(), best.end(), v, [&](float value, int j) {
            return value > values[static_cast<size_t>(j)];
        });
        best.insert(at, i);
        if (static_cast<int>(best.size()) > k) best.pop_back();
    }
    return best;
}

} // namespace

DecodeSession::DecodeSession(std::shared_ptr<const MarianModel> model,
                             std::shared_ptr<const MarianTokenizer> tokenizer, const std::string& source,
                             DecodeOptions options)
    : m_model(std::move(model)), m_tokenizer(std::move(tokenizer)), m_sourceText(source) {
    if (!m_model) throw Error("decode session: no model");
    if (!m_tokenizer) throw Error("decode session: no tokenizer");
    m_source = m_tokenizer->encode(source);
    init(std::move(options));
}

DecodeSession::DecodeSession(std::shared_ptr<const MarianModel> model,
                             std::shared_ptr<const MarianTokenizer> tokenizer, MarianEncoding source,
                             DecodeOptions options, std::string sourceText)
    : m_model(std::move(model)), m_tokenizer(std::move(tokenizer)), m_sourceText(std::move(sourceText)),
      m_source(std::move(source)) {
    if (!m_model) throw Error("decode session: no model");
    init(std::move(options));
}

void DecodeSession::init(DecodeOptions options) {
    m_options = std::move(options);
    const MarianConfig& c = m_model->config();
    const MarianGenerationConfig& g = c.generation;
    m_numBeams = m_options.numBeams.value_or(g.numBeams);
    if (m_numBeams < 1 || m_numBeams > 64)
        throw Error("num_beams must be between 1 and 64, got " + std::to_string(m_numBeams));
    int maxNew = m_options.maxNewTokens ? *m_options.maxNewTokens
                                        : (g.maxNewTokens ? *g.maxNewTokens : g.maxLength - 1);
    if (maxNew < 1) throw Error("max_new_tokens must be at least 1, got " + std::to_string(maxNew));
    // Decoder positions run up to max_length - 2; the position table has max_position_embeddings rows.
    maxNew = static_cast<int>(std::min<int64_t>(maxNew, c.maxPositions));
    m_maxLength = 1 + maxNew;
    m_lengthPenalty = m_options.lengthPenalty.value_or(g.lengthPenalty);
    m_earlyStopping = m_options.earlyStopping.value_or(g.earlyStopping);
    m_eos = g.eosTokenId;
    m_pad = c.padTokenId;
    m_forcedEos = g.forcedEosTokenId;
    m_banned.clear();
    for (const auto& words : g.badWordsIds)
        if (words.size() == 1 && words[0] >= 0 && words[0] < c.decoderVocabSize) m_banned.push_back(words[0]);
    if (m_options.topK < 0) m_options.topK = 0;
    if (m_source.ids.size() != m_source.pieces.size() && !m_source.pieces.empty())
        throw Error("decode session: source pieces and ids differ in length");
    m_encoder = m_model->encode(m_source.ids, m_options.captureAttention, ablation());
    reset();
}

void DecodeSession::reset() {
    m_nodes.clear();
    m_nodeKv.clear();
    m_live.clear();
    m_hyps.clear();
    m_history.clear();
    m_worst = 1e9;
    m_done = false;
    m_result = -1;
    BeamNode root;
    root.token = m_model->config().generation.decoderStartTokenId;
    m_nodes.push_back(root);
    m_nodeKv.emplace_back();
    // HF starts num_beams copies of the start token, all but the first with score -1e9.
    for (int b = 0; b < m_numBeams; ++b)
        m_live.push_back({0, b == 0 ? 0.0f : -1e9f, m_model->newCache()});
}

DecodeSession::Expansion DecodeSession::expand(Live& live, int curLen) {
    MarianStepOutput out = m_model->decodeStep(m_nodes[live.node].token, m_encoder, live.cache,
                                               m_options.captureAttention, ablation());
    return finishExpansion(live.node, std::move(out), live.cache, curLen);
}

DecodeSession::Expansion DecodeSession::finishExpansion(int node, MarianStepOutput out,
                                                        const MarianDecoderCache& cache, int curLen) {
    Expansion e;
    if (m_nodeKv[node].empty()) m_nodeKv[node] = m_model->cacheRow(cache, cache.length() - 1);
    e.selfAttention = std::move(out.selfAttention);
    e.crossAttention = std::move(out.crossAttention);
    e.selfValueNorms = std::move(out.selfValueNorms);
    e.logits = std::move(out.logits);
    // MarianMTModel.adjust_logits_during_generation: beam search (not greedy) sets the pad logit to
    // -inf BEFORE the log-softmax, so the other tokens' log-probabilities are renormalised without it.
    if (m_numBeams > 1 && m_pad >= 0 && m_pad < static_cast<int>(e.logits.size())) e.logits[m_pad] = kNegInf;
    e.logprobs = logSoftmax(e.logits);
    // logits processors, in HF's order: bad words, then forced eos
    for (const int id : m_banned) {
        e.logits[id] = kNegInf;
        e.logprobs[id] = kNegInf;
    }
    if (m_forcedEos && curLen == m_maxLength - 1) {
        std::fill(e.logits.begin(), e.logits.end(), kNegInf);
        std::fill(e.logprobs.begin(), e.logprobs.end(), kNegInf);
        e.logits[*m_forcedEos] = 0.0f;
        e.logprobs[*m_forcedEos] = 0.0f;
    }
    // top-k candidates for display
    for (const int id : topIndices(e.logprobs, std::max(0, m_options.topK), /*finiteOnly=*/true)) {
        const float lp = e.logprobs[static_cast<size_t>(id)];
        e.candidates.push_back(
            {id, m_tokenizer ? m_tokenizer->idToPiece(id) : std::string(), lp, std::exp(lp)});
    }
    return e;
}

int DecodeSession::addNode(int parent, int token, float logprob, float score, const Expansion& e) {
    BeamNode n;
    n.id = static_cast<int>(m_nodes.size());
    n.parent = parent;
    n.token = token;
    n.depth = m_nodes[parent].depth + 1;
    n.step = n.depth - 1;
    n.logprob = logprob;
    n.score = score;
    n.finished = token == m_eos;
    n.selfAttention = e.selfAttention;
    n.crossAttention = e.crossAttention;
    n.selfValueNorms = e.selfValueNorms;
    n.candidates = e.candidates;
    m_nodes.push_back(std::move(n));
    m_nodeKv.emplace_back();
    return m_nodes.back().id;
}

bool DecodeSession::step() {
    if (m_done) return false;
    Snapshot snap;
    snap.nodeCount = m_nodes.size();
    for (const auto& l : m_live)
        snap.live.emplace_back(l.node, l.score);
    snap.hyps = m_hyps;
    snap.worst = m_worst;
    snap.done = m_done;
    snap.result = m_result;
    if (m_numBeams == 1)
        stepGreedy();
    else
        stepBeam();
    m_history.push_back(std::move(snap));
    return true;
}

void DecodeSession::stepGreedy() {
    Live& live = m_live.front();
    const int curLen = m_nodes[live.node].depth + 1;
    Expansion e = expand(live, curLen);
    const int token = static_cast<int>(std::max_element(e.logits.begin(), e.logits.end()) - e.logits.begin());
    const int node = addNode(live.node, token, e.logprobs[token], live.score + e.logprobs[token], e);
    live.node = node;
    live.score = m_nodes[node].score;
    m_nodes[node].finalScore = m_nodes[node].score;
    if (token == m_eos || curLen + 1 >= m_maxLength) {
        m_done = true;
        m_result = node;
    }
}

void DecodeSession::addHyp(int node, float sumLogprobs, int hypLength) {
    const double score = double(sumLogprobs) / std::pow(double(hypLength), double(m_lengthPenalty));
    m_nodes[node].finalScore = static_cast<float>(score);
    if (static_cast<int>(m_hyps.size()) < m_numBeams || score > m_worst) {
        m_hyps.push_back({node, score});
        if (static_cast<int>(m_hyps.size()) > m_numBeams) {
            std::vector<std::pair<double, int>> order;
            for (int i = 0; i < static_cast<int>(m_hyps.size()); ++i)
                order.emplace_back(m_hyps[i].score, i);
            std::sort(order.begin(), order.end());
            m_hyps.erase(m_hyps.begin() + order[0].second);
            m_worst = order[1].first;
        } else {
            m_worst = std::min(score, m_worst);
        }
    }
}

bool DecodeSession::isDone(double bestSum, int curLen) const {
    if (static_cast<int>(m_hyps.size()) < m_numBeams) return false;
    const double lp = m_lengthPenalty;
    switch (m_earlyStopping) {
    case EarlyStopping::True:
        return true;
    case EarlyStopping::False:
        return m_worst >= bestSum / std::pow(double(curLen), lp);
    case EarlyStopping::Never: {
        const double denom = lp > 0.0 ? double(m_maxLength) : double(curLen);
        return m_worst >= bestSum / std::pow(denom, lp);
    }
    }
    return false;
}

void DecodeSession::stepBeam() {
    const int nb = m_numBeams;
    const int curLen = m_nodes[m_live.front().node].depth + 1;
    // expand each distinct live node once (at the first step all beams share the root)
    std::vector<int> expansionOf(m_live.size());
    std::vector<size_t> distinct; // index into m_live of each distinct node
    for (size_t b = 0; b < m_live.size(); ++b) {
        int found = -1;
        for (size_t a = 0; a < b; ++a)
            if (m_live[a].node == m_live[b].node) found = expansionOf[a];
        if (found < 0) {
            distinct.push_back(b);
            found = static_cast<int>(distinct.size()) - 1;
        }
        expansionOf[b] = found;
    }
    // one batched decoder step for all distinct hypotheses, each growing its own slot's cache in place
    std::vector<int> inputTokens;
    std::vector<MarianDecoderCache*> cachePtrs;
    for (const size_t b : distinct) {
        inputTokens.push_back(m_nodes[m_live[b].node].token);
        cachePtrs.push_back(&m_live[b].cache);
    }
    std::vector<MarianStepOutput> outs =
        m_model->decodeSteps(inputTokens, m_encoder, cachePtrs, m_options.captureAttention, ablation());
    std::vector<Expansion> expansions;
    for (size_t i = 0; i < distinct.size(); ++i)
        expansions.push_back(
            finishExpansion(m_live[distinct[i]].node, std::move(outs[i]), *cachePtrs[i], curLen));
    const int V = static_cast<int>(expansions.front().logprobs.size());
    const int total = nb * V;
    const auto scoreAt = [&](int i) {
        return m_live[i / V].score + expansions[expansionOf[i / V]].logprobs[i % V];
    };
    std::vector<float> scores(total);
    for (int i = 0; i < total; ++i)
        scores[i] = scoreAt(i);
    const std::vector<int> idx = topIndices(scores, std::min(2 * nb, total), /*finiteOnly=*/false);
    const int k = static_cast<int>(idx.size());

    std::vector<Live> next;
    std::vector<int> origin; // per next beam: the live slot whose cache it continues
    for (int rank = 0; rank < k; ++rank) {
        const int i = idx[rank];
        const int src = i / V, token = i % V;
        const Expansion& e = expansions[expansionOf[src]];
        if (token == m_eos) {
            if (rank >= nb) continue;
            const int node = addNode(m_live[src].node, token, e.logprobs[token], scores[i], e);
            addHyp(node, scores[i], curLen);
        } else {
            const int node = addNode(m_live[src].node, token, e.logprobs[token], scores[i], e);
            next.push_back({node, scores[i], {}});
            origin.push_back(static_cast<int>(distinct[static_cast<size_t>(expansionOf[src])]));
        }
        if (static_cast<int>(next.size()) == nb) break;
    }
    // transformers ≥ 4.29 (to 4.35) passes cur_len = input_ids.shape[-1] + 1: the length the new
    // scores were computed on, one more than the hypotheses' current length (`curLen` here).
    const bool done = isDone(scores[idx[0]], curLen + 1);
    reorderCaches(next, origin);
    m_live = std::move(next);
    if (done) {
        m_done = true;
    } else if (curLen + 1 >= m_maxLength) {
        m_done = true;
        for (const Live& l : m_live)
            addHyp(l.node, l.score, curLen + 1);
    }
    if (m_done) finalize();
}

void DecodeSession::reorderCaches(std::vector<Live>& next, const std::vector<int>& origin) {
    std::vector<int> firstChild(m_live.size(), -1);
    for (size_t b = 0; b < next.size(); ++b) {
        const int o = origin[b];
        if (firstChild[static_cast<size_t>(o)] >= 0) continue;
        firstChild[static_cast<size_t>(o)] = static_cast<int>(b);
        next[b].cache = std::move(m_live[static_cast<size_t>(o)].cache);
    }
    std::vector<MarianDecoderCache*> spare; // caches of live slots no beam continues: their memory is reused
    for (size_t o = 0; o < m_live.size(); ++o)
        if (firstChild[o] < 0) spare.push_back(&m_live[o].cache);
    for (size_t b = 0; b < next.size(); ++b) {
        const int first = firstChild[static_cast<size_t>(origin[b])];
        if (first == static_cast<int>(b)) continue;
        if (!spare.empty()) {
            next[b].cache = std::move(*spare.back());
            spare.pop_back();
        }
        next[b].cache.copyFrom(next[static_cast<size_t>(first)].cache);
    }
}

void DecodeSession::finalize() {
    if (m_numBeams == 1) return;
    int best = -1;
    double bestScore = 0.0;
    for (const Hyp& h : m_hyps) // ties: the later hypothesis wins (Python's stable sort + pop())
        if (best < 0 || h.score >= bestScore) best = h.node, bestScore = h.score;
    m_result = best;
}

MarianDecoderCache DecodeSession::rebuildCache(int node) const {
    MarianDecoderCache cache = m_model->newCache();
    std::vector<int> chain;
    for (int n = m_nodes[node].parent; n >= 0; n = m_nodes[n].parent)
        chain.push_back(n);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        m_model->appendCacheRow(cache, m_nodeKv[*it]);
    return cache;
}

bool DecodeSession::back() {
    if (m_history.empty()) return false;
    Snapshot snap = std::move(m_history.back());
    m_history.pop_back();
    m_nodes.resize(snap.nodeCount);
    m_nodeKv.resize(snap.nodeCount);
    m_live.clear();
    for (const auto& [node, score] : snap.live)
        m_live.push_back({node, score, rebuildCache(node)});
    // K/V rows recorded during the undone step belong to nodes that are now unexpanded again
    for (const auto& l : m_live)
        m_nodeKv[l.node].clear();
    m_hyps = std::move(snap.hyps);
    m_worst = snap.worst;
    m_done = snap.done;
    m_result = snap.result;
    return true;
}

void DecodeSession::run(const Callbacks& callbacks) {
    runFor(std::chrono::milliseconds::max(), callbacks);
}

bool DecodeSession::runFor(std::chrono::milliseconds budget, const Callbacks& callbacks) {
    const int total = m_maxLength - 1;
    const auto start = std::chrono::steady_clock::now();
    const bool bounded = budget != std::chrono::milliseconds::max(); // max() would overflow in ns
    while (!m_done) {
        callbacks.checkCancel();
        step();
        callbacks.report(m_done ? 1.0 : static_cast<double>(stepCount()) / total,
                         "step " + std::to_string(stepCount()));
        if (bounded && std::chrono::steady_clock::now() - start >= budget) break;
    }
    return m_done;
}

int DecodeSession::bestNode() const {
    if (m_done && m_result >= 0) return m_result;
    return m_live.empty() ? 0 : m_live.front().node;
}

std::vector<int> DecodeSession::pathTo(int node) const {
    if (node < 0 || node >= static_cast<int>(m_nodes.size()))
        throw Error("decode session: no node " + std::to_string(node));
    std::vector<int> path;
    for (int n = node; n > 0; n = m_nodes[n].parent)
        path.push_back(n);
    std::reverse(path.begin(), path.end());
    return path;
}

std::vector<int> DecodeSession::tokens() const {
    std::vector<int> ids;
    for (const int n : pathTo(bestNode()))
        ids.push_back(m_nodes[n].token);
    return ids;
}

std::vector<TokenCandidate> DecodeSession::currentCandidates() const {
    const int n = bestNode();
    return n > 0 ? m_nodes[n].candidates : std::vector<TokenCandidate>{};
}

std::vector<int> DecodeSession::liveBeams() const {
    std::vector<int> ids;
    if (m_done) return ids;
    for (const Live& l : m_live)
        ids.push_back(l.node);
    return ids;
}

std::vector<int> DecodeSession::finishedHypotheses() const {
    std::vector<int> ids;
    for (const Hyp& h : m_hyps)
        ids.push_back(h.node);
    return ids;
}

void fillHypothesis(TranslationTrace& t, const std::vector<BeamNode>& nodes, std::span<const int> path,
                    const MarianTokenizer* tokenizer) {
    const int64_t T = static_cast<int64_t>(path.size());
    const bool attention = T > 0 && !nodes[size_t(path.back())].crossAttention.empty();
    const bool norms = T > 0 && !nodes[size_t(path.back())].selfValueNorms.empty();
    int64_t L = 0, H = 0, S = 0;
    if (attention) {
        const Tensor& last = nodes[size_t(path.back())].crossAttention; // [L, H, S]
        L = last.dim(0), H = last.dim(1), S = last.dim(2);
        t.decoderAttention = Tensor({L, H, T, T}); // causal zeros stay 0
        t.crossAttention = Tensor({L, H, T, S});
        if (norms) t.decoderValueNorms = Tensor({L, H, T});
    }
    for (int64_t q = 0; q < T; ++q) {
        const BeamNode& n = nodes[size_t(path[size_t(q)])];
        t.targetIds.push_back(n.token);
        t.targetTokens.push_back(tokenizer ? tokenizer->idToPiece(n.token) : std::string());
        t.tokenLogprobs.push_back(n.logprob);
        t.candidates.push_back(n.candidates);
        if (!attention) continue;
        for (int64_t l = 0; l < L; ++l)
            for (int64_t h = 0; h < H; ++h) {
                const float* self = n.selfAttention.data() + (l * H + h) * (q + 1); // [depth = q + 1]
                std::copy(self, self + q + 1, &t.decoderAttention.slice2d({l, h})(q, 0));
                const float* cross = n.crossAttention.data() + (l * H + h) * S; // [S]
                std::copy(cross, cross + S, &t.crossAttention.slice2d({l, h})(q, 0));
                if (norms) t.decoderValueNorms.slice2d({l})(h, q) = n.selfValueNorms.data()[l * H + h];
            }
    }
}

std::shared_ptr<const TranslationTrace> DecodeSession::trace(std::optional<int> node) const {
    const int last = node.value_or(bestNode());
    const std::vector<int> path = pathTo(last);
    auto t = std::make_shared<TranslationTrace>();
    t->source = m_sourceText;
    t->sourceTokens = m_source.pieces;
    t->sourceIds = m_source.ids;
    t->finished = m_done && last == bestNode();
    t->score = last > 0 ? (m_nodes[last].finished || m_numBeams == 1 ? m_nodes[last].finalScore
                                                                     : m_nodes[last].score)
                        : 0.0f;
    t->encoderAttention = m_encoder.selfAttention;
    t->encoderValueNorms = m_encoder.selfValueNorms;
    t->crossValueNorms = m_encoder.crossValueNorms;
    fillHypothesis(*t, m_nodes, path, m_tokenizer.get());
    if (m_options.captureAttention && path.empty()) { // before the first step: no rows yet
        const int L = m_model->config().decoderLayers, H = m_model->config().decoderHeads;
        t->decoderAttention = Tensor({L, H, 0, 0});
        t->crossAttention = Tensor({L, H, 0, m_encoder.length});
    }
    if (m_tokenizer) t->translation = m_tokenizer->decode(t->targetIds);
    return t;
}

} // namespace attnlens
