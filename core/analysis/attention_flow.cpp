#include "core/analysis/attention_flow.h"

#include "core/util/error.h"

#include <queue>

#include <algorithm>
#include <limits>
#include <string>

namespace attnlens {

namespace {

constexpr double kEps = 1e-12;

// Dinic's maximum flow on a small dense graph, capacities in double.
class FlowGraph {
public:
    explicit FlowGraph(int nodes) : m_adj(static_cast<size_t>(nodes)) {}

    void addEdge(int from, int to, double capacity) {
        m_adj[from].push_back({to, static_cast<int>(m_adj[to].size()), capacity});
        m_adj[to].push_back({from, static_cast<int>(m_adj[from].size()) - 1, 0.0});
    }

    double maxFlow(int source, int sink) {
        double total = 0;
        while (buildLevels(source, sink)) {
            m_next.assign(m_adj.size(), 0);
            while (const double pushed = push(source, sink, std::numeric_limits<double>::infinity()))
                total += pushed;
        }
        return total;
    }

private:
    struct Edge {
        int to;
        int reverse;
        double capacity;
    };

    bool buildLevels(int source, int sink) {
        m_level.assign(m_adj.size(), -1);
        std::queue<int> queue;
        m_level[source] = 0;
        queue.push(source);
        while (!queue.empty()) {
            const int u = queue.front();
            queue.pop();
            for (const Edge& e : m_adj[u])
                if (e.capacity > kEps && m_level[e.to] < 0) {
                    m_level[e.to] = m_level[u] + 1;
                    queue.push(e.to);
                }
        }
        return m_level[sink] >= 0;
    }

    double push(int u, int sink, double limit) {
        if (u == sink) return limit;
        for (size_t& i = m_next[u]; i < m_adj[u].size(); ++i) {
            Edge& e = m_adj[u][i];
            if (e.capacity <= kEps || m_level[e.to] != m_level[u] + 1) continue;
            if (const double pushed = push(e.to, sink, std::min(limit, e.capacity)); pushed > kEps) {
                e.capacity -= pushed;
                m_adj[e.to][e.reverse].capacity += pushed;
                return pushed;
            }
        }
        return 0;
    }

    std::vector<std::vector<Edge>> m_adj;
    std::vector<int> m_level;
    std::vector<size_t> m_next;
};

} // namespace

int64_t attentionFlowCost(int layers, int tokens) {
    const int64_t t = tokens;
    return static_cast<int64_t>(layers) * t * t * t;
}

std::vector<float> attentionFlow(const Tensor& attentions, int query, const FlowOptions& options,
                                 const Callbacks& callbacks) {
    if (attentions.rank() != 4 || attentions.dim(2) != attentions.dim(3))
        throw Error("attention flow: attentions must be [layers, heads, tokens, tokens]");
    const int L = static_cast<int>(attentions.dim(0));
    const int T = static_cast<int>(attentions.dim(2));
    const int last = options.lastLayer < 0 ? L - 1 : options.lastLayer;
    const int first = options.firstLayer;
    if (first < 0 || last >= L || first > last)
        throw Error("attention flow: layers " + std::to_string(first) + ".." + std::to_string(last) +
                    " outside 0.." + std::to_string(L - 1));
    if (query < 0 || query >= T)
        throw Error("attention flow: query " + std::to_string(query) + " outside 0.." +
                    std::to_string(T - 1));

    // Boundaries b = 0 … n (n = layers used); node (b, i) = b·T + i. Layer first + b joins b + 1 → b.
    const int n = last - first + 1;
    FlowGraph graph((n + 1) * T);
    for (int b = 0; b < n; ++b) {
        const RowMatrix fused = layerAttention(attentions, first + b, HeadSelection{-1, options.fusion});
        RowMatrix a = fused + RowMatrix::Identity(T, T);
        a.array().colwise() /= a.rowwise().sum().array();
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                if (a(i, j) > 0) graph.addEdge((b + 1) * T + i, b * T + j, a(i, j));
    }
    std::vector<float> flow(static_cast<size_t>(T));
    for (int j = 0; j < T; ++j) {
        callbacks.checkCancel();
        FlowGraph g = graph; // fresh capacities for each input token
        flow[static_cast<size_t>(j)] = static_cast<float>(g.maxFlow(n * T + query, j));
        callbacks.report(static_cast<double>(j + 1) / T,
                         "attention flow, " + std::to_string(j + 1) + " of " + std::to_string(T) + " tokens");
    }
    return flow;
}

} // namespace attnlens
