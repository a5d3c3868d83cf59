#include "core/diffusion/t2i_pipeline.h"

#include "core/analysis/value_weighting.h"
#include "core/io/json_file.h"
#include "core/ops/interpolate.h"
#include "core/ops/nn.h"
#include "core/util/error.h"
#include "core/util/random.h"

#include <algorithm>
#include <cmath>

namespace attnlens {

namespace {

bool present(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
}

// model_index.json's [library, class] for a component, or "" when absent / null.
std::string componentClass(const JsonConfig& index, const std::string& name) {
    if (!index.has(name)) return "";
    const Json& v = index.json()[name];
    if (v.is_array() && v.size() == 2 && v[1].is_string()) return v[1].get<std::string>();
    return "";
}

} // namespace

bool isTextToImageFolder(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(dir / "model_index.json", ec)) return false;
    try {
        const Json j = readJsonFile(dir / "model_index.json");
        return j.is_object() && j.contains("text_encoder");
    } catch (const Error&) {
        return false;
    }
}

void checkTextToImageIndex(const JsonConfig& index) {
    const std::string where = "'" + index.path().parent_path().string() + "': ";
    const std::string cls = index.value<std::string>("_class_name", "pipeline");
    if (index.has("text_encoder_2") || index.has("tokenizer_2"))
        throw Error(where + "a " + cls + " with two text encoders (SDXL) is not supported");
    if (index.has("transformer"))
        throw Error(where + "a " + cls +
                    " with a transformer denoiser (SD3, Flux, PixArt: an MMDiT / DiT) is not "
                    "supported; Attention Lens runs Stable Diffusion 1.x / 2.x U-Net pipelines");
    const std::pair<const char*, const char*> want[] = {{"unet", "UNet2DConditionModel"},
                                                        {"text_encoder", "CLIPTextModel"},
                                                        {"tokenizer", "CLIPTokenizer"},
                                                        {"vae", "AutoencoderKL"}};
    for (const auto& [name, expected] : want) {
        const std::string found = componentClass(index, name);
        if (found.empty()) throw Error(where + "model_index.json names no " + name + " (a " + expected + ")");
        if (found != expected && !(std::string(name) == "tokenizer" && found == "CLIPTokenizerFast"))
            throw Error(where + "model_index.json's " + name + " is a " + found + "; only " + expected +
                        " is supported");
    }
}

namespace {

void checkComponents(const std::filesystem::path& dir, const JsonConfig& index) {
    checkTextToImageIndex(index);
    for (const char* name : {"unet", "text_encoder", "tokenizer", "vae"})
        if (!present(dir / name)) throw Error("'" + dir.string() + "': the " + name + "/ folder is missing");
}

} // namespace

std::shared_ptr<const TextToImagePipeline> TextToImagePipeline::load(const std::filesystem::path& dir,
                                                                     const Callbacks& callbacks) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error("'" + dir.string() + "' is not a folder");
    if (!present(dir / "model_index.json")) throw Error("'" + dir.string() + "' has no model_index.json");
    const JsonConfig index(dir / "model_index.json");
    std::shared_ptr<TextToImagePipeline> p(new TextToImagePipeline());
    p->m_dir = dir;
    p->m_className = index.value<std::string>("_class_name", "pipeline");
    checkComponents(dir, index);
    const auto schedulerFile = dir / "scheduler" / "scheduler_config.json";
    if (!present(schedulerFile))
        throw Error("'" + dir.string() + "': scheduler/scheduler_config.json is missing");
    p->m_scheduler = JsonConfig(schedulerFile);
    p->m_schedulerClass =
        p->m_scheduler.value<std::string>("_class_name", componentClass(index, "scheduler"));
    (void)SchedulerConfig::fromJson(
        p->m_scheduler); // its betas and keys, checked now rather than at Generate

    callbacks.report(0.0, "tokenizer");
    p->m_tokenizer = ClipTokenizer::load(dir / "tokenizer");
    callbacks.report(0.1, "text encoder");
    p->m_textConfig = ClipTextModel::load(dir / "text_encoder", callbacks)->config(); // checked, then let go
    callbacks.report(0.3, "U-Net");
    const UNet2DConfig unetConfig = UNet2DConfig::fromJson(JsonConfig(dir / "unet" / "config.json"));
    if (unetConfig.textConditioned && unetConfig.crossAttentionDim != p->m_textConfig.hiddenSize)
        throw Error("'" + dir.string() + "': the U-Net's cross_attention_dim (" +
                    std::to_string(unetConfig.crossAttentionDim) +
                    ") differs from the text encoder's hidden_size (" +
                    std::to_string(p->m_textConfig.hiddenSize) + ")");
    p->m_unet = UNet2DModel::load(dir / "unet");
    callbacks.report(0.8, "VAE");
    p->m_vae = AutoencoderKLDecoder::load(dir / "vae");
    callbacks.report(1.0, "ready");

    const auto& u = p->m_unet->config();
    if (!u.textConditioned)
        throw Error("'" + dir.string() + "': unet/ is not a UNet2DConditionModel (no cross-attention)");
    if (u.inChannels != p->m_vae->config().latentChannels || u.outChannels != u.inChannels)
        throw Error("'" + dir.string() + "': the U-Net's in/out channels (" + std::to_string(u.inChannels) +
                    "/" + std::to_string(u.outChannels) + ") differ from the VAE's latent_channels (" +
                    std::to_string(p->m_vae->config().latentChannels) + ")");
    return p;
}

int TextToImagePipeline::defaultSize() const {
    return m_unet->config().sampleSize * m_vae->config().scaleFactor();
}

int TextToImagePipeline::sizeMultiple() const {
    return m_unet->config().sizeMultiple() * m_vae->config().scaleFactor();
}

std::shared_ptr<const ClipTextModel> TextToImagePipeline::loadTextEncoder() const {
    return ClipTextModel::load(m_dir / "text_encoder");
}

Tensor TextToImagePipeline::encodePrompt(const ClipTextModel& text, std::string_view prompt,
                                         std::vector<int>* ids) const {
    const TextEncoding e = m_tokenizer->encodePadded(prompt, 77);
    if (static_cast<int>(e.ids.size()) > text.maxPositions())
        throw Error("the text encoder reads " + std::to_string(text.maxPositions()) +
                    " positions, fewer than 77");
    const TextForward f = text.forward(e.ids);
    if (ids) *ids = e.ids;
    Tensor out({f.hidden.rows(), f.hidden.cols()});
    MatrixMap(out.data(), f.hidden.rows(), f.hidden.cols()) = f.hidden;
    return out;
}

namespace {

Tensor combine(const Tensor& uncond, const Tensor& cond, float g) {
    Tensor out(cond.shape());
    for (int64_t i = 0; i < out.numel(); ++i)
        out.data()[i] = uncond.data()[i] + g * (cond.data()[i] - uncond.data()[i]);
    return out;
}

// [heads, pixels, keys] as kept: every head, or their mean.
Tensor keptHeads(Tensor&& weights, bool allHeads) {
    if (allHeads) return std::move(weights);
    const int64_t heads = weights.dim(0), per = weights.dim(1) * weights.dim(2);
    Tensor mean({1, weights.dim(1), weights.dim(2)}, 0.0f);
    auto sum = Eigen::Map<Eigen::ArrayXf>(mean.data(), per);
    for (int64_t h = 0; h < heads; ++h)
        sum += Eigen::Map<const Eigen::ArrayXf>(weights.data() + h * per, per);
    sum /= static_cast<float>(heads);
    return mean;
}

// The captured cross-attention maps of one U-Net call, reduced over heads unless allHeads (and value-weighted
// beside them when asked).
std::vector<T2iCrossMap> crossMaps(std::vector<UNetAttentionMap>&& captured, const T2iRequest& r) {
    std::vector<T2iCrossMap> maps;
    for (auto& a : captured) {
        if (!a.info.cross) continue;
        T2iCrossMap m;
        m.layer = a.info;
        if (r.valueWeighted) {
            Tensor weighted = a.weights.clone();
            for (int64_t h = 0; h < weighted.dim(0); ++h)
                valueWeightRows(weighted.slice2d({h}), a.valueNorms.slice2d({}).row(h));
            m.condWeighted = keptHeads(std::move(weighted), r.allHeads);
        }
        m.cond = keptHeads(std::move(a.weights), r.allHeads);
        maps.push_back(std::move(m));
    }
    return maps;
}

void checkRequest(const TextToImagePipeline& pipe, const T2iRequest& r, int height, int width) {
    const int mult = pipe.sizeMultiple();
    if (height < mult || width < mult || height % mult || width % mult || height > 2048 || width > 2048)
        throw Error("the image size " + std::to_string(height) + "x" + std::to_string(width) +
                    " must be divisible by " + std::to_string(mult) + " and at most 2048x2048");
    if (r.steps < 1 || r.steps > 1000) throw Error("the number of steps must be in 1..1000");
    if (!std::isfinite(r.guidance) || r.guidance < 0 || r.guidance > 100)
        throw Error("the guidance scale must be in 0..100");
}

} // namespace

T2iPrompt t2iPrompt(const TextToImagePipeline& pipe, std::string_view prompt) {
    T2iPrompt out;
    out.ids = pipe.tokenizer().encodePadded(prompt, 77).ids;
    out.promptTokens = static_cast<int>(pipe.tokenizer().encode(prompt).ids.size());
    out.truncated = out.promptTokens > 77;
    for (int id : out.ids)
        out.tokens.push_back(pipe.tokenizer().token(id));
    return out;
}

T2iResult runTextToImage(const TextToImagePipeline& pipe, const T2iRequest& r, const Callbacks* callbacks,
                         const std::function<void(const T2iStep&)>& onStep) {
    const int height = r.height ? r.height : pipe.defaultSize(),
              width = r.width ? r.width : pipe.defaultSize();
    checkRequest(pipe, r, height, width);
    T2iResult result;
    const auto kind = r.sampler ? r.sampler : pipe.folderSampler();
    if (!kind)
        throw Error("the folder's scheduler " + pipe.schedulerClass() +
                    " is not supported: choose pndm, ddim, euler or dpm");
    result.sampler = *kind;
    Sampler sampler(*kind, pipe.schedulerConfig());
    sampler.setTimesteps(r.steps);
    result.timesteps = sampler.timesteps();

    const bool guided = r.guidance > 1.0f;
    UNetConditioning cond, uncond;
    {
        const auto text = pipe.loadTextEncoder(); // released before the loop
        cond.encoderHiddenStates = pipe.encodePrompt(*text, r.prompt);
        if (guided) uncond.encoderHiddenStates = pipe.encodePrompt(*text, r.negative);
    }
    static_cast<T2iPrompt&>(result) = t2iPrompt(pipe, r.prompt);

    const int channels = pipe.unet().config().inChannels, f = pipe.vae().config().scaleFactor();
    const Shape shape{channels, height / f, width / f};
    Tensor latents = r.initLatents.empty() ? NormalRng(r.seed).tensor(shape) : r.initLatents;
    if (latents.shape() != shape)
        throw Error("the initial latents have shape " + shapeToString(latents.shape()) + ", expected " +
                    shapeToString(shape) + " for " + std::to_string(height) + "x" + std::to_string(width));
    const float sigma = sampler.initNoiseSigma();
    Tensor x(shape);
    for (int64_t i = 0; i < x.numel(); ++i)
        x.data()[i] = latents.data()[i] * sigma;

    UNetRunOptions run;
    run.captureAttention = r.captureMaps;
    run.captureSelf = false;
    const size_t calls = sampler.timesteps().size();
    for (size_t i = 0; i < calls; ++i) {
        if (callbacks) callbacks->report(static_cast<double>(i) / calls, "step " + std::to_string(i + 1));
        const float t = sampler.timesteps()[i];
        const Tensor in = sampler.scaleModelInput(x, i);
        T2iStep step;
        step.index = static_cast<int>(i);
        step.timestep = t;
        step.input = in.clone(); // a step owns its tensors: onStep's caller may keep or change them
        UNetOutput c = pipe.unet().forward(in, t, cond, run, callbacks);
        step.maps = crossMaps(std::move(c.attentions), r);
        Tensor noise = std::move(c.noisePred);
        if (guided) {
            UNetOutput u = pipe.unet().forward(in, t, uncond, run, callbacks);
            auto uMaps = crossMaps(std::move(u.attentions), r);
            for (size_t m = 0; m < uMaps.size() && m < step.maps.size(); ++m) {
                step.maps[m].uncond = std::move(uMaps[m].cond);
                step.maps[m].uncondWeighted = std::move(uMaps[m].condWeighted);
            }
            noise = combine(u.noisePred, noise, r.guidance);
        }
        x = sampler.step(noise, i, x);
        step.latents = x.clone();
        if (onStep) onStep(step);
        result.steps.push_back(std::move(step));
    }
    result.finalLatents = x;
    if (r.decode) {
        pipe.unet().releaseFilePages(); // the decode is where a run's memory peaks
        if (callbacks) callbacks->report(1.0, "decoding");
        result.image = decodeLatents(pipe, x, callbacks);
    }
    return result;
}

Tensor decodeLatents(const TextToImagePipeline& pipe, const Tensor& latents, const Callbacks* callbacks) {
    const float scale = pipe.vae().config().scalingFactor;
    Tensor z(latents.shape());
    for (int64_t i = 0; i < z.numel(); ++i)
        z.data()[i] = latents.data()[i] / scale;
    Tensor image = pipe.vae().decode(z, callbacks);
    for (int64_t i = 0; i < image.numel(); ++i)
        image.data()[i] = std::clamp(image.data()[i] / 2.0f + 0.5f, 0.0f, 1.0f);
    return image;
}

Tensor aggregateWordMaps(const T2iResult& result, int height, int width) {
    Tensor sum;
    int count = 0;
    for (const T2iStep& s : result.steps)
        for (const T2iCrossMap& m : s.maps) {
            const int64_t heads = m.cond.dim(0), pixels = m.cond.dim(1), tokens = m.cond.dim(2);
            Tensor grid({tokens, m.layer.height, m.layer.width}, 0.0f); // [token, h, w], mean over heads
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t p = 0; p < pixels; ++p)
                    for (int64_t k = 0; k < tokens; ++k)
                        grid.data()[k * pixels + p] += m.cond.data()[(h * pixels + p) * tokens + k] / heads;
            const Tensor up = bicubicInterpolate(grid, height, width);
            if (sum.empty()) sum = Tensor(up.shape(), 0.0f);
            for (int64_t i = 0; i < sum.numel(); ++i)
                sum.data()[i] += up.data()[i];
            ++count;
        }
    if (count == 0) throw Error("the run kept no cross-attention maps");
    for (int64_t i = 0; i < sum.numel(); ++i)
        sum.data()[i] /= static_cast<float>(count);
    return sum;
}

PrecisionParity t2iPrecisionParity(const TextToImagePipeline& pipe, std::string_view prompt) {
    const auto text = pipe.loadTextEncoder();
    const auto& c = pipe.unet().config();
    const int size = std::max(16, c.sizeMultiple());
    const Tensor latents = NormalRng(0).tensor({c.inChannels, size, size});
    UNetConditioning fast;
    fast.encoderHiddenStates = pipe.encodePrompt(*text, prompt);
    UNetConditioning exact;
    {
        const Fp32ReferenceScope reference; // the prompt's float32 states for the float32 side
        exact.encoderHiddenStates = pipe.encodePrompt(*text, prompt);
    }
    UNetRunOptions options;
    options.captureSelf = false; // as a text-to-image run captures: cross-attention
    return unetPrecisionParity(pipe.unet(), latents, 500.0f, fast, options, &exact);
}

} // namespace attnlens
