#pragma once
// DenoiseSession: the sampling loop of diffusers' DDPMPipeline / DDIMPipeline, one step at a time,
// keeping what a viewer needs per step — the sample fed to the U-Net (x_t), the predicted noise and
// the predicted clean image x̂0 — and recomputing a step's attention on demand instead of holding
// every layer of every step (1000 steps × all layers would not fit in memory for a 256×256 model).
//
//   DenoiseSession s(model, {.scheduler = SchedulerKind::Ddim, .steps = 50, .classLabel = 3, .seed = 1});
//   s.run(&callbacks);                         // or s.step() repeatedly (a GUI shows each step)
//   s.finalSample();                           // [C, H, W] in model space (about [-1, 1])
//   UNetOutput a = s.attentionAt(10);          // step 10's forward again, every attention captured
//
// Reproducible: the initial noise and every step's variance noise come from NormalRng(seed), drawn
// in loop order (initial noise first), unless supplied (initNoise, stepNoise).

#include "core/diffusion/diffusion_model.h"
#include "core/util/callbacks.h"
#include "core/util/random.h"
#include "core/vision/image_io.h"

#include <functional>
#include <optional>

namespace attnlens {

struct DenoiseOptions {
    SchedulerKind scheduler = SchedulerKind::Ddim;
    int steps = 50;
    float eta = 0.0f; // DDIM only
    std::optional<int> classLabel;
    uint64_t seed = 0;
    int height = 0, width = 0;       // 0: the model's sample_size
    std::optional<Tensor> initNoise; // [C, H, W]; replaces the seeded initial noise
    // The variance noise of loop step i ([C, H, W]); replaces the seeded noise when set.
    std::function<Tensor(int step)> stepNoise;
};

struct DenoiseStep {
    int timestep = 0;
    Tensor sample;       // x_t, the U-Net's input at this step
    Tensor noisePred;    // the U-Net's output
    Tensor predOriginal; // x̂0
};

class DenoiseSession {
public:
    static constexpr int kMaxSteps = 10000;

    // Validates everything up front (steps, eta, class, sizes, supplied noise) and draws the initial
    // noise. Throws attnlens::Error with a clear message.
    DenoiseSession(DiffusionModel model, DenoiseOptions options);

    const DiffusionModel& model() const { return m_model; }
    const DenoiseOptions& options() const { return m_options; }
    const std::vector<int>& timesteps() const { return m_scheduler.timesteps(); }
    int stepCount() const { return static_cast<int>(m_scheduler.timesteps().size()); }
    int completedSteps() const { return static_cast<int>(m_steps.size()); }
    bool done() const { return completedSteps() == stepCount(); }

    // Runs the next step (no-op when done); returns true while steps remain. With `attention`, the
    // step's forward captures every attention layer into it (what attentionAt(i) would recompute).
    bool step(const Callbacks* callbacks = nullptr, std::vector<UNetAttentionMap>* attention = nullptr);
    // Runs every remaining step, reporting progress after each; Cancelled propagates (the steps
    // completed so far stay).
    void run(const Callbacks* callbacks = nullptr);

    const DenoiseStep& stepAt(int i) const; // 0 <= i < completedSteps()
    const Tensor& initialNoise() const { return m_initNoise; }
    // The current sample: x_T before the first step, the final sample when done.
    const Tensor& current() const { return m_current; }
    const Tensor& finalSample() const; // throws unless done()

    // Step i's U-Net forward recomputed with every attention layer captured (the noise prediction
    // equals stepAt(i).noisePred).
    UNetOutput attentionAt(int i, const Callbacks* callbacks = nullptr) const;

    // Step i's U-Net forward again under `run` (e.g. heads ablated) and the x̂0 the scheduler derives from
    // that noise prediction (x̂0 does not depend on the step's variance noise).
    struct Prediction {
        UNetOutput unet;
        Tensor predOriginal;
    };
    Prediction predictAt(int i, const UNetRunOptions& run, const Callbacks* callbacks = nullptr) const;

private:
    Tensor noiseFor(int step);

    DiffusionModel m_model;
    DenoiseOptions m_options;
    Scheduler m_scheduler;
    NormalRng m_rng;
    Tensor m_initNoise, m_current;
    std::vector<DenoiseStep> m_steps;
};

// The x̂0 one scheduler step derives from a noise prediction at timestep t (independent of the variance
// noise). scheduler: with its timesteps set as for the run.
Tensor predictOriginal(const Scheduler& scheduler, const Tensor& noisePred, int timestep,
                       const Tensor& sample, float eta = 0.0f);

// model-space sample [C, H, W] → 8-bit image as the pipelines convert it: round(clamp(x/2 + 0.5, 0, 1)·255);
// 1 channel → grey, 3 → RGB, 4 → RGB (the 4th dropped), others → the first channel as grey.
ImageU8 sampleToImage(const Tensor& sample);

} // namespace attnlens
