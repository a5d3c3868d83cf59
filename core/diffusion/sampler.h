#pragma once
// The schedulers of Stable Diffusion pipelines as StableDiffusionPipeline.__call__ drives them (diffusers
// v0.25): PNDMScheduler (PLMS with skip_prk_steps: S steps are S + 1 U-Net calls), DDIMScheduler (eta 0),
// EulerDiscreteScheduler and DPMSolverMultistepScheduler (DPM-Solver++ / DPM-Solver, order 1 or 2,
// midpoint or heun). Stateful where diffusers' are (PLMS keeps its last outputs, DPM-Solver its last
// x̂0); float32 arithmetic in diffusers' order.
//
//   Sampler s(SamplerKind::Euler, JsonConfig(pipe / "scheduler/scheduler_config.json"));
//   s.setTimesteps(25);
//   x = x · s.initNoiseSigma();
//   for (size_t i = 0; i < s.timesteps().size(); ++i)
//       x = s.step(unet(s.scaleModelInput(x, i), s.timesteps()[i]), i, x);

#include "core/diffusion/scheduler.h"
#include "core/io/json_file.h"
#include "core/tensor/tensor.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

enum class SamplerKind { Pndm, Ddim, Euler, DpmSolver };
const char* samplerName(SamplerKind kind); // "pndm", "ddim", "euler", "dpm"
std::optional<SamplerKind> parseSamplerName(std::string_view name);
// PNDMScheduler → Pndm, …; nullopt for a class this file does not run.
std::optional<SamplerKind> samplerOfClass(std::string_view className);

class Sampler {
public:
    // `kind` built from a scheduler_config.json as `Class.from_config(config)` does: the keys the file has,
    // the class's own defaults for the others (timestep_spacing "linspace" for Euler and DPM-Solver,
    // set_alpha_to_one false for PNDM, …). Throws attnlens::Error naming the key for unsupported values
    // (Karras sigmas, SDE or third-order solvers, PNDM's Runge-Kutta warm-up).
    Sampler(SamplerKind kind, const JsonConfig& json);

    SamplerKind kind() const { return m_kind; }
    const SchedulerConfig& config() const { return m_config; }

    // Prepares `steps` inference steps (1..num_train_timesteps) and resets the state.
    void setTimesteps(int steps);
    // The U-Net's timestep at each call, in order (PLMS: steps + 1 of them).
    const std::vector<float>& timesteps() const { return m_timesteps; }
    // What the initial noise is multiplied by (Euler: its largest sigma, or sqrt(σ² + 1)).
    float initNoiseSigma() const;
    // The U-Net's input at call i (Euler divides by sqrt(σ² + 1); the others pass it on).
    Tensor scaleModelInput(const Tensor& sample, size_t call) const;
    // The sample after call i from the U-Net's output at that call. Calls must come in order from 0.
    Tensor step(const Tensor& modelOutput, size_t call, const Tensor& sample);

private:
    Tensor stepPlms(const Tensor& out, const Tensor& sample);
    Tensor stepEuler(const Tensor& out, size_t call, const Tensor& sample) const;
    Tensor stepDpm(const Tensor& out, size_t call, const Tensor& sample);

    SamplerKind m_kind;
    SchedulerConfig m_config;
    std::vector<float> m_alphasCumprod;
    float m_finalAlphaCumprod = 1.0f;
    std::optional<Scheduler> m_ddim;
    int m_solverOrder = 2;
    bool m_dpmPlusPlus = true, m_heun = false, m_lowerOrderFinal = true, m_eulerAtFinal = false;

    int m_steps = 0;
    std::vector<float> m_timesteps;
    std::vector<float> m_sigmas;   // Euler / DPM-Solver: one per call, then the last
    std::vector<Tensor> m_ets;     // PLMS: the last U-Net outputs
    Tensor m_curSample;            // PLMS: the sample its second call restarts from
    std::vector<Tensor> m_outputs; // DPM-Solver: the last converted outputs (x̂0)
    int m_counter = 0, m_lowerOrderNums = 0;
    size_t m_nextCall = 0;
};

} // namespace attnlens
