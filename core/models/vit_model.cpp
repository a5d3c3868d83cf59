#include "core/models/vit_model.h"

#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/io/tensor_file.h"
#include "core/io/weight_binder.h"
#include "core/models/clip_text_model.h"
#include "core/ops/interpolate.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlens {

namespace {

// An int key that may also be written as a two-element list of equal ints (some configs do).
int squareSize(const JsonConfig& json, const std::string& key, int fallback) {
    if (!json.has(key)) return fallback;
    const Json& v = json.json()[key];
    if (v.is_number_integer()) return v.get<int>();
    if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer() && v[0] == v[1])
        return v[0].get<int>();
    throw Error(json.path().string() + ": '" + key + "' must be an integer (found " + v.dump() + ")");
}

Tensor flatVector(const Tensor& t) {
    return t.empty() ? t : t.reshaped({t.numel()});
}

// DINOv2's keys: no intermediate_size (mlp_ratio sets it; SwiGLU rounds two thirds of it up to a multiple of
// 8, as Dinov2SwiGLUFFN does), eps 1e-6, patch 14 (16 in Dinov2WithRegistersConfig), registers.
void readDinov2(const JsonConfig& json, VitConfig& c) {
    const bool registers = c.family == VitFamily::Dinov2Registers;
    c.patchSize = registers ? 16 : 14;
    c.layerNormEps = 1e-6f;
    c.swiglu = json.value<bool>("use_swiglu_ffn", false);
    const double ratio = json.value<double>("mlp_ratio", 4.0);
    if (!(ratio > 0 && ratio < 1024)) throw json.refuse("mlp_ratio", "must be a positive number");
    const double width = json.value<int>("hidden_size", c.hiddenSize) * ratio;
    if (!(width >= 1 && width < double(1 << 24)))
        throw json.refuse("mlp_ratio", "times hidden_size must give an MLP of 1 to 16M units");
    const int hidden = static_cast<int>(width);
    c.intermediateSize = c.swiglu ? (static_cast<int>(hidden * 2.0 / 3.0) + 7) / 8 * 8 : hidden;
    if (registers) {
        c.numRegisterTokens = json.value<int>("num_register_tokens", 4);
        if (c.numRegisterTokens < 0 || c.numRegisterTokens > 1024)
            throw json.refuse("num_register_tokens", "must be between 0 and 1024");
    }
}

// CLIP's vision tower: a CLIPModel's keys are under "vision_config" (projection_dim at the top), a
// CLIPVisionModel(WithProjection)'s at the top; CLIPVisionConfig's defaults (patch 32, quick_gelu, eps 1e-5).
JsonConfig readClip(const JsonConfig& top, const std::string& type, VitConfig& c) {
    c.family = VitFamily::Clip;
    c.patchSize = 32;
    c.layerNormEps = 1e-5f;
    c.projectionDim = top.value<int>("projection_dim", 512);
    top.checkPositive(c.projectionDim, "projection_dim");
    if (type == "clip_vision_model") return top;
    if (!top.has("vision_config") || !top.json()["vision_config"].is_object())
        throw top.refuse("vision_config", "must be an object (the CLIPModel's vision tower)");
    return JsonConfig(top.json()["vision_config"], top.path());
}

// SigLIP's vision tower: a SiglipModel's keys are under "vision_config", a SiglipVisionModel's at the top;
// SiglipVisionConfig's defaults (patch 16, gelu_pytorch_tanh, eps 1e-6).
JsonConfig readSiglip(const JsonConfig& top, const std::string& type, VitConfig& c) {
    c.family = VitFamily::Siglip;
    c.layerNormEps = 1e-6f;
    if (type == "siglip_vision_model") return top;
    if (!top.has("vision_config") || !top.json()["vision_config"].is_object())
        throw top.refuse("vision_config", "must be an object (the SiglipModel's vision tower)");
    return JsonConfig(top.json()["vision_config"], top.path());
}

} // namespace

VitConfig VitConfig::fromJson(const JsonConfig& top) {
    const std::string file = top.path().string();
    VitConfig c;
    const auto type = top.value<std::string>("model_type", "");
    JsonConfig json = top;
    if (type == "dinov2")
        c.family = VitFamily::Dinov2;
    else if (type == "dinov2_with_registers")
        c.family = VitFamily::Dinov2Registers;
    else if (type == "clip" || type == "clip_vision_model")
        json = readClip(top, type, c);
    else if (type == "siglip" || type == "siglip_vision_model")
        json = readSiglip(top, type, c);
    else if (type != "vit")
        throw Error(file + ": model_type is '" + type +
                    "', expected 'vit', 'dinov2', 'dinov2_with_registers', 'clip', 'clip_vision_model', "
                    "'siglip' or 'siglip_vision_model'");
    if (c.dinov2())
        readDinov2(json, c);
    else
        c.intermediateSize = json.value<int>("intermediate_size", c.intermediateSize);
    c.hiddenSize = json.value<int>("hidden_size", c.hiddenSize);
    c.numLayers = json.value<int>("num_hidden_layers", c.numLayers);
    c.numHeads = json.value<int>("num_attention_heads", c.numHeads);
    // SwiGLU is SiLU whatever hidden_act says.
    const char* act = c.clip() ? "quick_gelu" : c.siglip() ? "gelu_pytorch_tanh" : "gelu";
    c.activation = c.swiglu ? Activation::Silu : parseActivation(json.value<std::string>("hidden_act", act));
    c.layerNormEps = static_cast<float>(
        json.value<double>("layer_norm_eps", c.family == VitFamily::Vit ? 1e-12 : c.layerNormEps));
    c.imageSize = squareSize(json, "image_size", c.imageSize);
    c.patchSize = squareSize(json, "patch_size", c.patchSize);
    c.numChannels = json.value<int>("num_channels", c.numChannels);
    if (!c.clip() && !c.siglip()) c.qkvBias = json.value<bool>("qkv_bias", c.qkvBias);
    if (top.has("architectures") && top.json()["architectures"].is_array() &&
        !top.json()["architectures"].empty() && top.json()["architectures"][0].is_string())
        c.architecture = top.json()["architectures"][0].get<std::string>();

    const auto positive = [&](int v, const char* key) { json.checkPositive(v, key); };
    positive(c.hiddenSize, "hidden_size");
    json.checkLayerCount(c.numLayers, "num_hidden_layers");
    positive(c.numHeads, "num_attention_heads");
    positive(c.intermediateSize, "intermediate_size");
    positive(c.imageSize, "image_size");
    positive(c.patchSize, "patch_size");
    if (c.hiddenSize % c.numHeads != 0)
        throw Error(file + ": hidden_size " + std::to_string(c.hiddenSize) +
                    " is not divisible by num_attention_heads " + std::to_string(c.numHeads));
    if (c.numChannels != 1 && c.numChannels != 3)
        throw Error(file + ": num_channels " + std::to_string(c.numChannels) +
                    " is not supported (expected 1 or 3)");
    if (c.patchSize > c.imageSize)
        throw Error(file + ": patch_size " + std::to_string(c.patchSize) + " exceeds image_size " +
                    std::to_string(c.imageSize));

    if (!c.clip() && !c.siglip() && json.has("id2label")) {
        const Json& map = json.json()["id2label"];
        if (!map.is_object()) throw Error(file + ": 'id2label' must be an object");
        std::vector<std::pair<int, std::string>> entries;
        for (const auto& [key, value] : map.items()) {
            int id = -1;
            try {
                size_t used = 0;
                id = std::stoi(key, &used);
                if (used != key.size()) id = -1;
            } catch (const std::exception&) {
            }
            if (id < 0 || !value.is_string())
                throw Error(file + ": 'id2label' entry '" + key + "' must map a class index to a string");
            entries.emplace_back(id, value.get<std::string>());
        }
        std::sort(entries.begin(), entries.end());
        for (size_t i = 0; i < entries.size(); ++i)
            if (entries[i].first != static_cast<int>(i))
                throw Error(file + ": 'id2label' indices must be 0.." + std::to_string(entries.size() - 1) +
                            " without gaps");
        for (auto& e : entries)
            c.labels.push_back(std::move(e.second));
    }
    return c;
}

std::shared_ptr<const VitModel> VitModel::load(const std::filesystem::path& dir, const Callbacks& callbacks) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error("'" + dir.string() + "': model folder not found");
    const auto configPath = dir / "config.json";
    if (!std::filesystem::exists(configPath, ec))
        throw Error("'" + dir.string() + "': config.json is missing (expected a Hugging Face ViT folder)");
    const auto weightsPath = findWeightsFile(dir, "model");

    VitModel m;
    m.m_dir = dir;
    m.m_config = VitConfig::fromJson(JsonConfig(configPath));
    m.m_processor = ImageProcessorConfig::load(dir);
    callbacks.report(0.0, "reading the checkpoint");
    const auto file = TensorFile::open(weightsPath);
    const VitConfig& c = m.m_config;

    WeightBinder w(file);
    w.setCallbacks(&callbacks);
    if (c.clip() || c.siglip()) {
        if (c.clip())
            m.bindClip(w, file, callbacks);
        else
            m.bindSiglip(w, file, callbacks);
        w.finish("'" + dir.string() + "': the checkpoint does not match config.json");
        callbacks.report(1.0, "loaded");
        return std::make_shared<const VitModel>(std::move(m));
    }
    // The ForImageClassification classes store the backbone under "vit." / "dinov2." /
    // "dinov2_with_registers."; a bare model has no prefix.
    const std::string head = c.family == VitFamily::Vit      ? "vit."
                             : c.family == VitFamily::Dinov2 ? "dinov2."
                                                             : "dinov2_with_registers.";
    std::string prefix;
    if (file.contains(head + "embeddings.cls_token"))
        prefix = head;
    else if (!file.contains("embeddings.cls_token"))
        throw Error("'" + weightsPath.string() + "': not a " + (c.dinov2() ? "DINOv2" : "ViT") +
                    " checkpoint (neither '" + head +
                    "embeddings.cls_token' nor 'embeddings.cls_token' found)");
    m.bindEmbeddings(w, prefix);
    m.m_layers.reserve(c.numLayers);
    for (int i = 0; i < c.numLayers; ++i) {
        callbacks.report(0.05 + 0.9 * i / c.numLayers,
                         "weights, " + std::to_string(i) + " of " + std::to_string(c.numLayers) + " layers");
        const std::string l = prefix + "encoder.layer." + std::to_string(i) + ".";
        m.m_layers.push_back(c.dinov2() ? m.bindDinov2Layer(w, file, l) : m.bindLayer(w, file, l));
    }
    if (file.contains(prefix + "encoder.layer." + std::to_string(c.numLayers) +
                      (c.dinov2() ? ".norm1.weight" : ".layernorm_before.weight")))
        w.problem("checkpoint has more than num_hidden_layers = " + std::to_string(c.numLayers) + " layers");
    m.bindHead(w, file, prefix);
    w.finish("'" + dir.string() + "': the checkpoint does not match config.json");
    callbacks.report(1.0, "loaded");
    return std::make_shared<const VitModel>(std::move(m));
}

void VitModel::bindEmbeddings(WeightBinder& w, const std::string& prefix) {
    const VitConfig& c = m_config;
    const int64_t d = c.hiddenSize, p = c.patchSize;
    const int64_t n = int64_t(c.gridSize()) * c.gridSize();
    const std::string e = prefix + "embeddings.";
    m_patchW = w.require(e + "patch_embeddings.projection.weight", {d, c.numChannels, p, p});
    if (!m_patchW.empty()) m_patchW = m_patchW.reshaped({d, c.numChannels * p * p});
    m_patchB = w.require(e + "patch_embeddings.projection.bias", {d});
    m_cls = flatVector(w.require(e + "cls_token", {1, 1, d}));
    m_positions = w.require(e + "position_embeddings", {1, n + 1, d});
    if (!m_positions.empty()) m_positions = m_positions.reshaped({n + 1, d});
    if (c.numRegisterTokens > 0) {
        m_registers = w.require(e + "register_tokens", {1, c.numRegisterTokens, d});
        if (!m_registers.empty()) m_registers = m_registers.reshaped({c.numRegisterTokens, d});
    }
}

// CLIPVisionTransformer under "vision_model." (CLIPModel, CLIPVisionModel and ...WithProjection alike):
// class_embedding, a patch convolution without bias, position_embedding, pre_layrnorm, CLIPEncoderLayers,
// post_layernorm (on the pooled CLS only) and, when present, visual_projection [P, D] without bias.
void VitModel::bindClip(WeightBinder& w, const TensorFile& file, const Callbacks& callbacks) {
    const VitConfig& c = m_config;
    const int64_t d = c.hiddenSize, p = c.patchSize, n = int64_t(c.gridSize()) * c.gridSize();
    const std::string v = "vision_model.", e = v + "embeddings.";
    if (!file.contains(e + "class_embedding"))
        throw Error("'" + file.path().string() + "': not a CLIP checkpoint (no '" + e + "class_embedding')");
    m_patchW = w.require(e + "patch_embedding.weight", {d, c.numChannels, p, p});
    if (!m_patchW.empty()) m_patchW = m_patchW.reshaped({d, c.numChannels * p * p});
    m_cls = w.require(e + "class_embedding", {d});
    m_positions = w.require(e + "position_embedding.weight", {n + 1, d});
    m_preLnW = w.require(v + "pre_layrnorm.weight", {d});
    m_preLnB = w.require(v + "pre_layrnorm.bias", {d});
    for (int i = 0; i < c.numLayers; ++i) {
        callbacks.report(0.05 + 0.9 * i / c.numLayers,
                         "weights, " + std::to_string(i) + " of " + std::to_string(c.numLayers) + " layers");
        m_layers.push_back(bindClipLayer(w, {d, c.intermediateSize, c.numHeads, c.layerNormEps, c.activation},
                                         v + "encoder.layers." + std::to_string(i) + "."));
    }
    if (file.contains(v + "encoder.layers." + std::to_string(c.numLayers) + ".layer_norm1.weight"))
        w.problem("checkpoint has more than num_hidden_layers = " + std::to_string(c.numLayers) + " layers");
    m_finalLnW = w.require(v + "post_layernorm.weight", {d});
    m_finalLnB = w.require(v + "post_layernorm.bias", {d});
    if (file.contains("visual_projection.weight"))
        m_projection = w.require("visual_projection.weight", {c.projectionDim, d});
}

namespace {
// The LayerNorm `name`.weight / `name`.bias [d].
Norm layerNormAt(WeightBinder& w, const std::string& name, int64_t d, float eps) {
    return {Norm::Kind::LayerNorm, w.require(name + ".weight", {d}), w.require(name + ".bias", {d}), eps};
}

// Dinov2LayerScale folded into the projection before it: diag(λ)·W, λ ⊙ b (a copy: the file may be mapped).
void foldScale(LinearWeights& lin, const Tensor& lambda) {
    if (lin.weight.empty() || lambda.empty()) return;
    lin.weight = lin.weight.clone();
    const int64_t rows = lin.weight.dim(0), cols = lin.weight.dim(1);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k)
            lin.weight.data()[r * cols + k] *= lambda.data()[r];
    if (lin.bias.empty()) return;
    lin.bias = lin.bias.clone();
    for (int64_t r = 0; r < rows; ++r)
        lin.bias.data()[r] *= lambda.data()[r];
}

// Rows [first, first + count) of a [rows, cols] or [rows] tensor, copied (SwiGLU's weights_in halves).
Tensor rowSlice(const Tensor& t, int64_t first, int64_t count) {
    if (t.empty()) return t;
    const int64_t cols = t.rank() == 2 ? t.dim(1) : 1;
    Tensor out = t.rank() == 2 ? Tensor({count, cols}) : Tensor({count});
    std::copy_n(t.data() + first * cols, count * cols, out.data());
    return out;
}
} // namespace

// The self-attention of the layer under `l`: query/key/value (biases iff qkv_bias), the output projection
// with `outScale` (DINOv2's layer scale) folded in when given. HF ViTSelfAttention divides q·kᵀ by √head_dim
// after the product (QueryScale::Scores).
MultiHeadAttention VitModel::bindAttention(WeightBinder& w, const TensorFile& file, const std::string& l,
                                           const Tensor& outScale) const {
    const int64_t d = m_config.hiddenSize;
    const std::string a = l + "attention.attention.";
    LinearWeights q{w.require(a + "query.weight", {d, d}), {}}, k{w.require(a + "key.weight", {d, d}), {}},
        v{w.require(a + "value.weight", {d, d}), {}};
    if (m_config.qkvBias) {
        q.bias = w.require(a + "query.bias", {d});
        k.bias = w.require(a + "key.bias", {d});
        v.bias = w.require(a + "value.bias", {d});
    } else if (file.contains(a + "query.bias")) {
        w.problem("tensor '" + a + "query.bias' present but config.json has qkv_bias = false");
    }
    LinearWeights out{w.require(l + "attention.output.dense.weight", {d, d}),
                      w.require(l + "attention.output.dense.bias", {d})};
    foldScale(out, outScale);
    if (q.weight.empty() || out.weight.empty()) return {};
    return MultiHeadAttention(std::move(q), std::move(k), std::move(v), std::move(out), m_config.numHeads,
                              QueryScale::Scores);
}

// One ViTLayer under the name prefix `l` ("vit.encoder.layer.3.").
TransformerBlock VitModel::bindLayer(WeightBinder& w, const TensorFile& file, const std::string& l) const {
    const VitConfig& c = m_config;
    const int64_t d = c.hiddenSize, inter = c.intermediateSize;
    TransformerBlock L;
    L.placement = TransformerBlock::Placement::Pre;
    L.attentionNorm = layerNormAt(w, l + "layernorm_before", d, c.layerNormEps);
    L.attention = bindAttention(w, file, l, {});
    L.mlpNorm = layerNormAt(w, l + "layernorm_after", d, c.layerNormEps);
    L.mlp.kind = Mlp::Kind::Plain;
    L.mlp.activation = c.activation;
    L.mlp.in = {w.require(l + "intermediate.dense.weight", {inter, d}),
                w.require(l + "intermediate.dense.bias", {inter})};
    L.mlp.out = {w.require(l + "output.dense.weight", {d, inter}), w.require(l + "output.dense.bias", {d})};
    // 197+ tokens per forward: every projection packed once here instead of on every call.
    if (w.problems().empty()) {
        L.attention.packWeights();
        L.mlp.pack();
    }
    return L;
}

// One Dinov2Layer: x += λ1 ⊙ attention(norm1(x)); x += λ2 ⊙ mlp(norm2(x)), mlp = fc2(act(fc1)) or SwiGLU
// weights_out(silu(x1) ⊙ x2) with x1, x2 = weights_in(x).chunk(2) (gate first).
TransformerBlock VitModel::bindDinov2Layer(WeightBinder& w, const TensorFile& file,
                                           const std::string& l) const {
    const VitConfig& c = m_config;
    const int64_t d = c.hiddenSize, inter = c.intermediateSize;
    TransformerBlock L;
    L.placement = TransformerBlock::Placement::Pre;
    L.attentionNorm = layerNormAt(w, l + "norm1", d, c.layerNormEps);
    L.attention = bindAttention(w, file, l, w.require(l + "layer_scale1.lambda1", {d}));
    L.mlpNorm = layerNormAt(w, l + "norm2", d, c.layerNormEps);
    L.mlp.activation = c.activation;
    if (c.swiglu) {
        const Tensor in = w.require(l + "mlp.weights_in.weight", {2 * inter, d});
        const Tensor inBias = w.require(l + "mlp.weights_in.bias", {2 * inter});
        L.mlp.kind = Mlp::Kind::Gated;
        L.mlp.in = {rowSlice(in, 0, inter), rowSlice(inBias, 0, inter)};
        L.mlp.up = {rowSlice(in, inter, inter), rowSlice(inBias, inter, inter)};
        L.mlp.out = {w.require(l + "mlp.weights_out.weight", {d, inter}),
                     w.require(l + "mlp.weights_out.bias", {d})};
    } else {
        L.mlp.kind = Mlp::Kind::Plain;
        L.mlp.in = {w.require(l + "mlp.fc1.weight", {inter, d}), w.require(l + "mlp.fc1.bias", {inter})};
        L.mlp.out = {w.require(l + "mlp.fc2.weight", {d, inter}), w.require(l + "mlp.fc2.bias", {d})};
    }
    foldScale(L.mlp.out, w.require(l + "layer_scale2.lambda1", {d}));
    if (w.problems().empty()) {
        L.attention.packWeights();
        L.mlp.pack();
    }
    return L;
}

// The final LayerNorm, the optional pooler and the optional classifier (its size checked against id2label).
void VitModel::bindHead(WeightBinder& w, const TensorFile& file, const std::string& prefix) {
    const int64_t d = m_config.hiddenSize;
    m_finalLnW = w.require(prefix + "layernorm.weight", {d});
    m_finalLnB = w.require(prefix + "layernorm.bias", {d});
    if (!m_config.dinov2() && file.contains(prefix + "pooler.dense.weight")) {
        m_poolerW = w.require(prefix + "pooler.dense.weight", {d, d});
        m_poolerB = w.require(prefix + "pooler.dense.bias", {d});
    }
    if (!file.contains("classifier.weight")) return;
    const TensorInfo* info = file.find("classifier.weight");
    const int64_t labels = info->shape.size() == 2 ? info->shape[0] : -1;
    if (!m_config.labels.empty() && labels != static_cast<int64_t>(m_config.labels.size()))
        w.problem("classifier has " + std::to_string(labels) + " classes but id2label names " +
                  std::to_string(m_config.labels.size()));
    if (labels > 0) {
        m_classifierW = w.require("classifier.weight", {labels, m_config.dinov2() ? 2 * d : d});
        m_classifierB = w.require("classifier.bias", {labels});
    } else {
        w.problem("tensor 'classifier.weight' has shape " + shapeToString(info->shape) +
                  ", expected [labels, " + std::to_string(m_config.dinov2() ? 2 * d : d) + "]");
    }
}

std::string VitModel::label(int index) const {
    if (index >= 0 && index < static_cast<int>(m_config.labels.size())) return m_config.labels[index];
    return "LABEL_" + std::to_string(index);
}

Tensor VitModel::positionTable(int rows, int cols, bool interpolate) const {
    const int g = m_config.gridSize();
    if (rows == g && cols == g) return m_positions;
    if (!interpolate && !m_config.dinov2())
        throw Error("input of " + std::to_string(rows * m_config.patchSize) + "×" +
                    std::to_string(cols * m_config.patchSize) +
                    " pixels does not match the model's image_size " + std::to_string(m_config.imageSize) +
                    " (enable position interpolation to use other sizes)");
    {
        const std::lock_guard lock(m_positionCache->mutex);
        if (const auto it = m_positionCache->tables.find({rows, cols}); it != m_positionCache->tables.end())
            return it->second;
    }
    Tensor table = interpolatedPositions(rows, cols);
    const std::lock_guard lock(m_positionCache->mutex);
    if (m_positionCache->tables.size() >= 8) m_positionCache->tables.clear();
    m_positionCache->tables.emplace(std::pair{rows, cols}, table);
    return table;
}

Tensor VitModel::interpolatedPositions(int rows, int cols) const {
    const int g = m_config.gridSize();
    // HF ViTEmbeddings.interpolate_pos_encoding: keep the CLS row, resize the patch rows as a
    // [D, g, g] grid with scale factors ((rows + 0.1) / g, (cols + 0.1) / g).
    const int64_t d = m_config.hiddenSize, lead = m_config.hasCls() ? 1 : 0;
    Tensor grid({d, g, g}); // [D, g, g]
    for (int64_t i = 0; i < int64_t(g) * g; ++i)
        for (int64_t k = 0; k < d; ++k)
            grid.data()[k * g * g + i] = m_positions.data()[(i + lead) * d + k];
    // DINOv2 (v4.50.3) resizes to the target grid itself (size=, no +0.1), with registers antialiased.
    // CLIP and SigLIP (v4.50.3, interpolate_pos_encoding=True) as DINOv2.
    const Tensor resized = m_config.family == VitFamily::Vit
                               ? bicubicInterpolate(grid, rows, cols, (rows + 0.1) / g, (cols + 0.1) / g)
                           : m_config.family == VitFamily::Dinov2Registers
                               ? bicubicInterpolateAntialias(grid, rows, cols)
                               : bicubicInterpolate(grid, rows, cols);
    Tensor table({int64_t(rows) * cols + lead, d}); // [(1 +) N, D]
    std::copy_n(m_positions.data(), lead * d, table.data());
    for (int64_t i = 0; i < int64_t(rows) * cols; ++i)
        for (int64_t k = 0; k < d; ++k)
            table.data()[(i + lead) * d + k] = resized.data()[k * rows * cols + i];
    return table;
}

VitOutput VitModel::forward(const Tensor& pixels, const VitRunOptions& options,
                            const Callbacks& callbacks) const {
    const VitConfig& c = m_config;
    if (pixels.rank() != 3)
        throw Error("ViT input must be [channels, height, width], got " + shapeToString(pixels.shape()));
    if (pixels.dim(0) != c.numChannels)
        throw Error("ViT input has " + std::to_string(pixels.dim(0)) + " channel(s), the model expects " +
                    std::to_string(c.numChannels) + " (num_channels in config.json)");
    const int p = c.patchSize;
    const int64_t height = pixels.dim(1), width = pixels.dim(2);
    if (height < p || width < p)
        throw Error("ViT input " + std::to_string(height) + "×" + std::to_string(width) +
                    " is smaller than one patch");
    if (!options.interpolatePositions && !c.dinov2() && (height != c.imageSize || width != c.imageSize))
        throw Error("ViT input size " + std::to_string(height) + "×" + std::to_string(width) +
                    " doesn't match the model's image_size " + std::to_string(c.imageSize) + "×" +
                    std::to_string(c.imageSize) + " (enable position interpolation to use other sizes)");
    const int rows = static_cast<int>(height / p), cols = static_cast<int>(width / p);
    const int64_t n = int64_t(rows) * cols, tokens = n + c.prefixTokens(), d = c.hiddenSize;
    const int heads = c.numHeads;
    if (tokens > VitRunOptions::kMaxTokens)
        throw Error("ViT input " + std::to_string(height) + "×" + std::to_string(width) + " gives " +
                    std::to_string(tokens) + " tokens; at most " + std::to_string(VitRunOptions::kMaxTokens) +
                    " are supported");
    const int64_t captureBytes = int64_t(c.numLayers) * heads * tokens * tokens * int64_t(sizeof(float));
    if (options.captureAttention && captureBytes > options.maxCaptureBytes)
        throw Error("capturing every head's attention for " + std::to_string(tokens) + " tokens needs " +
                    std::to_string(captureBytes >> 20) + " MiB, more than the limit of " +
                    std::to_string(options.maxCaptureBytes >> 20) + " MiB");

    // Patch embedding: a convolution with kernel = stride = p is a matmul over flattened patches.
    const int64_t patchLen = int64_t(c.numChannels) * p * p;
    RowMatrix patches(n, patchLen); // [N, C·p·p] in (channel, y, x) order, like the conv kernel
    for (int r = 0; r < rows; ++r)
        for (int q = 0; q < cols; ++q)
            for (int ch = 0; ch < c.numChannels; ++ch)
                for (int y = 0; y < p; ++y) {
                    const float* src =
                        pixels.data() + (int64_t(ch) * height + int64_t(r) * p + y) * width + int64_t(q) * p;
                    std::copy_n(src, p, &patches(int64_t(r) * cols + q, (int64_t(ch) * p + y) * p));
                }
    RowMatrix x(tokens, d); // [T, D]: CLS (none in SigLIP), the registers, the patches
    x.bottomRows(n) = linear(patches, m_patchW, m_patchB);
    const Tensor positions = positionTable(rows, cols, options.interpolatePositions); // [(1 +) N, D]
    x.bottomRows(n) += positions.matrix().bottomRows(n);
    if (c.hasCls()) x.row(0) = ConstVectorMap(m_cls.data(), d).transpose() + positions.matrix().row(0);
    for (int r = 0; r < c.numRegisterTokens;
         ++r) // inserted after the positions were added: none of their own
        x.row(1 + r) = ConstVectorMap(m_registers.data() + int64_t(r) * d, d).transpose();
    if (!m_preLnW.empty()) layerNormInPlace(x, m_preLnW, m_preLnB, c.layerNormEps); // CLIP's pre_layrnorm

    VitOutput out;
    out.gridRows = rows;
    out.gridCols = cols;
    if (options.captureAttention) out.attentions = Tensor({c.numLayers, heads, tokens, tokens});
    out.tokenNorms = Tensor({c.numLayers, tokens});

    const std::vector<int> headsPerLayer(static_cast<size_t>(c.numLayers), c.numHeads);
    const std::vector<std::vector<int>> off = headsOffByLayer(options.offHeads, headsPerLayer);
    ResidualTrace* trace = options.trace; // the stream at trace->rows, layer by layer
    if (trace) trace->layers.assign(size_t(c.numLayers), LayerTrace());
    for (int layer = 0; layer < c.numLayers; ++layer) {
        callbacks.checkCancel();
        if (options.callbacks) options.callbacks->checkCancel();
        callbacks.report(double(layer) / c.numLayers, "forward, " + std::to_string(layer) + " of " +
                                                          std::to_string(c.numLayers) + " layers");
        Tensor probs =
            options.captureAttention ? out.attentions.sub({layer}) : Tensor(); // [H, N+1, N+1] view
        BlockRun run;
        run.probs = options.captureAttention ? &probs : nullptr;
        run.offHeads = off[static_cast<size_t>(layer)]; // head_mask semantics: probabilities × 0
        run.probe = options.probe && layer == options.probeLayer ? options.probe : nullptr;
        if (trace) {
            run.trace = &trace->layers[size_t(layer)];
            run.traceRows = &trace->rows;
            run.traceValues = trace->values;
        }
        m_layers[static_cast<size_t>(layer)].forward(x, run);
        VectorMap(out.tokenNorms.data() + int64_t(layer) * tokens, tokens) = x.rowwise().norm();
    }
    if (trace) trace->final = traceRows(x, trace->rows);
    if (c.clip() || c.siglip()) {
        if (c.clip())
            clipOutputs(x, out);
        else
            siglipOutputs(x, out);
        callbacks.report(1.0, "done");
        return out;
    }
    layerNormInPlace(x, m_finalLnW, m_finalLnB, c.layerNormEps);
    out.lastHidden = Tensor::fromMatrix(x);
    if (hasPooler()) {
        RowMatrix pooled = linear(x.topRows(1), m_poolerW, m_poolerB); // [1, D]
        pooled = pooled.array().tanh().matrix();
        out.pooled = Tensor::fromMatrix(pooled).reshaped({d});
    } else if (c.dinov2()) {
        out.pooled = Tensor::fromMatrix(RowMatrix(x.topRows(1))).reshaped({d});
    }
    if (hasClassifier()) {
        const RowMatrix logits = headLogits(x); // [1, labels]
        out.logits = Tensor::fromMatrix(logits).reshaped({logits.cols()});
        RowMatrix probs = logits;
        softmaxRowsInPlace(probs);
        out.probabilities = Tensor::fromMatrix(probs).reshaped({probs.cols()});
    }
    callbacks.report(1.0, "done");
    return out;
}

void VitModel::clipOutputs(const RowMatrix& x, VitOutput& out) const {
    const int64_t d = m_config.hiddenSize, n = x.rows() - 1;
    out.lastHidden = Tensor::fromMatrix(x);
    RowMatrix normed = x;
    layerNormInPlace(normed, m_finalLnW, m_finalLnB, m_config.layerNormEps);
    out.pooled = Tensor::fromMatrix(RowMatrix(normed.topRows(1))).reshaped({d});
    if (!hasProjection()) return;
    const RowMatrix image = linear(normed.topRows(1), m_projection, Tensor()); // [1, P]
    out.imageEmbeds = Tensor::fromMatrix(image).reshaped({image.cols()});
    out.patchEmbeds = Tensor::fromMatrix(linear(normed.bottomRows(n), m_projection, Tensor())); // [N, P]
}

// DINOv2's head reads [CLS ; mean of the patch tokens]: the registers are not patches (transformers v4.50.3
// averages them in, transformers#37817, fixed by #37836; the released DINOv2 linear heads never saw them).
RowMatrix VitModel::headLogits(const RowMatrix& normed) const {
    const int64_t d = m_config.hiddenSize;
    RowMatrix features(1, m_classifierW.dim(1));
    features.leftCols(d) = normed.topRows(1);
    if (m_config.dinov2()) {
        const int64_t patches = normed.rows() - m_config.prefixTokens();
        features.rightCols(d) = normed.bottomRows(patches).colwise().mean();
    }
    return linear(features, m_classifierW, m_classifierB); // [1, labels]
}

RowMatrix VitModel::classify(const RowMatrix& stream) const {
    if (!hasClassifier()) throw Error("this ViT has no classifier");
    if (m_config.dinov2())
        throw Error("DINOv2's classifier reads the CLS token and the mean of the patches together; it has no "
                    "read-out of one token");
    RowMatrix x = stream;
    layerNormInPlace(x, m_finalLnW, m_finalLnB, m_config.layerNormEps);
    return linear(x, m_classifierW, m_classifierB);
}

VitResult VitModel::run(const ImageU8& image, const VitRunOptions& options,
                        const Callbacks& callbacks) const {
    VitResult r;
    r.input = preprocessImage(image, m_processor, m_config.numChannels);
    r.output = forward(r.input.pixels, options, callbacks);
    r.grid = PatchGrid(r.input.imageWidth, r.input.imageHeight, r.input.resized.width, r.input.resized.height,
                       m_config.patchSize,
                       RectF{r.input.regionX, r.input.regionY, r.input.regionWidth, r.input.regionHeight},
                       m_config.prefixTokens());
    return r;
}

std::vector<Prediction> VitModel::topK(const VitOutput& output, int k) const {
    std::vector<Prediction> result;
    if (output.probabilities.empty() || k <= 0) return result;
    const int count = static_cast<int>(output.probabilities.numel());
    std::vector<int> order(count);
    std::iota(order.begin(), order.end(), 0);
    const float* prob = output.probabilities.data();
    const int kk = std::min(k, count);
    std::partial_sort(order.begin(), order.begin() + kk, order.end(),
                      [&](int a, int b) { return prob[a] > prob[b] || (prob[a] == prob[b] && a < b); });
    for (int i = 0; i < kk; ++i)
        result.push_back({order[i], label(order[i]), prob[order[i]], output.logits.data()[order[i]]});
    return result;
}

} // namespace attnlens
