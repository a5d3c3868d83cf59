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

// Σ over layers and heads of query row q's attention to keys [0, keys) of a tensor [L, H, n, m].
void addRow(const Tensor& t, int64_t q, std::vector<double>& into) {
    const int64_t layers = t.dim(0), heads = t.dim(1), n = t.dim(2), m = t.dim(3);
    for (int64_t l = 0; l < layers; ++l)
        for (int64_t h = 0; h < heads; ++h) {
            const float* row = t.data() + ((l * heads + h) * n + q) * m;
            for (int64_t j = 0; j < m && j < int64_t(into.size()); ++j)
                into[size_t(j)] += row[j];
        }
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

// H2O: a budget, the recent always, the rest by accumulated attention; evicted never return.
void heavyHitters(const KvPolicy& policy, const Tensor& prompt, const std::vector<Tensor>& steps,
                  KvKeptMap& map) {
    const int p = map.promptLength;
    std::vector<double> received(size_t(p + map.steps), 0.0);
    for (int q = 0; q < p; ++q)
        addRow(prompt, q, received);
    std::vector<char> alive(size_t(p + map.steps), 0);
    std::fill(alive.begin(), alive.begin() + p, 1);
    for (int s = 0; s < map.steps; ++s) {
        const int current = p + s;
        alive[size_t(current)] = 1;
        int count = static_cast<int>(std::count(alive.begin(), alive.begin() + current + 1, 1));
        while (count > std::max(policy.budget, 1)) {
            int victim = -1;
            for (int j = 0; j <= current - std::max(policy.recent, 1);
                 ++j) // the recent stay (the current too)
                if (alive[size_t(j)] && (victim < 0 || received[size_t(j)] < received[size_t(victim)]))
                    victim = j;
            if (victim < 0) break; // all that is left is recent
            alive[size_t(victim)] = 0;
            --count;
        }
        map.rows[size_t(s)].assign(alive.begin(), alive.begin() + current + 1);
        addRow(steps[size_t(s)], 0, received);
    }
}

// SnapKV: the last `window` prompt queries vote once for the prompt entries before them.
void snapKv(const KvPolicy& policy, const Tensor& prompt, KvKeptMap& map) {
    const int p = map.promptLength, window = std::min(policy.window, p);
    std::vector<double> votes(size_t(p), 0.0);
    for (int q = p - window; q < p; ++q)
        addRow(prompt, q, votes);
    std::vector<int> earlier(size_t(p - window));
    std::iota(earlier.begin(), earlier.end(), 0);
    const int chosen = std::clamp(policy.budget - window, 0, p - window);
    std::stable_sort(earlier.begin(), earlier.end(),
                     [&](int a, int b) { return votes[size_t(a)] > votes[size_t(b)]; });
    std::vector<char> prefix(size_t(p), 0);
    for (int i = 0; i < chosen; ++i)
        prefix[size_t(earlier[size_t(i)])] = 1;
    std::fill(prefix.begin() + (p - window), prefix.end(), 1);
    for (int s = 0; s < map.steps; ++s) {
        map.rows[size_t(s)] = prefix;
        map.rows[size_t(s)].resize(size_t(p + s + 1), 1); // generated tokens stay
    }
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

KvKeptMap kvKeptMap(const KvPolicy& policy, const Tensor& prompt, const std::vector<Tensor>& steps) {
    checkShapes(prompt, steps);
    KvKeptMap map;
    map.promptLength = static_cast<int>(prompt.dim(2));
    map.steps = static_cast<int>(steps.size());
    map.rows.resize(steps.size());
    const int p = map.promptLength;
    for (int s = 0; s < map.steps; ++s)
        map.rows[size_t(s)].assign(size_t(p + s + 1), 1);
    switch (policy.kind) {
    case KvPolicy::Kind::Full:
        break;
    case KvPolicy::Kind::Streaming:
        for (int s = 0; s < map.steps; ++s)
            for (int j = 0; j <= p + s; ++j)
                map.rows[size_t(s)][size_t(j)] = j < policy.sinks || j > p + s - policy.window;
        break;
    case KvPolicy::Kind::Keep:
        for (int s = 0; s < map.steps; ++s)
            for (int j = 0; j < p; ++j)
                map.rows[size_t(s)][size_t(j)] =
                    std::find(policy.keep.begin(), policy.keep.end(), j) != policy.keep.end();
        break;
    case KvPolicy::Kind::HeavyHitters:
        heavyHitters(policy, prompt, steps, map);
        break;
    case KvPolicy::Kind::SnapKv:
        snapKv(policy, prompt, map);
        break;
    }
    return map;
}

} // namespace attnlens
