#include "core/diffusion/denoise_session.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace attnlens {

DenoiseSession::DenoiseSession(DiffusionModel model, DenoiseOptions options)
    : m_model(std::move(model)), m_options(std::move(options)),
      m_scheduler(m_options.scheduler, m_model.scheduler), m_rng(m_options.seed) {
    if (!m_model.unet) throw Error("no diffusion model loaded");
    const auto& c = m_model.unet->config();
    if (m_options.steps < 1 || m_options.steps > kMaxSteps)
        throw Error("the number of steps must be in 1.." +
                    std::to_string(std::min(kMaxSteps, m_model.scheduler.numTrainTimesteps)) + ", got " +
                    std::to_string(m_options.steps));
    if (!(m_options.eta >= 0.0f && m_options.eta <= 1.0f)) throw Error("eta must be in [0, 1]");
    if (m_options.scheduler == SchedulerKind::Ddpm && m_options.eta != 0.0f)
        throw Error("eta applies to the DDIM scheduler only");
    if (c.numClassEmbeds > 0 && !m_options.classLabel)
        throw Error("this model is class-conditional (" + std::to_string(c.numClassEmbeds) + " classes, 0.." +
                    std::to_string(c.numClassEmbeds - 1) + "): give a class");
    if (c.numClassEmbeds == 0 && m_options.classLabel)
        throw Error("this model is unconditional (it has no class embedding): no class can be given");
    if (m_options.classLabel && (*m_options.classLabel < 0 || *m_options.classLabel >= c.numClassEmbeds))
        throw Error("class " + std::to_string(*m_options.classLabel) + " is out of range 0.." +
                    std::to_string(c.numClassEmbeds - 1));
    m_scheduler.setTimesteps(m_options.steps);

    if (m_options.initNoise) {
        m_initNoise = *m_options.initNoise;
        if (m_initNoise.rank() == 4 && m_initNoise.dim(0) == 1) // [1, C, H, W] as diffusers holds it
            m_initNoise = m_initNoise.reshaped({m_initNoise.dim(1), m_initNoise.dim(2), m_initNoise.dim(3)});
        m_model.unet->checkSample(m_initNoise.shape());
    } else {
        const int h = m_options.height ? m_options.height : c.sampleSize;
        const int w = m_options.width ? m_options.width : c.sampleSize;
        if (h <= 0 || w <= 0) throw Error("the model's config.json has no sample_size: give the image size");
        const Shape shape{c.inChannels, h, w};
        m_model.unet->checkSample(shape);
        m_initNoise = m_rng.tensor(shape);
    }
    if (c.inChannels != c.outChannels)
        throw Error("a U-Net with " + std::to_string(c.inChannels) + " input and " +
                    std::to_string(c.outChannels) +
                    " output channels cannot be sampled by DDPM/DDIM (the output must predict the input)");
    m_current = m_initNoise.clone();
}

Tensor DenoiseSession::noiseFor(int step) {
    if (!m_options.stepNoise) return m_rng.tensor(m_current.shape());
    Tensor n = m_options.stepNoise(step);
    if (n.rank() == 4 && n.dim(0) == 1) n = n.reshaped({n.dim(1), n.dim(2), n.dim(3)});
    if (n.shape() != m_current.shape())
        throw Error("the noise of step " + std::to_string(step) + " has shape " + shapeToString(n.shape()) +
                    ", expected " + shapeToString(m_current.shape()));
    return n;
}

bool DenoiseSession::step(const Callbacks* callbacks, std::vector<UNetAttentionMap>* attention) {
    if (done()) return false;
    const int i = completedSteps();
    const int t = m_scheduler.timesteps()[static_cast<size_t>(i)];
    UNetRunOptions run;
    run.captureAttention = attention != nullptr;
    UNetOutput out =
        m_model.unet->forward(m_current, static_cast<float>(t), m_options.classLabel, run, callbacks);
    Tensor eps = std::move(out.noisePred);
    if (attention) *attention = std::move(out.attentions);
    Tensor noise;
    if (m_scheduler.needsNoise(t, m_options.eta)) noise = noiseFor(i);
    SchedulerStep r = m_scheduler.step(eps, t, m_current, noise.empty() ? nullptr : &noise, m_options.eta);
    m_steps.push_back({t, m_current, std::move(eps), std::move(r.predOriginal)});
    m_current = std::move(r.prevSample);
    return !done();
}

void DenoiseSession::run(const Callbacks* callbacks) {
    while (!done()) {
        if (callbacks) callbacks->checkCancel();
        step(callbacks);
        if (callbacks)
            callbacks->report(static_cast<double>(completedSteps()) / stepCount(),
                              "step " + std::to_string(completedSteps()) + " of " +
                                  std::to_string(stepCount()));
    }
}

const DenoiseStep& DenoiseSession::stepAt(int i) const {
    if (i < 0 || i >= completedSteps())
        throw Error("step " + std::to_string(i) + " has not run (completed steps: 0.." +
                    std::to_string(completedSteps() - 1) + ")");
    return m_steps[static_cast<size_t>(i)];
}

const Tensor& DenoiseSession::finalSample() const {
    if (!done()) throw Error("the denoising has not finished");
    return m_current;
}

UNetOutput DenoiseSession::attentionAt(int i, const Callbacks* callbacks) const {
    const DenoiseStep& s = stepAt(i);
    return m_model.unet->forward(s.sample, static_cast<float>(s.timestep), m_options.classLabel, {},
                                 callbacks);
}

DenoiseSession::Prediction DenoiseSession::predictAt(int i, const UNetRunOptions& run,
                                                     const Callbacks* callbacks) const {
    const DenoiseStep& s = stepAt(i);
    Prediction p;
    p.unet =
        m_model.unet->forward(s.sample, static_cast<float>(s.timestep), m_options.classLabel, run, callbacks);
    p.predOriginal = predictOriginal(m_scheduler, p.unet.noisePred, s.timestep, s.sample, m_options.eta);
    return p;
}

Tensor predictOriginal(const Scheduler& scheduler, const Tensor& noisePred, int timestep,
                       const Tensor& sample, float eta) {
    const Tensor zeros(sample.shape(), 0.0f); // x̂0 is independent of the variance noise
    return scheduler.step(noisePred, timestep, sample, &zeros, eta).predOriginal;
}

ImageU8 sampleToImage(const Tensor& sample) {
    if (sample.rank() != 3)
        throw Error("a sample image needs shape [channels, height, width], got " +
                    shapeToString(sample.shape()));
    const int c = static_cast<int>(sample.dim(0)), h = static_cast<int>(sample.dim(1)),
              w = static_cast<int>(sample.dim(2));
    const int outC = (c == 3 || c == 4) ? 3 : 1;
    ImageU8 img(w, h, outC);
    const float* p = sample.data();
    for (int ch = 0; ch < outC; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const float v =
                    std::clamp(p[(static_cast<int64_t>(ch) * h + y) * w + x] / 2.0f + 0.5f, 0.0f, 1.0f);
                img.at(x, y, ch) = static_cast<uint8_t>(std::nearbyint(v * 255.0f));
            }
    return img;
}

} // namespace attnlens
