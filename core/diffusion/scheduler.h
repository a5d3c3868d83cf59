#pragma once
// DDPM and DDIM schedulers exactly as diffusers v0.25's DDPMScheduler / DDIMScheduler (float32
// arithmetic in diffusers' order), built from a scheduler_config.json. DDIM is built from the same
// config the way DDIMPipeline does (DDIMScheduler.from_config: keys it does not know are ignored).
//
//   Scheduler s(SchedulerKind::Ddim, SchedulerConfig::fromJson(cfg));
//   s.setTimesteps(50);                                  // s.timesteps(): 980, 960, ..., 0
//   for (size_t i = 0; i < s.timesteps().size(); ++i) {
//       Tensor eps = unet->forward(x, t, cls).noisePred;
//       SchedulerStep r = s.step(eps, s.timesteps()[i], x, noiseOrNull, eta);
//       x = r.prevSample;                                // r.predOriginal: x̂0
//   }

#include "core/io/json_file.h"
#include "core/tensor/tensor.h"

#include <string>
#include <vector>

namespace attnlens {

enum class SchedulerKind { Ddpm, Ddim };
enum class PredictionType { Epsilon, Sample, VPrediction };
enum class VarianceType { FixedSmall, FixedLarge };
enum class TimestepSpacing { Leading, Linspace, Trailing };

struct SchedulerConfig {
    int numTrainTimesteps = 1000;
    std::vector<float> betas; // [numTrainTimesteps], from beta_schedule (or trained_betas)
    std::string betaSchedule = "linear";
    VarianceType varianceType = VarianceType::FixedSmall;
    bool clipSample = true;
    float clipSampleRange = 1.0f;
    PredictionType predictionType = PredictionType::Epsilon;
    TimestepSpacing spacing = TimestepSpacing::Leading;
    int stepsOffset = 0;
    bool setAlphaToOne = true; // DDIM only
    std::string className;     // "_class_name": the scheduler the folder was saved with (empty: none named)

    // DDPMScheduler()'s defaults (what a bare UNet folder gets).
    static SchedulerConfig defaults();
    // Throws attnlens::Error naming the file and field for unsupported values (thresholding,
    // rescale_betas_zero_snr, learned variances, unknown schedules).
    static SchedulerConfig fromJson(const JsonConfig& json);
};

struct SchedulerStep {
    Tensor prevSample;   // x_{t-1}
    Tensor predOriginal; // x̂0 (after clipping when clip_sample)
};

class Scheduler {
public:
    Scheduler(SchedulerKind kind, SchedulerConfig config);

    SchedulerKind kind() const { return m_kind; }
    const SchedulerConfig& config() const { return m_config; }
    const std::vector<float>& alphasCumprod() const { return m_alphasCumprod; }

    // The inference timesteps for `steps` steps (1..numTrainTimesteps), descending.
    void setTimesteps(int steps);
    const std::vector<int>& timesteps() const { return m_timesteps; }
    // Whether step() at timestep t needs variance noise (DDPM: t > 0; DDIM: eta > 0).
    bool needsNoise(int t, float eta) const;

    // One reverse step. modelOutput, sample and noise: the same shape. noise: the variance noise of
    // this step (required when needsNoise(t, eta); ignored otherwise). eta: DDIM only.
    SchedulerStep step(const Tensor& modelOutput, int t, const Tensor& sample, const Tensor* noise,
                       float eta = 0.0f) const;

private:
    SchedulerKind m_kind;
    SchedulerConfig m_config;
    std::vector<float> m_alphasCumprod;
    float m_finalAlphaCumprod = 1.0f;
    std::vector<int> m_timesteps;
    int m_inferenceSteps = 0;
};

} // namespace attnlens
