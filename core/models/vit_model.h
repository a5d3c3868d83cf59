#pragma once
// VitModel: Hugging Face ViT (model_type "vit": ViTForImageClassification, or a bare ViTModel with or
// without pooler) and DINOv2 (model_type "dinov2" / "dinov2_with_registers": Dinov2Model,
// Dinov2WithRegistersModel and their ForImageClassification) on CPU, float32, with every head's attention
// captured on request. Semantics: docs/model-semantics.md (ViT), i.e. transformers v4.33 modeling_vit.py;
// DINOv2 as transformers v4.50.3's modeling_dinov2(_with_registers).py: layer scale (folded into the output
// projections at load), a plain or SwiGLU MLP, positions always interpolated to the input's grid (bicubic;
// antialiased with registers), register tokens after CLS ([CLS, reg…, patches]; no position embedding),
// pooled = the CLS row after the final norm, classifier on [CLS ; mean of the patch tokens]. CLIP's tower
// ("clip" / "clip_vision_model") and SigLIP's ("siglip" / "siglip_vision_model": no CLS token, an
// attention-pooling head; core/models/vit_siglip.cpp) as v4.50.3's modeling_clip.py / modeling_siglip.py.
//
// Basic usage:
//   auto model = VitModel::load(dir);                  // shared_ptr<const VitModel>;               //
//   config.json, model.safetensors, preprocessor VitResult r = model.run(loadImage("cat.png"));      //
//   preprocess + forward, attention captured r.output.logits          // [num_labels]              (empty
//   without classifier) r.output.attentions      // [layer, head, N+1, N+1]   token 0 = CLS, patches
//   row-major r.grid.imageRect(i)      // patch i in original-image pixels model.topK(r.output, 5)  // labels
//   with probabilities
//
// Weights are resolved by their checkpoint names once, at load, into typed members; every missing
// tensor and every shape that disagrees with config.json is reported in one error. F32/F16/BF16
// files are converted to float32. A loaded model is immutable: run()/forward() are const and may be
// called from several threads at once (each call has its own scratch).

#include "core/contract/run_controls.h"
#include "core/layers/transformer_block.h"
#include "core/ops/nn.h"
#include "core/tensor/tensor.h"
#include "core/util/callbacks.h"
#include "core/vision/image_io.h"
#include "core/vision/patch_grid.h"
#include "core/vision/preprocess.h"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace attnlens {

class TensorFile;
class WeightBinder;

enum class VitFamily { Vit, Dinov2, Dinov2Registers, Clip, Siglip };

struct VitConfig {
    VitFamily family = VitFamily::Vit;
    int numRegisterTokens = 0; // dinov2_with_registers
    bool swiglu = false;       // DINOv2's use_swiglu_ffn (then intermediateSize is the SwiGLU width)
    int hiddenSize = 768;
    int numLayers = 12;
    int numHeads = 12;
    int intermediateSize = 3072;
    Activation activation = Activation::Gelu;
    float layerNormEps = 1e-12f;
    int imageSize = 224; // square, as ViTConfig defines it
    int patchSize = 16;
    int numChannels = 3;
    bool qkvBias = true;
    int projectionDim = 0; // CLIP: the width of visual_projection (used when the checkpoint has one)
    std::vector<std::string> labels; // id2label in index order; empty when config.json has none
    std::string architecture;        // architectures[0], informational

    bool dinov2() const { return family == VitFamily::Dinov2 || family == VitFamily::Dinov2Registers; }
    bool clip() const { return family == VitFamily::Clip; }
    bool siglip() const { return family == VitFamily::Siglip; }
    bool hasCls() const { return !siglip(); } // SigLIP has none: its pooling head's probe sums the picture up
    // Tokens before the patches: CLS and the registers.
    int prefixTokens() const { return (hasCls() ? 1 : 0) + numRegisterTokens; }
    int headDim() const { return hiddenSize / numHeads; }
    int gridSize() const { return imageSize / patchSize; } // patches per side of the trained size
    // Throws attnlens::Error naming config.json and the key for missing/ill-typed/inconsistent values.
    static VitConfig fromJson(const JsonConfig& json);
};

// The contract's run controls (capture, heads off as transformers' head_mask = 0, the neuron view's probe)
// and ViT's own input options.
struct VitRunOptions : RunControls {
    // Accept inputs whose size differs from config.image_size by resizing the stored position
    // embeddings (HF interpolate_pos_encoding=True: bicubic with the +0.1 scale trick). Without it
    // such an input is an error, as in HF.
    bool interpolatePositions = false;
    // Refuse inputs whose captured attention ([L, H, T, T] float32) would exceed this many bytes, and
    // inputs of more than kMaxTokens tokens at all (the [T, T] score matrix alone grows quadratically).
    int64_t maxCaptureBytes = 4ll << 30;
    static constexpr int64_t kMaxTokens = 16384;
};

struct VitOutput {
    Tensor logits;        // [num_labels]; empty without a classifier
    Tensor probabilities; // [num_labels] softmax of logits; empty without a classifier
    Tensor attentions;    // [layers, heads, T, T] post-softmax, T = 1 + registers + N (SigLIP: N); empty when
                          // not captured
    Tensor lastHidden;    // [T, hidden] after the final layernorm (CLIP: the encoder's output, no norm)
    // [layers, T]: ‖x‖ of every token's residual stream after each layer (before the final norm) — the
    // token-norm map of "Vision Transformers Need Registers" (Darcet et al. 2024), where high-norm outlier
    // patches show up.
    Tensor tokenNorms;
    Tensor
        pooled; // [hidden] tanh(dense(CLS)) with a ViT pooler; DINOv2: the CLS row; CLIP: post_layernorm(CLS)
    // CLIP with visual_projection: the image embedding [P] (projection of pooled; not normalised) and every
    // patch token through post_layernorm and the projection [N, P] (the text → patch relevance's features).
    // SigLIP: imageEmbeds = pooled (the attention-pooling head's output); patchEmbeds [N, D] = each patch
    // through the head's value path as if the probe attended to it alone (out_proj(v_proj(h)), then +
    // mlp(layernorm)).
    Tensor imageEmbeds;
    Tensor patchEmbeds;
    // SigLIP: [heads, N] the pooling head's probe attention over the final patch states (each row sums to 1).
    Tensor probeAttention;
    int gridRows = 0;
    int gridCols = 0;
};

struct Prediction {
    int index = 0;
    std::string label;
    float probability = 0;
    float logit = 0;
};

// Everything one image produces: the preprocessed input, its patch grid and the model output.
struct VitResult {
    PreprocessedImage input;
    PatchGrid grid;
    VitOutput output;
};

class VitModel {
public:
    // Loads <dir>/config.json, <dir>/model.safetensors and <dir>/preprocessor_config.json (defaults when
    // absent). Reports progress per tensor group; honours cancel. Throws attnlens::Error.
    // Immutable once loaded (forward() is const), so shared by the GUI, its worker and exports, as
    // MarianModel.
    static std::shared_ptr<const VitModel> load(const std::filesystem::path& dir,
                                                const Callbacks& callbacks = {});

    const VitConfig& config() const { return m_config; }
    const ImageProcessorConfig& processor() const { return m_processor; }
    const std::filesystem::path& dir() const { return m_dir; }
    bool hasClassifier() const { return !m_classifierW.empty(); }
    bool hasPooler() const { return !m_poolerW.empty(); }
    bool hasProjection() const { return !m_projection.empty(); } // CLIP's visual_projection
    int numLabels() const { return hasClassifier() ? static_cast<int>(m_classifierW.dim(0)) : 0; }
    // The label of class i: id2label when present, else "LABEL_i" (HF's default naming).
    std::string label(int index) const;

    // pixels [C, H, W] (preprocessImage's output). Throws attnlens::Error for a wrong channel count or
    // an unsupported size; attnlens::Cancelled when the callback asks to stop (checked per layer).
    VitOutput forward(const Tensor& pixels, const VitRunOptions& options = {},
                      const Callbacks& callbacks = {}) const;
    // preprocess (with this model's processor config and channel count) + forward + patch grid.
    VitResult run(const ImageU8& image, const VitRunOptions& options = {},
                  const Callbacks& callbacks = {}) const;
    // What the model does to its last layer's output to classify: the final layernorm and the classifier, on
    // stream rows [r, D] → logits [r, labels] (the logit lens's readout). attnlens::Error without a
    // classifier.
    RowMatrix classify(const RowMatrix& stream) const;
    // The k most probable classes, most probable first (ties: lower index first).
    std::vector<Prediction> topK(const VitOutput& output, int k) const;

private:
    Tensor positionTable(int rows, int cols, bool interpolate) const; // [rows·cols + 1, D]
    Tensor interpolatedPositions(int rows, int cols) const;           // positionTable's resize, uncached
    // The final norm's output [T, D] → logits [1, labels]: CLS (ViT), [CLS ; mean of the patches] (DINOv2).
    RowMatrix headLogits(const RowMatrix& normed) const;
    MultiHeadAttention bindAttention(WeightBinder& w, const TensorFile& file, const std::string& l,
                                     const Tensor& outScale) const;
    // DINOv2's layer: norm1/norm2, layer scale folded into the attention output and the MLP's last
    // projection.
    TransformerBlock bindDinov2Layer(WeightBinder& w, const TensorFile& file, const std::string& l) const;
    // load()'s steps; `prefix` is "vit." for ViTForImageClassification, "" for a bare ViTModel.
    void bindEmbeddings(WeightBinder& w, const std::string& prefix);
    // One pre-norm encoder layer (ViTLayer) as a TransformerBlock: x += attention(LN_before(x));
    // x += fc2(act(fc1(LN_after(x)))).
    TransformerBlock bindLayer(WeightBinder& w, const TensorFile& file, const std::string& l) const;
    void bindHead(WeightBinder& w, const TensorFile& file, const std::string& prefix);
    void bindClip(WeightBinder& w, const TensorFile& file, const Callbacks& callbacks);
    // CLIP's ending: the pooled CLS and every patch through post_layernorm, and visual_projection when
    // present.
    void clipOutputs(const RowMatrix& x, VitOutput& out) const;
    // SiglipVisionTransformer under "vision_model." (core/models/vit_siglip.cpp).
    void bindSiglip(WeightBinder& w, const TensorFile& file, const Callbacks& callbacks);
    // SigLIP's ending: post_layernorm, the attention-pooling head (probe map per head) and the patch
    // features.
    void siglipOutputs(RowMatrix& x, VitOutput& out) const;

    // SiglipMultiheadAttentionPoolingHead: nn.MultiheadAttention(probe, h, h), then x + mlp(layernorm(x)).
    struct PoolingHead {
        Tensor probe;                  // [D]
        Tensor inW, inB;               // [3D, D], [3D]: query, key, value stacked
        Tensor outW, outB;             // [D, D], [D]
        Tensor lnW, lnB;               // [D]
        Tensor fc1W, fc1B, fc2W, fc2B; // [I, D], [I], [D, I], [D]
    };
    PoolingHead m_head;
    // Interpolated position tables by grid (rows, cols): DINOv2 resizes its table for every input, and a
    // page or a bench runs many pictures of one size. Shared by the copies of a model; a few grids at most.
    struct PositionCache {
        std::mutex mutex;
        std::map<std::pair<int, int>, Tensor> tables;
    };
    std::shared_ptr<PositionCache> m_positionCache = std::make_shared<PositionCache>();

    VitConfig m_config;
    ImageProcessorConfig m_processor;
    std::filesystem::path m_dir;
    Tensor m_patchW;    // [D, C·p·p]  conv kernel flattened in (channel, y, x) order
    Tensor m_patchB;    // [D]
    Tensor m_cls;       // [D]
    Tensor m_registers; // [R, D] (dinov2_with_registers) or empty
    Tensor m_positions; // [N+1, D]; SigLIP: [N, D]
    std::vector<TransformerBlock> m_layers;
    Tensor m_finalLnW, m_finalLnB;       // [D]; CLIP's post_layernorm
    Tensor m_preLnW, m_preLnB;           // [D] CLIP's pre_layrnorm, or empty
    Tensor m_projection;                 // [P, D] CLIP's visual_projection, or empty
    Tensor m_poolerW, m_poolerB;         // [D, D], [D] or empty
    Tensor m_classifierW, m_classifierB; // [labels, D], [labels] or empty
};

} // namespace attnlens
