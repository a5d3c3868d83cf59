#pragma once
// VisionDocument: the state of the Vision page — the loaded ViT, the current image with its result, and
// what the user is looking at (query, layer, head, rollout, colours). Views read it and call setters;
// it emits signals; it runs no inference (the page does, on its InferenceWorker) and draws nothing itself
// (maps go through core/analysis, pixels through core/export/overlay, as in `attnlens-cli vision`).
//
// Basic usage:
//   doc->setModel(VitModel::load(dir));
//   doc->setImage(VisionDocument::analyse(model, image, "cat.png"));   // worker thread, then GUI thread
//   doc->selectPatches({9, 10});  doc->setReduce(TokenReduce::Sum);
//   RowMatrix m = doc->currentMap();                                   // [grid rows, grid cols]
//   RgbImage px = doc->renderDisplayOverlay();                         // what the page shows
//
// Snapshots (model, image) are immutable and shared: a worker can hold them while the GUI moves on.
// Threading: the QObject lives on the GUI thread; analyse() is a pure function for the worker.

#include "core/analysis/attention_maps.h"
#include "core/analysis/clip_texts.h"
#include "core/analysis/logit_lens.h"
#include "core/export/overlay.h"
#include "core/models/vit_model.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace attnlens::ui {

// One analysed image: the picture, the model's result on it and images prepared for display.
struct VisionImage {
    QString source;    // file name or "pasted image"
    ImageU8 image;     // the original, as loaded (1 or 3 channels)
    ImageU8 display;   // the picture the page blends over: small images enlarged by an integer factor
                       // (nearest, crisp pixels), large ones reduced to at most kDisplayMax px per side
    ImageU8 thumbnail; // the same for the heads grid / layers strip (about kThumbnailSize px)
    VitResult result;  // input, patch grid, logits, attentions [L, H, N+1, N+1]
    std::vector<Prediction> top; // top-5 (empty for a checkpoint without classifier)
    // The logit lens of the CLS token (issue 42): its stream entering each layer and leaving the last through
    // the final layernorm and the classifier, every class's probability per layer (from the same forward
    // pass; layers empty without a classifier).
    LogitLens classLens;
    // Per layer [H, tokens]: ‖v_j·W_O,hᵀ‖, what token j sends through head h (value-weighted maps).
    std::vector<RowMatrix> valueNorms;
    // Heads switched off for this run ((layer, head), transformers' head_mask = 0) and, when any are, the
    // top-5 of the plain run for comparison.
    std::vector<std::pair<int, int>> ablated;
    std::vector<Prediction> baselineTop;
    // CLIP with a text side: the typed texts' zero-shot scores and maps (core/analysis/clip_texts.h); `top`
    // then lists the texts by probability.
    std::vector<ClipTextRun> texts;
    double seconds = 0; // wall time of preprocessing + forward
};

class VisionDocument : public QObject {
    Q_OBJECT
public:
    static constexpr int kDisplayMax = 1024;
    static constexpr int kDisplayMin = 448; // small images are enlarged to at least this (integer factor)
    static constexpr int kThumbnailSize = 224;

    // CLS, one register (DINOv2 with registers: where it reads, with Key side who reads it) or patches. A
    // model without CLS (SigLIP) reads Cls as its pooling head's probe: the summary query either way.
    enum class Query { Cls, Register, Patches };

    explicit VisionDocument(QObject* parent = nullptr);

    // Runs `model` on `image` with attention captured and prepares the display images. Throws
    // attnlens::Error / Cancelled. Call it on a worker thread.
    static std::shared_ptr<const VisionImage> analyse(const VitModel& model, ImageU8 image,
                                                      const QString& source, const Callbacks& callbacks = {},
                                                      const std::vector<std::pair<int, int>>& ablated = {});
    // A copy of `image` with `texts` run against it (none: the texts dropped, the classifier's top back). On
    // the worker; throws attnlens::Error for a text the tower refuses.
    static std::shared_ptr<const VisionImage> withTexts(const VisionImage& image, const ClipTextSide* side,
                                                        const std::vector<std::string>& texts);
    // The enlarged (nearest) or reduced (PIL bilinear) copy of an image whose longer side lands in
    // [minSide, maxSide] where possible; integer factors when enlarging, so every pixel stays a square.
    static ImageU8 displayCopy(const ImageU8& image, int minSide, int maxSide);

    // --- snapshots -------------------------------------------------------------------------
    // A new model clears the image (its attention belongs to the old model) and resets the selection
    // to CLS, the last layer and the mean over heads.
    void setModel(std::shared_ptr<const VitModel> model, std::shared_ptr<const ClipTextSide> textSide = {});
    const std::shared_ptr<const VitModel>& model() const { return m_model; }
    // A CLIPModel's text side (null for other models): typed texts, their scores and maps.
    const std::shared_ptr<const ClipTextSide>& textSide() const { return m_textSide; }
    // The texts typed (kept across pictures and models; run when a picture and a text side are there).
    const std::vector<std::string>& texts() const { return m_texts; }
    void setTexts(std::vector<std::string> texts);
    // A new image keeps the selection when the grid is unchanged, else resets the query to CLS.
    void setImage(std::shared_ptr<const VisionImage> image);
    const std::shared_ptr<const VisionImage>& image() const { return m_image; }
    bool hasImage() const { return m_image != nullptr; }
    int numLayers() const;
    int numHeads() const;
    int gridRows() const;
    int gridCols() const;
    int prefixTokens() const; // CLS and the registers: the first patch's token
    bool hasCls() const;      // false for SigLIP, whose summary is the pooling probe
    // The summary query of a model without CLS: the probe's attention over the last layer's patches (per
    // head, independent of the layer; rollout: its heads' mean through the rollout). Key side, flow and the
    // layers strip have no meaning for it (a probe is no token; it reads only the last layer).
    bool probeQuery() const { return m_query == Query::Cls && !hasCls(); }

    // --- selection -------------------------------------------------------------------------
    Query query() const { return m_query; }
    int queryRegister() const { return m_register; } // 0-based, when query() is Register
    int registers() const { return std::max(0, prefixTokens() - (hasCls() ? 1 : 0)); }
    void selectRegister(int index);                               // ignored outside 0..registers() − 1
    const std::vector<int>& patches() const { return m_patches; } // sorted, unique, row-major indices
    void selectCls();
    // An empty list selects CLS. Indices outside the grid are ignored.
    void selectPatches(std::vector<int> patches);
    // Adds the patch, or removes it when already selected (shift-click).
    void togglePatch(int patch);
    // The query tokens (0 = CLS, register r = token 1 + r, patch i = token prefixTokens() + i); none for the
    // probe.
    std::vector<int> queryTokens() const;

    TokenReduce reduce() const { return m_reduce; }
    void setReduce(TokenReduce reduce);
    bool keySide() const { return m_keySide; }
    void setKeySide(bool keySide); // true: which tokens attend TO the selection

    const AttentionSelection& selection() const { return m_selection; }
    int layer() const { return m_selection.layer; }
    void setLayer(int layer);
    int head() const { return m_selection.heads.head; } // -1 = aggregate over heads with fusion()
    void setHead(int head);
    HeadFusion fusion() const { return m_selection.heads.fusion; }
    void setFusion(HeadFusion fusion);
    // Value-weighted layer maps (Kobayashi et al., 2020): each head's weights times ‖v_j·W_O,hᵀ‖, rows
    // renormalised, before the heads are fused (rollout and flow stay on the weights).
    bool valueWeighted() const { return m_valueWeighted; }
    void setValueWeighted(bool on);
    bool rollout() const { return m_rollout; } // rollout through layers 0..layer, heads fused
    void setRollout(bool rollout);             // turns flow off
    // Attention flow (core/analysis/attention_flow.h) of the query tokens through layers 0..layer, heads
    // fused; turns rollout off; query → patches only (key side is ignored). The page computes the map on its
    // worker and hands it back with setFlowMap(); until then currentMap() is zero and flowPending() is true.
    bool flow() const { return m_flow; }
    void setFlow(bool flow);
    // The token-norm map (Darcet et al. 2024, "Vision Transformers Need Registers"): ‖x‖ of each patch
    // token's residual stream after the layer instead of an attention map — high-norm outlier patches stand
    // out. Turns rollout and flow off (they turn it off); a norm has no heads, so the heads grid is empty.
    bool tokenNorms() const { return m_tokenNorms; }
    void setTokenNorms(bool on);
    // Text → patches (CLIP): the map of typed text `index` of the picture's texts instead of attention (−1:
    // none); relevance (rollout × similarity above the mean) or the plain cosine similarity. Turns rollout,
    // flow and token norms off (they turn it off); no heads or layers.
    int textMap() const { return m_textMap; }
    bool textMapShown() const;
    void setTextMap(int index);
    bool textRelevance() const { return m_textRelevance; }
    void setTextRelevance(bool relevance);
    QString textMapDescription() const;
    // ‖x‖ after `layer` of every token: CLS, the registers, the patches [T] (empty without an image).
    Eigen::VectorXf tokenNormsAt(int layer) const;
    struct FlowKey {
        int layer = -1;
        HeadFusion fusion = HeadFusion::Mean;
        std::vector<int> tokens;
        TokenReduce reduce = TokenReduce::Sum;
        bool operator==(const FlowKey&) const = default;
    };
    FlowKey flowKey() const;
    bool flowPending() const { return m_flow && m_image && !(m_flowKey == flowKey()); }
    void setFlowMap(const FlowKey& key, RowMatrix map); // ignored unless it is the current key

    // --- look ------------------------------------------------------------------------------
    float opacity() const { return m_opacity; }
    void setOpacity(float opacity);
    ColorMap colorMap() const { return m_colorMap; }
    void setColorMap(ColorMap map);
    bool smooth() const { return m_smooth; }
    void setSmooth(bool smooth);
    OverlayOptions overlayOptions() const;

    // --- maps ------------------------------------------------------------------------------
    // The [T, T] matrix the maps are read from: a layer's attention for a head selection, or rollout.
    RowMatrix attentionMatrix(int layer, const HeadSelection& heads, bool rollout) const;
    // The query (or key-side) map of the current selection on that matrix → [rows, cols].
    RowMatrix mapFor(int layer, const HeadSelection& heads, bool rollout) const;
    RowMatrix currentMap() const; // empty without an image
    // Every head's map at the current layer (the heads grid); rollout ignores the head, so then empty.
    std::vector<RowMatrix> headMaps() const;
    // The current head (or aggregate) at every layer (the layers strip); with rollout, rollout to each layer.
    std::vector<RowMatrix> layerMaps() const;
    // A short description of the map shown ("layer 4 · head 2 · CLS → patches").
    QString mapDescription() const;
    QString queryDescription() const;
    // "token norms after layer 3 · CLS 41.2 · registers 52.0 310.4 … · patches median 40.1, max 388.0 at (2,
    // 5)"
    QString tokenNormsDescription() const;

    // The current map blended over display() / the original image / a thumbnail (core renderOverlay).
    RgbImage renderDisplayOverlay() const;
    RgbImage renderOriginalOverlay() const;
    RgbImage renderThumbnail(const RowMatrix& map) const;

signals:
    void modelChanged();
    void imageChanged();
    void selectionChanged(); // query, reduce, key side
    void viewChanged();      // layer, head, fusion, rollout
    void lookChanged();      // opacity, colour map, smoothing

private:
    const RowMatrix& rolloutMatrix(int layer, HeadFusion fusion) const;
    RowMatrix probeMap(int layer, const HeadSelection& heads, bool rollout) const; // [rows, cols]

    std::shared_ptr<const VitModel> m_model;
    std::shared_ptr<const VisionImage> m_image;
    std::shared_ptr<const ClipTextSide> m_textSide;
    std::vector<std::string> m_texts;
    int m_textMap = -1;
    bool m_textRelevance =
        false; // the similarity first: on the built-in model it localises every item, rollout-weighted not
    Query m_query = Query::Cls;
    int m_register = 0;
    std::vector<int> m_patches;
    TokenReduce m_reduce = TokenReduce::Sum;
    bool m_keySide = false;
    AttentionSelection m_selection; // layer, head, fusion (clampLayer / clampHead)
    bool m_rollout = false;
    bool m_valueWeighted = false;
    bool m_flow = false;
    bool m_tokenNorms = false;
    FlowKey m_flowKey;   // the key m_flowMap was computed for
    RowMatrix m_flowMap; // [rows, cols]
    float m_opacity = 0.6f;
    ColorMap m_colorMap = ColorMap::Inferno;
    bool m_smooth = true;
    // Rollout of the current image, per (last layer, fusion); cleared with the image.
    mutable std::map<std::pair<int, int>, RowMatrix> m_rolloutCache;
};

} // namespace attnlens::ui
