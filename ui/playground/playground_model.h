#pragma once
// PlaygroundModel: the state of the attention playground (Q, K, V, W_O, tokens, heads, mask) and its
// result, recomputed with attnlens::multiHeadAttention(recordStages = true) on every change, then the
// output projection: MultiHead(Q, K, V) = Concat(head_0, …, head_{h−1}) · W_O.
// The page and its views only read it and call its setters; changed() tells them to refresh.
//
// Inference here is a few microseconds (n ≤ 16, d_model ≤ 32), so it runs synchronously on the GUI
// thread; nothing is shared with other threads.
//
// Conventions: Q, K are [n, d_model] and V is [n, d_v] (one row per token; d_v may differ from d_model);
// W_O is [d_v, d_v] (the concatenated head outputs in, the layer's output out);
// masks are [n, n] with 1 = keep and 0 = masked (set to −1e9 before the softmax); stages are per head,
// [n, n] (output: [n, d_v / h]).

#include "core/ops/attention.h"
#include "core/tensor/tensor.h"

#include <QObject>
#include <QStringList>

namespace attnlens::ui {

class PlaygroundModel : public QObject {
    Q_OBJECT
public:
    enum class Input { Query, Key, Value, OutputProjection };
    enum class Stage { Scores, Scaled, Masked, Weights, Output };
    enum class MaskMode { None, Causal, Padding, Custom };
    enum class Preset { WorkedExample, Random, Identity, Edited };

    static constexpr int kMaxLength = 16;
    static constexpr int kMaxDModel = 32;

    // Starts with the worked example (4 tokens "Wie geht es dir", d_model 4, one head, no mask).
    explicit PlaygroundModel(QObject* parent = nullptr);

    int sequenceLength() const { return m_n; }
    int dModel() const { return m_dModel; }
    int heads() const { return m_heads; }
    int dK() const { return dModel() / m_heads; }
    int dValue() const { return m_dValue; }
    int dV() const { return m_dValue / m_heads; } // value columns per head
    // Columns of an input: d_model for Q and K, d_v for V and W_O.
    int inputWidth(Input which) const {
        return which == Input::Value || which == Input::OutputProjection ? m_dValue : m_dModel;
    }
    // Rows of an input: n (one per token) for Q, K and V; d_v for W_O.
    int inputRows(Input which) const { return which == Input::OutputProjection ? m_dValue : m_n; }
    // Head counts allowed: the common divisors of d_model and d_v (dValue < 0: d_model's), ascending.
    static QList<int> validHeadCounts(int dModel, int dValue = -1);

    QStringList tokens() const { return m_tokenStore.mid(0, m_n); }
    // [inputRows(which), inputWidth(which)] (a copy of the visible part of the store).
    RowMatrix input(Input which) const;
    float inputValue(Input which, int row, int col) const { return store(which)(row, col); }

    MaskMode maskMode() const { return m_maskMode; }
    int paddingCount() const { return m_padding; }
    // The mask in effect, [n, n], 1 = keep, 0 = masked (all ones for MaskMode::None).
    RowMatrix effectiveMask() const;
    // Query rows whose keys are all masked (their weights come out uniform, as in PyTorch).
    QList<int> fullyMaskedRows() const;

    Preset preset() const { return m_preset; }
    int seed() const { return m_seed; }

    // --- results (valid after construction and every change) --------------------------------
    const AttentionResult& result() const { return m_result; }
    // One head's stage: [n, n] for Scores…Weights, [n, d_v / h] for Output.
    RowMatrix stage(Stage stage, int head) const;
    // What each key sends through the head, ‖v_{j,h} · W_O,h‖ (its d_v / h columns of V times its d_v / h
    // rows of W_O): [n]; and the weights value-weighted with them (Kobayashi et al., 2020): A_ij·n_j / Σ_k
    // A_ik·n_k.
    Eigen::VectorXf valueNorms(int head) const;
    RowMatrix valueWeightedWeights(int head) const;
    // The concatenated output, [n, d_v].
    RowMatrix output() const;
    // The layer's result: output() · W_O, [n, d_v].
    const RowMatrix& projected() const { return m_projected; }

    // --- focus: the head, query row and key column the page explains -----------------------
    int selectedHead() const { return m_head; }
    int focusQuery() const { return m_focusQuery; }
    int focusKey() const { return m_focusKey; }

public slots:
    void applyWorkedExample();
    // Q, K, V and W_O filled with N(0, 1) values rounded to one decimal, reproducible for a seed.
    void applyRandom(int seed);
    // Q = K = V = the n × d_model identity (each token attends most to itself); W_O the identity.
    void applyIdentity();

    // Resizing shows more or less of a kMaxLength × kMaxDModel store that every preset fills
    // completely, so shrinking and growing again (e.g. while typing tokens) gives back the same
    // values and tokens; unnamed tokens are t<i>. The head count falls back to the largest
    // divisor ≤ the current one.
    void setSequenceLength(int n);
    void setDModel(int dModel);
    // The width of V (and of the output); the heads divide both widths. While d_v equals d_model (as
    // in the worked example) it follows d_model; setting a different one unties them.
    void setDValue(int dValue);
    // Returns false (and changes nothing) unless heads divides d_model and d_v.
    bool setHeads(int heads);
    void setInputValue(Input which, int row, int col, float value);
    // Sets the first tokens (extra ones beyond sequenceLength() are dropped; blank ones become t<i>).
    void setTokens(const QStringList& tokens);

    void setMaskMode(MaskMode mode);
    // Padding mode masks the last `count` keys (1 ≤ count ≤ n − 1).
    void setPaddingCount(int count);
    // Toggles one cell of the custom mask; switches to MaskMode::Custom first, starting from the
    // mask in effect, so a click on the causal mask edits a copy of it.
    void toggleMaskCell(int query, int key);
    void setCustomMask(const RowMatrix& keep);

    void setSelectedHead(int head);
    void setFocus(int query, int key);

signals:
    // Any input changed and the result was recomputed.
    void changed();
    // Only the selected head or the focus changed (no recomputation).
    void focusChanged();

private:
    void recompute();
    void resize(int n, int width, int valueWidth);
    float fillValue(Input which, int row, int col) const;
    RowMatrix& store(Input which);
    const RowMatrix& store(Input which) const;

    // Stores [kMaxLength, kMaxDModel]; the inputs are their top-left [n, d_model] corners. W_O's store is
    // [kMaxDModel, kMaxDModel], its top-left [d_v, d_v] in use.
    RowMatrix m_q, m_k, m_v, m_wo;
    RowMatrix m_projected;    // [n, d_v]
    RowMatrix m_customMask;   // [kMaxLength, kMaxLength], 1 = keep
    QStringList m_tokenStore; // kMaxLength tokens
    int m_n = 4, m_dModel = 4, m_dValue = 4;
    bool m_valueTied = true; // d_v follows d_model
    int m_heads = 1;
    MaskMode m_maskMode = MaskMode::None;
    int m_padding = 1;
    Preset m_preset = Preset::WorkedExample;
    int m_seed = 1;
    int m_head = 0, m_focusQuery = 1, m_focusKey = 2;
    AttentionResult m_result;
};

} // namespace attnlens::ui
