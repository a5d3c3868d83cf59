#include "core/diffusion/sampler.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace attnlens {

namespace {

using Array = Eigen::Map<const Eigen::ArrayXf>;

Array arr(const Tensor& t) {
    return Array(t.data(), t.numel());
}
Tensor fromArray(const Shape& shape, const Eigen::ArrayXf& a) {
    Tensor t(shape);
    Eigen::Map<Eigen::ArrayXf>(t.data(), t.numel()) = a;
    return t;
}

// np.linspace(start, stop, num) in float64: i · step + start, the last value exactly stop.
std::vector<double> linspace(double start, double stop, int num) {
    std::vector<double> v(static_cast<size_t>(num));
    const double step = num > 1 ? (stop - start) / (num - 1) : 0.0;
    for (int i = 0; i < num; ++i)
        v[static_cast<size_t>(i)] = i * step + start;
    if (num > 1) v.back() = stop;
    return v;
}

// np.interp(x, arange(len(fp)), fp) in float64.
double interp(double x, const std::vector<float>& fp) {
    if (x <= 0) return fp.front();
    const auto last = static_cast<double>(fp.size() - 1);
    if (x >= last) return fp.back();
    const auto j = static_cast<size_t>(std::floor(x));
    if (x == static_cast<double>(j)) return fp[j];
    const double slope = (static_cast<double>(fp[j + 1]) - fp[j]) / 1.0;
    return slope * (x - static_cast<double>(j)) + fp[j];
}

// Descending integer timesteps: PNDM / Euler (`count` = steps) or DPM-Solver (its n + 1 grid, last dropped).
std::vector<double> spacedTimesteps(const SchedulerConfig& c, int steps, bool dpm) {
    const int n = c.numTrainTimesteps;
    std::vector<double> t;
    switch (c.spacing) {
    case TimestepSpacing::Linspace: {
        const auto v = linspace(0, n - 1, dpm ? steps + 1 : steps);
        for (auto it = v.rbegin(); it != v.rend(); ++it)
            t.push_back(dpm ? std::nearbyint(*it) : *it); // Euler keeps the fractions (float32 below)
        if (dpm) t.pop_back();
        break;
    }
    case TimestepSpacing::Leading: {
        const int ratio = dpm ? n / (steps + 1) : n / steps;
        for (int i = (dpm ? steps : steps - 1); i >= (dpm ? 1 : 0); --i)
            t.push_back(static_cast<double>(i) * ratio + c.stepsOffset);
        break;
    }
    case TimestepSpacing::Trailing: {
        const double delta = -static_cast<double>(n) / steps; // np.arange(n, 0, delta): n + i·delta
        const auto count = static_cast<int>(std::ceil((0.0 - n) / delta));
        for (int i = 0; i < count; ++i)
            t.push_back(std::nearbyint(n + i * delta) - 1);
        break;
    }
    }
    return t;
}

} // namespace

const char* samplerName(SamplerKind kind) {
    switch (kind) {
    case SamplerKind::Pndm:
        return "pndm";
    case SamplerKind::Ddim:
        return "ddim";
    case SamplerKind::Euler:
        return "euler";
    case SamplerKind::DpmSolver:
        return "dpm";
    }
    return "?";
}

std::optional<SamplerKind> parseSamplerName(std::string_view name) {
    for (SamplerKind k : {SamplerKind::Pndm, SamplerKind::Ddim, SamplerKind::Euler, SamplerKind::DpmSolver})
        if (name == samplerName(k)) return k;
    return std::nullopt;
}

std::optional<SamplerKind> samplerOfClass(std::string_view className) {
    if (className == "PNDMScheduler") return SamplerKind::Pndm;
    if (className == "DDIMScheduler") return SamplerKind::Ddim;
    if (className == "EulerDiscreteScheduler") return SamplerKind::Euler;
    if (className == "DPMSolverMultistepScheduler") return SamplerKind::DpmSolver;
    return std::nullopt;
}

Sampler::Sampler(SamplerKind kind, const JsonConfig& json) : m_kind(kind) {
    Json j = json.json().is_object() ? json.json() : Json::object();
    const auto fill = [&](const char* key, Json value) {
        if (!j.contains(key) || j[key].is_null()) j[key] = std::move(value);
    };
    const bool sigmas = kind == SamplerKind::Euler || kind == SamplerKind::DpmSolver;
    fill("timestep_spacing", sigmas ? "linspace" : "leading");
    fill("set_alpha_to_one", kind == SamplerKind::Ddim);
    fill("clip_sample", kind == SamplerKind::Ddim);
    fill("steps_offset", 0);
    j.erase("variance_type"); // DDPM's key (DPM-Solver's learned ranges are refused below)
    const JsonConfig cfg(j, json.path());
    m_config = SchedulerConfig::fromJson(cfg);
    m_ddim.emplace(SchedulerKind::Ddim, m_config);
    m_alphasCumprod = m_ddim->alphasCumprod();
    m_finalAlphaCumprod = m_config.setAlphaToOne ? 1.0f : m_alphasCumprod.front();
    if (kind == SamplerKind::Pndm && !cfg.value<bool>("skip_prk_steps", false))
        throw json.refuse(
            "skip_prk_steps",
            "is false or absent: PNDM's Runge-Kutta warm-up is not supported (Stable Diffusion's PNDM "
            "configs skip it; choose another scheduler)");
    if (sigmas) {
        if (cfg.value<bool>("use_karras_sigmas", false))
            throw json.refuse("use_karras_sigmas", "= true: not supported");
        if (cfg.value<bool>("use_lu_lambdas", false))
            throw json.refuse("use_lu_lambdas", "= true: not supported");
        if (cfg.value<std::string>("interpolation_type", "linear") != "linear")
            throw json.refuse("interpolation_type", "other than \"linear\" is not supported");
    }
    if (kind == SamplerKind::DpmSolver) {
        m_solverOrder = cfg.value<int>("solver_order", 2);
        if (m_solverOrder != 1 && m_solverOrder != 2) throw json.refuse("solver_order", "must be 1 or 2");
        const auto algorithm = cfg.value<std::string>("algorithm_type", "dpmsolver++");
        if (algorithm != "dpmsolver++" && algorithm != "dpmsolver")
            throw json.refuse("algorithm_type",
                              "= \"" + algorithm + "\" is not supported (dpmsolver++, dpmsolver)");
        m_dpmPlusPlus = algorithm == "dpmsolver++";
        const auto solver = cfg.value<std::string>("solver_type", "midpoint");
        if (solver != "midpoint" && solver != "heun")
            throw json.refuse("solver_type", "must be midpoint or heun");
        m_heun = solver == "heun";
        m_lowerOrderFinal = cfg.value<bool>("lower_order_final", true);
        m_eulerAtFinal = cfg.value<bool>("euler_at_final", false);
        if (cfg.has("lambda_min_clipped") && std::isfinite(cfg.get<float>("lambda_min_clipped")))
            throw json.refuse("lambda_min_clipped", "other than -inf is not supported");
    }
    if (m_config.predictionType == PredictionType::Sample && kind != SamplerKind::Ddim)
        throw json.refuse("prediction_type", "= \"sample\" is supported with DDIM only");
}

void Sampler::setTimesteps(int steps) {
    const int n = m_config.numTrainTimesteps;
    if (steps < 1 || steps > n)
        throw Error("the number of steps must be in 1.." + std::to_string(n) + ", got " +
                    std::to_string(steps));
    m_steps = steps;
    m_timesteps.clear();
    m_sigmas.clear();
    m_ets.clear();
    m_outputs.assign(static_cast<size_t>(m_solverOrder), Tensor());
    m_curSample = Tensor();
    m_counter = m_lowerOrderNums = 0;
    m_nextCall = 0;
    switch (m_kind) {
    case SamplerKind::Ddim:
        m_ddim->setTimesteps(steps);
        for (int t : m_ddim->timesteps())
            m_timesteps.push_back(static_cast<float>(t));
        break;
    case SamplerKind::Pndm: { // PLMS: ascending _timesteps, the second-to-last repeated, reversed
        auto t = spacedTimesteps(m_config, steps, false);
        std::vector<double> asc(t.rbegin(), t.rend());
        if (m_config.spacing == TimestepSpacing::Linspace)
            for (auto& v : asc)
                v = std::nearbyint(v);
        std::vector<double> plms(asc.begin(), asc.end() - 1);
        if (asc.size() >= 2) plms.push_back(asc[asc.size() - 2]);
        plms.push_back(asc.back());
        for (auto it = plms.rbegin(); it != plms.rend(); ++it)
            m_timesteps.push_back(static_cast<float>(*it));
        break;
    }
    case SamplerKind::Euler:
    case SamplerKind::DpmSolver: {
        const bool dpm = m_kind == SamplerKind::DpmSolver;
        std::vector<float> all(m_alphasCumprod.size());
        for (size_t i = 0; i < all.size(); ++i)
            all[i] = std::sqrt((1.0f - m_alphasCumprod[i]) / m_alphasCumprod[i]);
        for (double t : spacedTimesteps(m_config, steps, dpm)) {
            const double at =
                dpm ? t : static_cast<double>(static_cast<float>(t)); // Euler: float32 timesteps
            m_timesteps.push_back(static_cast<float>(at));
            m_sigmas.push_back(static_cast<float>(interp(at, all)));
        }
        m_sigmas.push_back(dpm ? all.front() : 0.0f);
        break;
    }
    }
    for (float t : m_timesteps)
        if (t < 0 || t > static_cast<float>(n - 1))
            throw Error("scheduler: timestep " + std::to_string(t) + " lies outside 0.." +
                        std::to_string(n - 1) + " (steps_offset " + std::to_string(m_config.stepsOffset) +
                        ")");
}

float Sampler::initNoiseSigma() const {
    if (m_kind != SamplerKind::Euler) return 1.0f;
    if (m_sigmas.empty()) throw Error("scheduler: setTimesteps() was not called");
    const float top = *std::max_element(m_sigmas.begin(), m_sigmas.end());
    return m_config.spacing == TimestepSpacing::Leading ? std::sqrt(top * top + 1.0f) : top;
}

Tensor Sampler::scaleModelInput(const Tensor& sample, size_t call) const {
    if (m_kind != SamplerKind::Euler) return sample;
    if (call >= m_timesteps.size()) throw Error("scheduler: call " + std::to_string(call) + " out of range");
    const float sigma = m_sigmas[call];
    const float scale = std::sqrt(sigma * sigma + 1.0f);
    return fromArray(sample.shape(), arr(sample) / scale);
}

Tensor Sampler::step(const Tensor& out, size_t call, const Tensor& sample) {
    if (m_steps == 0) throw Error("scheduler: setTimesteps() was not called");
    if (call != m_nextCall || call >= m_timesteps.size())
        throw Error("scheduler: call " + std::to_string(call) + " out of order (expected " +
                    std::to_string(m_nextCall) + " of " + std::to_string(m_timesteps.size()) + ")");
    if (out.shape() != sample.shape())
        throw Error("scheduler: model output " + shapeToString(out.shape()) + " and sample " +
                    shapeToString(sample.shape()) + " differ in shape");
    ++m_nextCall;
    switch (m_kind) {
    case SamplerKind::Ddim:
        return m_ddim->step(out, static_cast<int>(m_timesteps[call]), sample, nullptr, 0.0f).prevSample;
    case SamplerKind::Pndm:
        return stepPlms(out, sample);
    case SamplerKind::Euler:
        return stepEuler(out, call, sample);
    case SamplerKind::DpmSolver:
        return stepDpm(out, call, sample);
    }
    return sample;
}

// PNDMScheduler.step_plms and _get_prev_sample.
Tensor Sampler::stepPlms(const Tensor& out, const Tensor& sample) {
    const int ratio = m_config.numTrainTimesteps / m_steps;
    int t = static_cast<int>(m_timesteps[static_cast<size_t>(m_counter)]);
    int prev = t - ratio;
    if (m_counter != 1) {
        if (m_ets.size() > 3) m_ets.erase(m_ets.begin(), m_ets.end() - 3);
        m_ets.push_back(out);
    } else {
        prev = t;
        t += ratio;
    }
    Eigen::ArrayXf e;
    Tensor x = sample;
    const size_t k = m_ets.size();
    const auto et = [&](size_t back) { return arr(m_ets[k - back]); };
    if (k == 1 && m_counter == 0) {
        e = arr(out);
        m_curSample = sample;
    } else if (k == 1 && m_counter == 1) {
        e = (arr(out) + et(1)) / 2.0f;
        x = m_curSample;
        m_curSample = Tensor();
    } else if (k == 2) {
        e = (3.0f * et(1) - et(2)) / 2.0f;
    } else if (k == 3) {
        e = (23.0f * et(1) - 16.0f * et(2) + 5.0f * et(3)) / 12.0f;
    } else {
        e = static_cast<float>(1.0 / 24.0) * (55.0f * et(1) - 59.0f * et(2) + 37.0f * et(3) - 9.0f * et(4));
    }
    ++m_counter;
    const float a = m_alphasCumprod[static_cast<size_t>(t)];
    const float aPrev = prev >= 0 ? m_alphasCumprod[static_cast<size_t>(prev)] : m_finalAlphaCumprod;
    const float b = 1.0f - a, bPrev = 1.0f - aPrev;
    if (m_config.predictionType == PredictionType::VPrediction) e = std::sqrt(a) * e + std::sqrt(b) * arr(x);
    const float sampleCoeff = std::sqrt(aPrev / a);
    const float denom = a * std::sqrt(bPrev) + std::sqrt(a * b * aPrev);
    return fromArray(sample.shape(), sampleCoeff * arr(x) - ((aPrev - a) * e) / denom);
}

// EulerDiscreteScheduler.step without churn (s_churn = 0: no noise).
Tensor Sampler::stepEuler(const Tensor& out, size_t call, const Tensor& sample) const {
    const float sigma = m_sigmas[call];
    const Array x = arr(sample), o = arr(out);
    Eigen::ArrayXf x0;
    if (m_config.predictionType == PredictionType::VPrediction)
        x0 = o * (-sigma / std::sqrt(sigma * sigma + 1.0f)) + (x / (sigma * sigma + 1.0f));
    else
        x0 = x - sigma * o;
    const Eigen::ArrayXf derivative = (x - x0) / sigma;
    const float dt = m_sigmas[call + 1] - sigma;
    return fromArray(sample.shape(), x + derivative * dt);
}

// DPMSolverMultistepScheduler.step: convert_model_output, then the first- or second-order update.
Tensor Sampler::stepDpm(const Tensor& out, size_t call, const Tensor& sample) {
    const size_t count = m_timesteps.size();
    const bool lowerFinal = call == count - 1 && (m_eulerAtFinal || (m_lowerOrderFinal && count < 15));
    const auto alphaSigma = [](float s) {
        const float alpha = 1.0f / std::sqrt(s * s + 1.0f);
        return std::pair<float, float>{alpha, s * alpha};
    };
    const auto [alphaS0, sigmaS0] = alphaSigma(m_sigmas[call]);
    const Array x = arr(sample), o = arr(out);
    Eigen::ArrayXf converted;
    const bool v = m_config.predictionType == PredictionType::VPrediction;
    if (m_dpmPlusPlus)
        converted =
            v ? Eigen::ArrayXf(alphaS0 * x - sigmaS0 * o) : Eigen::ArrayXf((x - sigmaS0 * o) / alphaS0);
    else
        converted = v ? Eigen::ArrayXf(alphaS0 * o + sigmaS0 * x) : Eigen::ArrayXf(o);
    std::rotate(m_outputs.begin(), m_outputs.begin() + 1, m_outputs.end());
    m_outputs.back() = fromArray(out.shape(), converted);

    const auto [alphaT, sigmaT] = alphaSigma(m_sigmas[call + 1]);
    const float lambdaT = std::log(alphaT) - std::log(sigmaT);
    const float lambdaS0 = std::log(alphaS0) - std::log(sigmaS0);
    const float h = lambdaT - lambdaS0;
    const Array m0 = arr(m_outputs.back());
    Eigen::ArrayXf next;
    if (m_solverOrder == 1 || m_lowerOrderNums < 1 || lowerFinal) {
        next = m_dpmPlusPlus ? Eigen::ArrayXf((sigmaT / sigmaS0) * x - (alphaT * (std::exp(-h) - 1.0f)) * m0)
                             : Eigen::ArrayXf((alphaT / alphaS0) * x - (sigmaT * (std::exp(h) - 1.0f)) * m0);
    } else {
        const auto [alphaS1, sigmaS1] = alphaSigma(m_sigmas[call - 1]);
        const float lambdaS1 = std::log(alphaS1) - std::log(sigmaS1);
        const float h0 = lambdaS0 - lambdaS1, r0 = h0 / h;
        const Array m1 = arr(m_outputs[m_outputs.size() - 2]);
        const Eigen::ArrayXf d1 = (1.0f / r0) * (m0 - m1);
        if (m_dpmPlusPlus) {
            const float c = alphaT * (std::exp(-h) - 1.0f);
            next = m_heun ? Eigen::ArrayXf((sigmaT / sigmaS0) * x - c * m0 +
                                           (alphaT * ((std::exp(-h) - 1.0f) / h + 1.0f)) * d1)
                          : Eigen::ArrayXf((sigmaT / sigmaS0) * x - c * m0 - (0.5f * c) * d1);
        } else {
            const float c = sigmaT * (std::exp(h) - 1.0f);
            next = m_heun ? Eigen::ArrayXf((alphaT / alphaS0) * x - c * m0 -
                                           (sigmaT * ((std::exp(h) - 1.0f) / h - 1.0f)) * d1)
                          : Eigen::ArrayXf((alphaT / alphaS0) * x - c * m0 - (0.5f * c) * d1);
        }
    }
    if (m_lowerOrderNums < m_solverOrder) ++m_lowerOrderNums;
    return fromArray(sample.shape(), next);
}

} // namespace attnlens
