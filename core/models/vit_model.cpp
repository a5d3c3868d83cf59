#include "core/models/vit_model.h"

#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/io/tensor_file.h"
#include "core/io/weight_binder.h"
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

} // namespace

VitConfig VitConfig::fromJson(const JsonConfig& json) {
    const std::string file = json.path().string();
    VitConfig c;
    const auto type = json.value<std::string>("model_type", "");
    if (type != "vit") throw Error(file + ": model_type is '" + type + "', expected 'vit'");
    c.hiddenSize = json.value<int>("hidden_size", c.hiddenSize);
    c.numLayers = json.value<int>("num_hidden_layers", c.numLayers);
    c.numHeads = json.value<int>("num_attention_heads", c.numHeads);
    c.intermediateSize = json.value<int>("intermediate_size", c.intermediateSize);
    c.activation = parseActivation(json.value<std::string>("hidden_act", "gelu"));
    c.layerNormEps = static_cast<float>(json.value<double>("layer_norm_eps", 1e-12));
    c.imageSize = squareSize(json, "image_size", c.imageSize);
    c.patchSize = squareSize(json, "patch_size", c.patchSize);
    c.numChannels = json.value<int>("num_channels", c.numChannels);
    c.qkvBias = json.value<bool>("qkv_bias", c.qkvBias);
    if (json.has("architectures") && json.json()["architectures"].is_array() &&
        !json.json()["architectures"].empty() && json.json()["architectures"][0].is_string())
        c.architecture = json.json()["architectures"][0].get<std::string>();

    const auto positive = [&](int v, const char* key) { json.checkPositive(v, key); };
    positive(c.hiddenSize, "hidden_size");
    positive(c.numLayers, "num_hidden_layers");
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

    if (json.has("id2label")) {
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

    // ViTForImageClassification stores the backbone under "vit."; a bare ViTModel has no prefix.
    std::string prefix;
    if (file.contains("vit.embeddings.cls_token"))
        prefix = "vit.";
    else if (!file.contains("embeddings.cls_token"))
        throw Error("'" + weightsPath.string() +
                    "': not a ViT checkpoint (neither 'vit.embeddings.cls_token' nor "
                    "'embeddings.cls_token' found)");

    WeightBinder w(file);
    w.setCallbacks(&callbacks);
    m.bindEmbeddings(w, prefix);
    m.m_layers.reserve(c.numLayers);
    for (int i = 0; i < c.numLayers; ++i) {
        callbacks.report(0.05 + 0.9 * i / c.numLayers,
                         "weights, " + std::to_string(i) + " of " + std::to_string(c.numLayers) + " layers");
        m.m_layers.push_back(m.bindLayer(w, file, prefix + "encoder.layer." + std::to_string(i) + "."));
    }
    if (file.contains(prefix + "encoder.layer." + std::to_string(c.numLayers) + ".layernorm_before.weight"))
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
}

// One ViTLayer under the name prefix `l` ("vit.encoder.layer.3.").
TransformerBlock VitModel::bindLayer(WeightBinder& w, const TensorFile& file, const std::string& l) const {
    const VitConfig& c = m_config;
    const int64_t d = c.hiddenSize, inter = c.intermediateSize;
    TransformerBlock L;
    L.placement = TransformerBlock::Placement::Pre;
    L.attentionNorm = {Norm::Kind::LayerNorm, w.require(l + "layernorm_before.weight", {d}),
                       w.require(l + "layernorm_before.bias", {d}), c.layerNormEps};
    const std::string a = l + "attention.attention.";
    LinearWeights q{w.require(a + "query.weight", {d, d}), {}}, k{w.require(a + "key.weight", {d, d}), {}},
        v{w.require(a + "value.weight", {d, d}), {}};
    if (c.qkvBias) {
        q.bias = w.require(a + "query.bias", {d});
        k.bias = w.require(a + "key.bias", {d});
        v.bias = w.require(a + "value.bias", {d});
    } else if (file.contains(a + "query.bias")) {
        w.problem("tensor '" + a + "query.bias' present but config.json has qkv_bias = false");
    }
    LinearWeights out{w.require(l + "attention.output.dense.weight", {d, d}),
                      w.require(l + "attention.output.dense.bias", {d})};
    // HF ViTSelfAttention divides q·kᵀ by √head_dim after the product (QueryScale::Scores).
    if (!q.weight.empty())
        L.attention = MultiHeadAttention(std::move(q), std::move(k), std::move(v), std::move(out), c.numHeads,
                                         QueryScale::Scores);
    L.mlpNorm = {Norm::Kind::LayerNorm, w.require(l + "layernorm_after.weight", {d}),
                 w.require(l + "layernorm_after.bias", {d}), c.layerNormEps};
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

// The final LayerNorm, the optional pooler and the optional classifier (its size checked against id2label).
void VitModel::bindHead(WeightBinder& w, const TensorFile& file, const std::string& prefix) {
    const int64_t d = m_config.hiddenSize;
    m_finalLnW = w.require(prefix + "layernorm.weight", {d});
    m_finalLnB = w.require(prefix + "layernorm.bias", {d});
    if (file.contains(prefix + "pooler.dense.weight")) {
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
        m_classifierW = w.require("classifier.weight", {labels, d});
        m_classifierB = w.require("classifier.bias", {labels});
    } else {
        w.problem("tensor 'classifier.weight' has shape " + shapeToString(info->shape) +
                  ", expected [labels, " + std::to_string(d) + "]");
    }
}

std::string VitModel::label(int index) const {
    if (index >= 0 && index < static_cast<int>(m_config.labels.size())) return m_config.labels[index];
    return "LABEL_" + std::to_string(index);
}

Tensor VitModel::positionTable(int rows, int cols, bool interpolate) const {
    const int g = m_config.gridSize();
    if (rows == g && cols == g) return m_positions;
    if (!interpolate)
        throw Error("input of " + std::to_string(rows * m_config.patchSize) + "×" +
                    std::to_string(cols * m_config.patchSize) +
                    " pixels does not match the model's image_size " + std::to_string(m_config.imageSize) +
                    " (enable position interpolation to use other sizes)");
    // HF ViTEmbeddings.interpolate_pos_encoding: keep the CLS row, resize the patch rows as a
    // [D, g, g] grid with scale factors ((rows + 0.1) / g, (cols + 0.1) / g).
    const int64_t d = m_config.hiddenSize;
    Tensor grid({d, g, g}); // [D, g, g]
    for (int64_t i = 0; i < int64_t(g) * g; ++i)
        for (int64_t k = 0; k < d; ++k)
            grid.data()[k * g * g + i] = m_positions.data()[(i + 1) * d + k];
    const Tensor resized =
        bicubicInterpolate(grid, rows, cols, (rows + 0.1) / g, (cols + 0.1) / g); // [D, rows, cols]
    Tensor table({int64_t(rows) * cols + 1, d});                                  // [N+1, D]
    std::copy_n(m_positions.data(), d, table.data());
    for (int64_t i = 0; i < int64_t(rows) * cols; ++i)
        for (int64_t k = 0; k < d; ++k)
            table.data()[(i + 1) * d + k] = resized.data()[k * rows * cols + i];
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
    if (!options.interpolatePositions && (height != c.imageSize || width != c.imageSize))
        throw Error("ViT input size " + std::to_string(height) + "×" + std::to_string(width) +
                    " doesn't match the model's image_size " + std::to_string(c.imageSize) + "×" +
                    std::to_string(c.imageSize) + " (enable position interpolation to use other sizes)");
    const int rows = static_cast<int>(height / p), cols = static_cast<int>(width / p);
    const int64_t n = int64_t(rows) * cols, tokens = n + 1, d = c.hiddenSize;
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
    RowMatrix x(tokens, d); // [N+1, D]
    x.row(0) = ConstVectorMap(m_cls.data(), d).transpose();
    x.bottomRows(n) = linear(patches, m_patchW, m_patchB);
    x += positionTable(rows, cols, options.interpolatePositions).matrix();

    VitOutput out;
    out.gridRows = rows;
    out.gridCols = cols;
    if (options.captureAttention) out.attentions = Tensor({c.numLayers, heads, tokens, tokens});

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
    }
    if (trace) trace->final = traceRows(x, trace->rows);
    layerNormInPlace(x, m_finalLnW, m_finalLnB, c.layerNormEps);
    out.lastHidden = Tensor::fromMatrix(x);
    if (hasPooler()) {
        RowMatrix pooled = linear(x.topRows(1), m_poolerW, m_poolerB); // [1, D]
        pooled = pooled.array().tanh().matrix();
        out.pooled = Tensor::fromMatrix(pooled).reshaped({d});
    }
    if (hasClassifier()) {
        RowMatrix logits = linear(x.topRows(1), m_classifierW, m_classifierB); // [1, labels]
        out.logits = Tensor::fromMatrix(logits).reshaped({logits.cols()});
        RowMatrix probs = logits;
        softmaxRowsInPlace(probs);
        out.probabilities = Tensor::fromMatrix(probs).reshaped({probs.cols()});
    }
    callbacks.report(1.0, "done");
    return out;
}

RowMatrix VitModel::classify(const RowMatrix& stream) const {
    if (!hasClassifier()) throw Error("this ViT has no classifier");
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
                       RectF{r.input.regionX, r.input.regionY, r.input.regionWidth, r.input.regionHeight});
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
