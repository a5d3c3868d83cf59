#include "core/diffusion/t2i_maps.h"

#include "core/analysis/word_merge.h"
#include "core/ops/interpolate.h"
#include "core/util/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace attnlens {

std::vector<T2iWord> t2iWords(const T2iResult& result) {
    const int total = static_cast<int>(result.tokens.size());
    const int used = std::clamp(result.promptTokens, std::min(2, total), total); // BOS … EOS
    std::vector<T2iWord> words;
    if (used == 0) return words;
    words.push_back({"<start>", {0}, T2iWord::Kind::Start});
    const std::vector<std::string> pieces(result.tokens.begin() + 1, result.tokens.begin() + (used - 1));
    const WordGroups groups = groupEndOfWord(pieces);
    for (int w = 0; w < groups.count(); ++w)
        words.push_back({groups.words[size_t(w)], {}, T2iWord::Kind::Word});
    for (int p = 0; p < static_cast<int>(groups.wordOf.size()); ++p)
        words[size_t(1 + groups.wordOf[size_t(p)])].tokens.push_back(1 + p);
    if (used >= 2) words.push_back({"<end>", {used - 1}, T2iWord::Kind::End});
    if (used < total) {
        T2iWord pad{"padding", {}, T2iWord::Kind::Padding};
        for (int t = used; t < total; ++t)
            pad.tokens.push_back(t);
        words.push_back(std::move(pad));
    }
    return words;
}

int t2iFindWord(const std::vector<T2iWord>& words, std::string_view name) {
    const int count = static_cast<int>(words.size());
    for (int i = 0; i < count; ++i)
        if (words[size_t(i)].text == name) return i;
    if (name.empty() || name.size() > 5 || !std::all_of(name.begin(), name.end(), ::isdigit)) return -1;
    const int index = std::stoi(std::string(name));
    return index < count ? index : -1;
}

std::string_view t2iHalfName(T2iHalf half) {
    switch (half) {
    case T2iHalf::Cond:
        return "cond";
    case T2iHalf::Uncond:
        return "uncond";
    case T2iHalf::Difference:
        return "cond-uncond";
    }
    return "cond";
}

std::vector<UNetAttentionInfo> t2iCrossLayers(const T2iResult& result) {
    std::vector<UNetAttentionInfo> layers;
    if (!result.steps.empty())
        for (const T2iCrossMap& m : result.steps.front().maps)
            layers.push_back(m.layer);
    return layers;
}

bool t2iHasAllHeads(const T2iResult& result) {
    for (const T2iStep& s : result.steps)
        for (const T2iCrossMap& m : s.maps)
            if (m.cond.dim(0) != m.layer.heads) return false;
    return !result.steps.empty();
}

bool t2iHasValueWeighted(const T2iResult& result) {
    return !result.steps.empty() && !result.steps.front().maps.empty() &&
           !result.steps.front().maps.front().condWeighted.empty();
}

namespace {

std::vector<int> chosen(int index, int count, const char* what) {
    if (count == 0) throw Error(std::string("the run has no ") + what);
    if (index >= count || index < -1)
        throw Error(std::string(what) + " " + std::to_string(index) + " is out of range 0.." +
                    std::to_string(count - 1));
    std::vector<int> out;
    for (int i = index < 0 ? 0 : index; i < (index < 0 ? count : index + 1); ++i)
        out.push_back(i);
    return out;
}

// The heads a selection reads from a map of `kept` heads (1: their mean) of a layer with `heads`.
void checkHeads(const HeadSelection& sel, int64_t kept, int heads) {
    if (sel.head >= heads)
        throw Error("head " + std::to_string(sel.head) + " is out of range 0.." + std::to_string(heads - 1));
    if (kept == heads || (sel.head < 0 && sel.fusion == HeadFusion::Mean)) return;
    throw Error("this run kept the mean over heads only: generate with every head kept to see one head, "
                "their max or their min");
}

// Fuses a per-head value: mean / max / min over heads, or one head.
template <typename Value> float fuse(const HeadSelection& sel, int64_t kept, Value value) {
    if (sel.head >= 0) return value(kept == 1 ? 0 : sel.head);
    float acc = value(0);
    for (int64_t h = 1; h < kept; ++h) {
        const float v = value(h);
        acc = sel.fusion == HeadFusion::Max   ? std::max(acc, v)
              : sel.fusion == HeadFusion::Min ? std::min(acc, v)
                                              : acc + v;
    }
    return sel.fusion == HeadFusion::Mean ? acc / static_cast<float>(kept) : acc;
}

const Tensor& half(const T2iCrossMap& m, bool uncond, bool valueWeighted) {
    if (uncond && m.uncond.empty())
        throw Error("the unconditional half exists only for runs with guidance > 1");
    if (valueWeighted && m.condWeighted.empty())
        throw Error("this run kept no value-weighted maps: generate with them kept to see them");
    if (valueWeighted) return uncond ? m.uncondWeighted : m.condWeighted;
    return uncond ? m.uncond : m.cond;
}

// One layer's [h, w] grid for the query's tokens from one half.
Tensor tokenGrid(const T2iCrossMap& m, const T2iMapQuery& q, bool uncond) {
    const Tensor& w = half(m, uncond, q.valueWeighted);
    const int64_t kept = w.dim(0), pixels = w.dim(1), keys = w.dim(2);
    checkHeads(q.heads, kept, m.layer.heads);
    for (int t : q.tokens)
        if (t < 0 || t >= keys) throw Error("token " + std::to_string(t) + " is out of range");
    Tensor grid({1, m.layer.height, m.layer.width});
    for (int64_t p = 0; p < pixels; ++p)
        grid.data()[p] = fuse(q.heads, kept, [&](int64_t h) {
            float s = 0;
            for (int t : q.tokens)
                s += w.data()[(h * pixels + p) * keys + t];
            return s;
        });
    return grid;
}

} // namespace

RowMatrix t2iWordMap(const T2iResult& result, const T2iMapQuery& q, int height, int width) {
    if (q.tokens.empty()) throw Error("no token chosen for the map");
    const auto steps = chosen(q.step, static_cast<int>(result.steps.size()), "step");
    const auto layers =
        chosen(q.layer, static_cast<int>(t2iCrossLayers(result).size()), "cross-attention layer");
    // Upsampling is linear: the grids of one resolution are summed first, then upsampled once.
    std::map<std::pair<int64_t, int64_t>, Tensor> sums;
    for (int s : steps)
        for (int l : layers) {
            const T2iCrossMap& m = result.steps[size_t(s)].maps.at(size_t(l));
            Tensor grid = tokenGrid(m, q, q.half == T2iHalf::Uncond);
            if (q.half == T2iHalf::Difference) {
                const Tensor u = tokenGrid(m, q, true);
                for (int64_t i = 0; i < grid.numel(); ++i)
                    grid.data()[i] -= u.data()[i];
            }
            auto [it, fresh] = sums.try_emplace({m.layer.height, m.layer.width}, std::move(grid));
            if (!fresh)
                for (int64_t i = 0; i < grid.numel(); ++i)
                    it->second.data()[i] += grid.data()[i];
        }
    RowMatrix out = RowMatrix::Zero(height, width);
    for (const auto& [size, grid] : sums) {
        const Tensor up = bicubicInterpolate(grid, height, width);
        out += Eigen::Map<const RowMatrix>(up.data(), height, width);
    }
    return out / static_cast<float>(steps.size() * layers.size());
}

std::vector<float> t2iPixelTokens(const T2iResult& result, const T2iMapQuery& q, int row, int col, int height,
                                  int width) {
    if (row < 0 || col < 0 || row >= height || col >= width)
        throw Error("pixel " + std::to_string(row) + "," + std::to_string(col) + " is outside the " +
                    std::to_string(height) + "x" + std::to_string(width) + " image");
    const auto steps = chosen(q.step, static_cast<int>(result.steps.size()), "step");
    const auto layers =
        chosen(q.layer, static_cast<int>(t2iCrossLayers(result).size()), "cross-attention layer");
    std::vector<float> out;
    const auto add = [&](const T2iCrossMap& m, bool uncond, float sign) {
        const Tensor& w = half(m, uncond, q.valueWeighted);
        const int64_t kept = w.dim(0), pixels = w.dim(1), keys = w.dim(2);
        checkHeads(q.heads, kept, m.layer.heads);
        const int64_t p =
            int64_t{row} * m.layer.height / height * m.layer.width + int64_t{col} * m.layer.width / width;
        out.resize(size_t(keys), 0.0f);
        for (int64_t k = 0; k < keys; ++k)
            out[size_t(k)] +=
                sign * fuse(q.heads, kept, [&](int64_t h) { return w.data()[(h * pixels + p) * keys + k]; });
    };
    for (int s : steps)
        for (int l : layers) {
            const T2iCrossMap& m = result.steps[size_t(s)].maps.at(size_t(l));
            add(m, q.half == T2iHalf::Uncond, 1.0f);
            if (q.half == T2iHalf::Difference) add(m, true, -1.0f);
        }
    for (float& v : out)
        v /= static_cast<float>(steps.size() * layers.size());
    return out;
}

std::vector<float> t2iPixelWords(const T2iResult& result, const std::vector<T2iWord>& words,
                                 const T2iMapQuery& query, int row, int col, int height, int width) {
    const std::vector<float> tokens = t2iPixelTokens(result, query, row, col, height, width);
    std::vector<float> out;
    for (const T2iWord& w : words) {
        float s = 0;
        for (int t : w.tokens)
            if (t < static_cast<int>(tokens.size())) s += tokens[size_t(t)];
        out.push_back(s);
    }
    return out;
}

UNetAttentionMap t2iSelfAttention(const TextToImagePipeline& pipe, const Tensor& condStates,
                                  const T2iStep& step, int layer, const Callbacks* callbacks) {
    if (step.input.empty()) throw Error("this step kept no U-Net input to replay");
    const auto layers =
        pipe.unet().attentionLayers(static_cast<int>(step.input.dim(1)), static_cast<int>(step.input.dim(2)),
                                    static_cast<int>(condStates.dim(0)));
    if (layer < 0 || layer >= static_cast<int>(layers.size()) || layers[size_t(layer)].cross)
        throw Error("attention layer " + std::to_string(layer) +
                    " is not a self-attention layer of this U-Net");
    UNetRunOptions options;
    options.captureLayer = layer;
    options.maxCaptureBytes = int64_t{4} << 30;
    UNetConditioning c;
    c.encoderHiddenStates = condStates;
    UNetOutput out = pipe.unet().forward(step.input, step.timestep, c, options, callbacks);
    if (out.attentions.size() != 1) throw Error("the replayed step captured no self-attention");
    return std::move(out.attentions.front());
}

ImageU8 t2iImageU8(const Tensor& image) {
    ImageU8 out;
    out.width = static_cast<int>(image.dim(2));
    out.height = static_cast<int>(image.dim(1));
    out.channels = 3;
    out.pixels.resize(static_cast<size_t>(out.width) * out.height * 3);
    const int64_t plane = image.dim(1) * image.dim(2);
    for (int64_t p = 0; p < plane; ++p)
        for (int c = 0; c < 3; ++c) {
            const int64_t src = std::min<int64_t>(c, image.dim(0) - 1); // a one-channel VAE: grey
            const float v = image.data()[src * plane + p]; // 0..1, or NaN where a model overflowed: black
            out.pixels[static_cast<size_t>(p * 3 + c)] =
                std::isfinite(v) ? static_cast<uint8_t>(std::nearbyint(std::clamp(v, 0.0f, 1.0f) * 255.0f))
                                 : 0;
        }
    return out;
}

ImageU8 latentPreview(const Tensor& latents) {
    const int64_t channels = std::min<int64_t>(latents.dim(0), 3), plane = latents.dim(1) * latents.dim(2);
    Tensor scaled({3, latents.dim(1), latents.dim(2)});
    for (int64_t c = 0; c < 3; ++c) {
        const float* src = latents.data() + std::min(c, channels - 1) * plane;
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t p = 0; p < plane; ++p)
            if (std::isfinite(src[p])) lo = std::min(lo, src[p]), hi = std::max(hi, src[p]);
        const float range = hi > lo ? hi - lo : 1.0f;
        for (int64_t p = 0; p < plane; ++p)
            scaled.data()[c * plane + p] = (src[p] - lo) / range;
    }
    return t2iImageU8(scaled);
}

RgbImage renderT2iOverlay(const ImageU8& image, const Eigen::Ref<const RowMatrix>& map,
                          OverlayOptions options, T2iHalf half) {
    if (half == T2iHalf::Difference && options.hi <= options.lo) {
        const float m = std::max(map.cwiseAbs().maxCoeff(), 1e-12f);
        options.lo = -m;
        options.hi = m;
        options.colorMap = ColorMap::Diverging;
    }
    return renderOverlay(image, map, options);
}

} // namespace attnlens
