#include "core/analysis/kv_policy.h"

#include "core/util/error.h"

#include <algorithm>
#include <charconv>
#include <numeric>

namespace attnlens {

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(separator, start);
        parts.push_back(
            text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

int number(std::string_view text, std::string_view policy) {
    int value = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 1000000)
        throw Error("KV policy '" + std::string(policy) + "': '" + std::string(text) +
                    "' is not a count (a whole number from 0)");
    return value;
}

std::pair<int, int> pair(std::string_view args, std::string_view policy, const char* form) {
    const auto parts = split(args, ',');
    if (parts.size() != 2) throw Error("KV policy '" + std::string(policy) + "': expected " + form);
    return {number(parts[0], policy), number(parts[1], policy)};
}

void checkShapes(const Tensor& prompt, const std::vector<Tensor>& steps) {
    if (prompt.rank() != 4 || prompt.dim(2) != prompt.dim(3))
        throw Error("KV policy: the prompt's attention is not [L, H, P, P]");
    const int64_t p = prompt.dim(2);
    for (size_t s = 0; s < steps.size(); ++s)
        if (steps[s].rank() != 4 || steps[s].dim(2) != 1 || steps[s].dim(3) != p + int64_t(s) + 1 ||
            steps[s].dim(0) != prompt.dim(0) || steps[s].dim(1) != prompt.dim(1))
            throw Error("KV policy: step " + std::to_string(s) + "'s attention is not [L, H, 1, " +
                        std::to_string(p + int64_t(s) + 1) + "]");
}

} // namespace

KvPolicy parseKvPolicy(std::string_view text) {
    const size_t colon = text.find(':');
    const std::string_view name = text.substr(0, colon);
    const std::string_view args =
        colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
    KvPolicy p;
    if (name == "full" && colon == std::string_view::npos) return p;
    if (name == "streaming") {
        p.kind = KvPolicy::Kind::Streaming;
        std::tie(p.sinks, p.window) = pair(args, text, "streaming:SINKS,WINDOW");
        if (p.window < 1) throw Error("KV policy '" + std::string(text) + "': the window keeps at least 1");
    } else if (name == "h2o") {
        p.kind = KvPolicy::Kind::HeavyHitters;
        std::tie(p.budget, p.recent) = pair(args, text, "h2o:BUDGET,RECENT");
        if (p.recent < 1 || p.recent > p.budget)
            throw Error("KV policy '" + std::string(text) + "': RECENT must be 1 … BUDGET");
    } else if (name == "snapkv") {
        p.kind = KvPolicy::Kind::SnapKv;
        std::tie(p.budget, p.window) = pair(args, text, "snapkv:BUDGET,WINDOW");
        if (p.window < 1 || p.window > p.budget)
            throw Error("KV policy '" + std::string(text) + "': WINDOW must be 1 … BUDGET");
    } else if (name == "keep" && !args.empty()) {
        p.kind = KvPolicy::Kind::Keep;
        for (std::string_view item : split(args, ',')) {
            const size_t dash = item.find('-');
            const int a = number(item.substr(0, dash), text);
            const int b = dash == std::string_view::npos ? a : number(item.substr(dash + 1), text);
            if (b < a)
                throw Error("KV policy '" + std::string(text) + "': range " + std::string(item) +
                            " runs backwards");
            for (int j = a; j <= b; ++j)
                p.keep.push_back(j);
        }
    } else {
        throw Error("KV policy '" + std::string(text) +
                    "': expected full, streaming:SINKS,WINDOW, h2o:BUDGET,RECENT, snapkv:BUDGET,WINDOW or "
                    "keep:POSITIONS");
    }
    return p;
}

std::string kvPolicyName(const KvPolicy& p) {
    switch (p.kind) {
    case KvPolicy::Kind::Full:
        return "full";
    case KvPolicy::Kind::Streaming:
        return "streaming:" + std::to_string(p.sinks) + "," + std::to_string(p.window);
    case KvPolicy::Kind::HeavyHitters:
        return "h2o:" + std::to_string(p.budget) + "," + std::to_string(p.recent);
    case KvPolicy::Kind::SnapKv:
        return "snapkv:" + std::to_string(p.budget) + "," + std::to_string(p.window);
    case KvPolicy::Kind::Keep: {
        std::string s = "keep:";
        for (size_t i = 0; i < p.keep.size(); ++i)
            s += (i ? "," : "") + std::to_string(p.keep[i]);
        return s;
    }
    }
    return "full";
}

int KvKeptMap::keptCount(int step) const {
    const auto& row = rows[size_t(step)];
    return static_cast<int>(std::count(row.begin(), row.end(), 1));
}

RowMatrix summedAttention(const AttentionStore& prompt) {
    if (prompt.rows() != prompt.cols()) throw Error("KV policy: the prompt's attention is not [L, H, P, P]");
    RowMatrix sum = RowMatrix::Zero(prompt.rows(), prompt.cols());
    RowMatrix head(prompt.rows(), prompt.cols());
    for (int l = 0; l < int(prompt.layers()); ++l)
        for (int h = 0; h < int(prompt.heads()); ++h) {
            prompt.headInto(l, h, head.data());
            sum += head;
        }
    return sum;
}

std::vector<float> summedStepAttention(const Tensor& step) {
    if (step.rank() != 4 || step.dim(2) != 1)
        throw Error("KV policy: a step's attention is not [L, H, 1, m]");
    const int64_t m = step.dim(3), rows = step.dim(0) * step.dim(1);
    std::vector<float> sum(size_t(m), 0.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < m; ++j)
            sum[size_t(j)] += step.data()[r * m + j];
    return sum;
}

KvPolicyTracker::KvPolicyTracker(KvPolicy policy, RowMatrix summedPrompt) : m_policy(std::move(policy)) {
    if (summedPrompt.rows() != summedPrompt.cols())
        throw Error("KV policy: the prompt's summed attention is not [P, P]");
    m_prompt = int(summedPrompt.rows());
    const int p = m_prompt;
    if (m_policy.kind == KvPolicy::Kind::HeavyHitters) { // every prompt query's attention, received
        m_received.assign(size_t(p), 0.0);
        for (int j = 0; j < p; ++j)
            m_received[size_t(j)] = summedPrompt.col(j).cast<double>().sum();
        m_alive.assign(size_t(p), 1);
    } else if (m_policy.kind == KvPolicy::Kind::Keep) { // the prompt positions asked for
        m_alive.assign(size_t(p), 0);
        for (int j : m_policy.keep)
            if (j >= 0 && j < p) m_alive[size_t(j)] = 1;
    } else if (m_policy.kind == KvPolicy::Kind::SnapKv) { // the last `window` queries vote once
        const int window = std::min(m_policy.window, p);
        std::vector<double> votes(size_t(p), 0.0);
        for (int j = 0; j < p; ++j)
            votes[size_t(j)] = summedPrompt.col(j).tail(window).cast<double>().sum();
        std::vector<int> earlier(size_t(p - window));
        std::iota(earlier.begin(), earlier.end(), 0);
        std::stable_sort(earlier.begin(), earlier.end(),
                         [&](int a, int b) { return votes[size_t(a)] > votes[size_t(b)]; });
        m_alive.assign(size_t(p), 0);
        const int chosen = std::clamp(m_policy.budget - window, 0, p - window);
        for (int i = 0; i < chosen; ++i)
            m_alive[size_t(earlier[size_t(i)])] = 1;
        std::fill(m_alive.begin() + (p - window), m_alive.end(), 1);
    }
    decide();
}

void KvPolicyTracker::decide() {
    const int p = m_prompt, current = p + m_step;
    m_kept.assign(size_t(current + 1), 1);
    switch (m_policy.kind) {
    case KvPolicy::Kind::Full:
        break;
    case KvPolicy::Kind::Streaming:
        for (int j = 0; j <= current; ++j)
            m_kept[size_t(j)] = j < m_policy.sinks || j > current - m_policy.window;
        break;
    case KvPolicy::Kind::Keep:
    case KvPolicy::Kind::SnapKv:
        std::copy(m_alive.begin(), m_alive.end(), m_kept.begin()); // the generated tokens stay
        break;
    case KvPolicy::Kind::HeavyHitters: {
        m_alive.resize(size_t(current + 1), 1);
        m_received.resize(size_t(current + 1), 0.0);
        int count = static_cast<int>(std::count(m_alive.begin(), m_alive.end(), 1));
        while (count > std::max(m_policy.budget, 1)) {
            int victim = -1; // the lightest outside the recent (the current is always recent)
            for (int j = 0; j <= current - std::max(m_policy.recent, 1); ++j)
                if (m_alive[size_t(j)] && (victim < 0 || m_received[size_t(j)] < m_received[size_t(victim)]))
                    victim = j;
            if (victim < 0) break; // all that is left is recent
            m_alive[size_t(victim)] = 0;
            --count;
        }
        m_kept = m_alive;
        break;
    }
    }
}

void KvPolicyTracker::advance(std::span<const float> summed) {
    const size_t m = size_t(m_prompt + m_step + 1);
    if (!summed.empty() && summed.size() != m)
        throw Error("KV policy: step " + std::to_string(m_step) + " gave " + std::to_string(summed.size()) +
                    " keys attention, it sees " + std::to_string(m));
    if (m_policy.kind == KvPolicy::Kind::HeavyHitters && summed.empty())
        throw Error("KV policy: H2O reads the attention every step gave");
    if (m_policy.kind == KvPolicy::Kind::HeavyHitters)
        for (size_t j = 0; j < m; ++j)
            m_received[j] += summed[j];
    ++m_step;
    decide();
}

KvKeptMap kvKeptMap(const KvPolicy& policy, const RowMatrix& summedPrompt,
                    const std::vector<std::vector<float>>& summedSteps) {
    KvPolicyTracker tracker(policy, summedPrompt);
    KvKeptMap map;
    map.promptLength = tracker.promptLength();
    map.steps = static_cast<int>(summedSteps.size());
    for (const auto& step : summedSteps) {
        map.rows.push_back(tracker.kept());
        tracker.advance(step);
    }
    return map;
}

KvKeptMap kvKeptMap(const KvPolicy& policy, const Tensor& prompt, const std::vector<Tensor>& steps) {
    checkShapes(prompt, steps);
    std::vector<std::vector<float>> summed;
    for (const Tensor& step : steps)
        summed.push_back(summedStepAttention(step));
    return kvKeptMap(policy, summedAttention(AttentionStore(prompt)), summed);
}

} // namespace attnlens
