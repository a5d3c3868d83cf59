#pragma once
// TranslationDocument: the state every view of the Translate page reads. It wraps the loaded Marian
// model and the decode results as immutable shared snapshots (built on the worker thread, replaced
// whole on the GUI thread) plus the selection all views share: attention kind, layer, head or
// aggregate, selected / hovered token, word-level and hide-special toggles, selected beam node.
//
// Token convention (one for every view):
//   Source tokens  s = 0 … S-1: the encoder pieces, </s> last.
//   Target tokens  t = 0 … T-1: the generated pieces. Row t of the decoder-self and cross matrices is
//                  the decoder step that PRODUCED target token t (its query is the previous token).
//   Decoder-self keys are the decoder inputs: key 0 is the start token, key j > 0 is target j - 1.
//
// Threading: GUI thread only. Snapshots are immutable and may be built on any thread.

#include "core/analysis/attention_maps.h"
#include "core/analysis/word_merge.h"
#include "core/decode/decode_session.h"
#include "core/decode/trace_attention.h"
#include "core/models/marian_folder.h"

#include <QObject>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace attnlens::ui {

// One decode state as the page shows it (a step of the session).
struct TranslationSnapshot {
    std::shared_ptr<const TranslationTrace> best; // best hypothesis at this step
    std::vector<BeamNode> nodes;                  // the search tree (greedy: a chain); tensors shared
    std::vector<int> liveBeams;                   // node ids, best first
    std::vector<int> finishedHypotheses;
    int bestNode = 0;
    int step = 0;
    int maxNewTokens = 0;
    int numBeams = 1;
    bool finished = false;
    std::vector<TokenCandidate> candidates; // top-k of the last step on the best hypothesis
    MarianEmbeddingParts sourceEmbedding;   // [S, D] each
    MarianEmbeddingParts targetEmbedding;   // [T, D] each: decoder inputs (start + targets[:-1])
    QStringList targetInputTokens;          // decoder input pieces (start first)
};

// Builds a snapshot of the session's current state (call on the thread that drives the session).
std::shared_ptr<const TranslationSnapshot>
makeSnapshot(const DecodeSession& session, const MarianModel& model, const MarianTokenizer& tokenizer);

// The hypothesis ending at `node` assembled from the tree alone (no session needed): decoder rows
// from each path node's captured attention, causal zeros above the diagonal.
std::shared_ptr<const TranslationTrace> traceForNode(const TranslationSnapshot& snapshot, int node,
                                                     const MarianTokenizer& tokenizer);

QString attentionKindName(AttentionKind kind);
enum class TokenSide { Source, Target };

struct TokenRef {
    TokenSide side = TokenSide::Source;
    int index = -1; // piece index on that side; -1 = none
    bool isValid() const { return index >= 0; }
    bool operator==(const TokenRef&) const = default;
};

// A matrix ready to draw: the selection applied (kind, layer, head/aggregate, hidden specials, words).
struct AttentionMatrix {
    RowMatrix values; // [rows, cols]; rows are probabilities (renormalised if hidden)
    QStringList rowLabels, columnLabels;
    TokenSide rowSide = TokenSide::Source, columnSide = TokenSide::Source;
    std::vector<int> rowFirstPiece;       // [rows] first piece (token index on rowSide) of each row
    std::vector<int> columnFirstPiece;    // [cols] piece index on columnSide; decoder-self keys: input index
    std::vector<int> rowOfPiece;          // [pieces on rowSide] displayed row or -1 (hidden)
    std::vector<int> columnOfPiece;       // [pieces on columnSide] displayed column or -1
    bool columnsAreDecoderInputs = false; // decoder-self: column j ↔ target token j - 1
    bool empty() const { return values.size() == 0; }
    // The displayed row / column of a token, or -1 when the token is not on that axis.
    int rowOf(const TokenRef& token) const;
    int columnOf(const TokenRef& token) const;
    TokenRef tokenOfRow(int row) const;
    TokenRef tokenOfColumn(int col) const;
};

class TranslationDocument : public QObject {
    Q_OBJECT
public:
    explicit TranslationDocument(QObject* parent = nullptr);

    // --- model and results ------------------------------------------------------------------
    void setModel(MarianFolder model, const QString& dir);
    const MarianFolder& model() const { return m_model; }
    bool hasModel() const { return m_model.model != nullptr; }
    QString modelDir() const { return m_modelDir; }
    QString modelDescription() const;
    void setSnapshot(std::shared_ptr<const TranslationSnapshot> snapshot);
    void clearSnapshot();
    const std::shared_ptr<const TranslationSnapshot>& snapshot() const { return m_snapshot; }
    // The best hypothesis of the last finished step of the same search (same source pieces, same beam
    // width), kept while stepping back; empty until the search has finished once.
    const std::vector<std::string>& finalTargetTokens() const { return m_finalTokens; }
    // The hypothesis the views show: the selected beam node's, else the best one. Null before a run.
    std::shared_ptr<const TranslationTrace> trace() const { return m_trace; }
    int layerCount(AttentionKind kind) const;
    int headCount(AttentionKind kind) const;

    // --- selection --------------------------------------------------------------------------
    AttentionKind kind() const { return m_kind; }
    const AttentionSelection& selection() const { return m_selection; }
    int layer() const { return m_selection.layer; }
    int head() const { return m_selection.heads.head; } // -1: aggregate over heads with fusion()
    HeadFusion fusion() const { return m_selection.heads.fusion; }
    TokenRef selectedToken() const { return m_selected; }
    TokenRef hoveredToken() const { return m_hovered; }
    // The hovered token if any, else the selected one: what views highlight.
    TokenRef focusToken() const { return m_hovered.isValid() ? m_hovered : m_selected; }
    bool wordLevel() const { return m_wordLevel; }
    bool hideSpecial() const { return m_hideSpecial; }
    int selectedBeamNode() const { return m_beamNode; } // -1: best hypothesis

    void setKind(AttentionKind kind);
    void setLayer(int layer);
    void setHead(int head);
    void setFusion(HeadFusion fusion);
    void setSelectedToken(TokenRef token);
    void setHoveredToken(TokenRef token);
    void setWordLevel(bool on);
    void setHideSpecial(bool on);
    void setSelectedBeamNode(int node);

    // Encoder self-attention through several layers (issue 21, M6): the matrix of the chosen layer alone, the
    // rollout of layers 0…layer, or the attention flow through them (heads fused with fusion()). Other kinds
    // always show one layer. Flow is computed by the page on its worker (TranslatePage::requestFlow) and
    // stored with setFlowMatrix(); until then the matrix is empty and flowPending() is true.
    enum class Through { Layer, Rollout, Flow };
    Through through() const { return m_through; }
    void setThrough(Through through);
    bool showsThrough() const { return m_kind == AttentionKind::EncoderSelf && m_through != Through::Layer; }
    struct FlowKey {
        const void* trace = nullptr;
        int layer = -1;
        HeadFusion fusion = HeadFusion::Mean;
        bool operator==(const FlowKey&) const = default;
    };
    // trace: the encoder attention's storage (the same for every step of one translation).
    FlowKey flowKey() const { return {encoderStorage(), m_selection.layer, m_selection.heads.fusion}; }
    bool flowPending() const; // the current selection shows flow and its matrix is not here yet
    void setFlowMatrix(FlowKey key, RowMatrix flow); // [S, S]: row q = attentionFlow(…, q, …)

    // Value-weighted maps (issue 42): every one-layer matrix, the newest cross row and the model grid show
    // α_ij·‖v_j·W_O,hᵀ‖ renormalised per row (each head weighted before the fusion); rollout and flow stay on
    // the weights. Off while the trace carries no norms (canValueWeight()).
    bool valueWeighted() const { return m_valueWeighted && canValueWeight(); }
    bool canValueWeight() const { return m_trace && !m_trace->crossValueNorms.empty(); }
    bool valueWeightedSwitch() const { return m_valueWeighted; } // on even while nothing is shown
    void setValueWeighted(bool on);

    // --- derived matrices -------------------------------------------------------------------
    // The raw tensor of a kind for the shown hypothesis: [L, H, Q, K] (empty when none yet).
    Tensor attentionTensor(AttentionKind kind) const;
    // What the one-layer views draw: attentionTensor(), value-weighted when valueWeighted() (made once per
    // trace and kind).
    Tensor shownTensor(AttentionKind kind) const;
    QStringList tokens(TokenSide side) const; // pieces
    // head >= 0 one head, -1 fused with fusion(). Hiding and word merge follow the toggles.
    AttentionMatrix matrix(AttentionKind kind, int layer, int head) const;
    AttentionMatrix currentMatrix() const {
        return matrix(m_kind, m_selection.layer, m_selection.heads.head);
    }
    // Cross-attention of the newest target token over the source at `layer`: [H + 1, S'] (the heads,
    // then their mean), following the toggles; empty before the first step.
    AttentionMatrix newestCrossAttention(int layer) const;
    // How strongly each token on `side` relates to focusToken() under the current matrix (its row if
    // the focus is a query, its column otherwise); empty when the focus is not on the matrix.
    std::vector<float> focusWeights(TokenSide side) const;

signals:
    void modelChanged();
    void snapshotChanged();  // new results (step, translate, beam node)
    void selectionChanged(); // kind / layer / head / fusion / toggles / selected token
    void hoverChanged();

private:
    const void* encoderStorage() const {
        return m_trace ? traceAttention(*m_trace, AttentionKind::EncoderSelf).data() : nullptr;
    }
    void updateTrace();
    void clampSelection();

    MarianFolder m_model;
    QString m_modelDir;
    std::shared_ptr<const TranslationSnapshot> m_snapshot;
    std::shared_ptr<const TranslationTrace> m_trace;
    std::vector<std::string> m_finalTokens, m_finalSource;
    int m_finalBeams = 0;
    AttentionKind m_kind = AttentionKind::Cross;
    AttentionSelection m_selection; // layer, head, fusion (clampLayer / clampHead)
    Through m_through = Through::Layer;
    // The keys name the encoder attention's storage; the trace holding it is kept with each cached matrix so
    // that the address cannot be reused by another translation's tensor while the cache refers to it.
    FlowKey m_flowKey;
    RowMatrix m_flow;
    std::shared_ptr<const TranslationTrace> m_flowTrace;
    // The last rollout computed (every view asks for the current matrix on each change; for long inputs the
    // L matrix products are worth keeping).
    mutable FlowKey m_rolloutKey;
    mutable RowMatrix m_rollout;
    mutable std::shared_ptr<const TranslationTrace> m_rolloutTrace;
    // shownTensor()'s value-weighted tensors of m_weightedTrace, one per kind (empty: not made yet)
    mutable std::shared_ptr<const TranslationTrace> m_weightedTrace;
    mutable Tensor m_weighted[3];
    TokenRef m_selected, m_hovered;
    bool m_valueWeighted = false;
    bool m_wordLevel = false;
    bool m_hideSpecial = false;
    int m_beamNode = -1;
};

} // namespace attnlens::ui
