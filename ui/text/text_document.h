#pragma once
// TextDocument: what the Text page shows — a BERT or GPT-2 folder, one run over the typed text (for GPT-2
// also the tokens generated after it, one attention row per new token, and the ten most likely next tokens at
// every step), the step looked at, the layer / head, and the display options. No inference here: runs are
// made on the page's worker (makeRun / extendRun are pure) and handed over with setRun().

#include "core/analysis/attention_captures.h"
#include "core/analysis/attention_maps.h"
#include "core/models/text_folder.h"
#include "core/models/text_generation.h"

#include <QObject>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

namespace attnlens::ui {

struct TextRun {
    std::vector<std::string> tokens; // prompt, then the generated tokens
    std::vector<std::string> texts;  // what each token stands for ("Ġworld" → " world")
    std::vector<int> ids;
    int promptLength = 0;
    // [L, H, P, P]: captured, or above the capture budget made on demand one head at a time (issue 40)
    std::shared_ptr<const AttentionStore> prompt;
    std::vector<Tensor> stepAttention; // generated token s: [L, H, 1, P + s + 1]
    // candidates[s]: the ten most likely tokens after the first P + s tokens (s = 0 … generated); GPT-2 only.
    std::vector<std::vector<TextCandidate>> candidates;
    // BERT with an LM head: the top 5 at each [MASK] (position, candidates).
    std::vector<std::pair<int, std::vector<TextCandidate>>> maskPredictions;
    HeadList offHeads; // the heads switched off in this run (transformers' head_mask = 0); empty: none
    // Per layer [H, tokens]: ‖v_j·W_O,hᵀ‖, what key j sends through head h (value-weighted maps,
    // core/analysis/value_weighting.h); empty where the family keeps none.
    std::vector<RowMatrix> valueNorms;
    RowMatrix lastLogits; // GPT-2: [1, V] after the last token (where generation continues)
    Sampling sampling; // how its tokens are chosen (greedy by default), kept for the tokens generated later
    int generated() const { return static_cast<int>(stepAttention.size()); }
};

// What a job on the page's worker may read of the page's KV cache: the cache of `run`, or nullptr when the
// cache holds another run (or none). Called on the worker only, where the cache lives (jobs run one at a
// time).
using CacheSource = std::function<const TextCache*(const std::shared_ptr<const TextRun>&)>;

class TextDocument : public QObject {
    Q_OBJECT
public:
    explicit TextDocument(QObject* parent = nullptr);

    // The run over `text` (pure; on the worker): every head captured; for GPT-2 the prompt through a fresh KV
    // cache in `cache` (kept for extendRun), for BERT the [MASK] predictions.
    // offHeads: heads switched off for this run and the tokens it generates later. chat: the text as one user
    // turn of the folder's chat template (TextFolder::encode).
    // captureBudget: above it (L · H · P · P floats) the prompt's attention is kept on demand.
    static std::shared_ptr<const TextRun> makeRun(const TextFolder& folder, const std::string& text,
                                                  TextCache* cache, const Callbacks& callbacks = {},
                                                  const HeadList& offHeads = {},
                                                  const Sampling& sampling = {}, bool chat = false,
                                                  int64_t captureBudget = kDefaultCaptureBudget);
    // `run` with `count` more tokens (chosen by run.sampling) through `cache` (pure; on the worker). Stops
    // after <|endoftext|> and at the model's last position.
    static std::shared_ptr<const TextRun> extendRun(const TextFolder& folder, const TextRun& run, int count,
                                                    TextCache& cache, const Callbacks& callbacks = {});

    void setModel(std::shared_ptr<const TextFolder> folder);
    const std::shared_ptr<const TextFolder>& model() const { return m_folder; }
    bool hasModel() const { return m_folder != nullptr; }
    QString modelDescription() const; // one line: folder, type, layers × heads (/ KV heads)
    QString modelDetails() const;     // the tooltip: that and grouped-query attention, sliding windows
    QString headTitle(int layer, int head) const; // "L1 H5", with grouped KV heads "L1 H5 · KV1"

    void setRun(std::shared_ptr<const TextRun> run); // shows its last step
    const std::shared_ptr<const TextRun>& run() const { return m_run; }
    // The run keeps its prompt's attention on demand (a long text; every view still shows every head).
    bool onDemand() const { return m_run && m_run->prompt && m_run->prompt->onDemand(); }
    // What runs are made with (RunControls::captureBudget; a setting, default kDefaultCaptureBudget).
    int64_t captureBudget() const { return m_captureBudget; }
    void setCaptureBudget(int64_t bytes) { m_captureBudget = bytes; }

    // --- what is looked at ---------------------------------------------------------------------------------
    int step() const { return m_step; } // generated tokens shown (0: the prompt only)
    void setStep(int step);             // clamped to the run
    int visibleTokens() const;          // prompt + step
    const AttentionSelection& selection() const { return m_selection; }
    int layer() const { return m_selection.layer; }
    void setLayer(int layer);
    int head() const { return m_selection.heads.head; } // -1: fused with fusion()
    void setHead(int head);
    HeadFusion fusion() const { return m_selection.heads.fusion; }
    void setFusion(HeadFusion fusion);
    int selectedToken() const { return m_selected; } // a row of the shown matrix; -1 none
    void setSelectedToken(int row);
    // The row under the pointer in any view (-1 none); the views highlight it together. focusToken(): the
    // hovered row, else the selected one.
    int hoveredToken() const { return m_hovered; }
    void setHoveredToken(int row);
    int focusToken() const { return m_hovered >= 0 ? m_hovered : m_selected; }
    bool wordLevel() const { return m_wordLevel; }
    void setWordLevel(bool on);
    bool hideSpecial() const { return m_hideSpecial; }
    // Value-weighted maps (Kobayashi et al., 2020): every head's weights times ‖v_j·W_O,hᵀ‖, rows
    // renormalised, before the heads are fused or special tokens hidden. Only where the run has its norms
    // (canValueWeight).
    void setValueWeighted(bool on);
    bool valueWeighted() const { return m_valueWeighted && canValueWeight(); }
    bool canValueWeight() const { return m_run && !m_run->valueNorms.empty(); }
    void setHideSpecial(bool on);

    // The attention of `layer` / `head` (or the fusion) over the visible tokens, [visible, visible] (GPT-2:
    // row i is token i's attention when it was added; above the diagonal 0), before word merging / hiding.
    RowMatrix tokenMatrix(int layer, int head) const;
    // Every layer and head over the visible tokens, [L, H, visible, visible] (GPT-2: each generated token's
    // row as it was added, zeros above the diagonal). Materialises every head: attnlens::Error naming the
    // size when the run is on demand (use visibleCapture()).
    Tensor visibleAttention() const;
    // Head (layer, head) of `run` over its first `visible` tokens, [visible, visible], as visibleAttention()
    // has it (weighted: value-weighted). Pure: any thread (an on-demand run makes the map here).
    static RowMatrix visibleHead(const TextRun& run, int visible, int layer, int head, bool weighted = false);
    // What the lenses measure: visibleAttention() as a capture, or on demand its heads made one at a time
    // (the capture holds the run, not this document: safe on the worker).
    AttentionCapture visibleCapture() const;
    // As shown: words merged and special tokens hidden as chosen (rows renormalised over the kept keys).
    struct Shown {
        RowMatrix values;
        QStringList rows, columns;
    };
    Shown shown(int layer, int head) const;
    Shown shown() const { return shown(m_selection.layer, m_selection.heads.head); }
    QStringList visibleTokenLabels() const;
    // What shown() does, pure (any thread): `tokens` [visible, visible] of `run` as shown.
    struct ShowOptions {
        int visible = 0;
        bool hideSpecial = false, wordLevel = false;
        bool valueWeighted = false;
        bool operator==(const ShowOptions&) const = default;
    };
    static Shown shape(RowMatrix tokens, const TextRun& run, const TextFolder& folder, const ShowOptions& o);
    // shape()'s labels alone (no map made).
    static QStringList shownLabels(const TextRun& run, const TextFolder& folder, const ShowOptions& o);
    static QStringList tokenLabels(const TextRun& run, const TextFolder& folder, int visible);
    ShowOptions showOptions() const { return {visibleTokens(), m_hideSpecial, m_wordLevel, valueWeighted()}; }

    // --- long texts (attention on demand): maps made off the GUI thread
    // -------------------------------------- Which map tokenMatrix(layer(), head()) reads: head ≥ 0, or −1 −
    // the fusion.
    int mapKey() const { return m_selection.heads.head >= 0 ? m_selection.heads.head : -1 - int(fusion()); }
    // Head `key` (≥ 0) or −1 − a fusion of `layer` of `run` over its first `visible` tokens. Pure: any
    // thread.
    static RowMatrix makeMap(const TextRun& run, int heads, int visible, int layer, int key,
                             bool weighted = false);

    // The ten most likely next tokens after the visible ones (GPT-2; the next step takes the first). Empty
    // for BERT.
    std::vector<TextCandidate> stepCandidates() const;

signals:
    void modelChanged();
    void runChanged();
    void selectionChanged();
    void hoverChanged();

private:
    static QStringList shapeTokens(RowMatrix* m, const TextRun& run, const TextFolder& folder,
                                   const ShowOptions& o);
    std::shared_ptr<const TextFolder> m_folder;
    std::shared_ptr<const TextRun> m_run;
    int m_step = 0, m_selected = -1, m_hovered = -1;
    AttentionSelection m_selection; // layer, head, fusion (clampLayer / clampHead)
    bool m_wordLevel = false, m_hideSpecial = false, m_valueWeighted = false;
    int64_t m_captureBudget = kDefaultCaptureBudget;
    // On-demand runs: the latest head maps made (layer, head or −1 − fusion, visible tokens), newest last; a
    // few only.
    struct CachedMap {
        int layer, head, visible;
        bool weighted;
        RowMatrix map;
    };
    mutable std::vector<CachedMap> m_maps;
    const RowMatrix& cachedHead(int layer, int head) const; // makes it if not kept
};

} // namespace attnlens::ui
