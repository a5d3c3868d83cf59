#include "core/diffusion/scheduler.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace attnlens {

namespace {

// torch.linspace(start, end, n, dtype=float32) as its CPU kernel computes it (float step, the
// second half counted back from the end).
std::vector<float> linspaceF32(float start, float end, int n) {
    std::vector<float> v(static_cast<size_t>(n));
    if (n == 1) {
        v[0] = start;
        return v;
    }
    const float step = (end - start) / static_cast<float>(n - 1);
    const int halfway = n / 2;
    for (int i = 0; i < n; ++i)
        v[static_cast<size_t>(i)] =
            i < halfway ? start + step * static_cast<float>(i) : end - step * static_cast<float>(n - i - 1);
    return v;
}

std::vector<float> makeBetas(const std::string& schedule, float start, float end, int n,
                             const std::string& where) {
    if (schedule == "linear") return linspaceF32(start, end, n);
    if (schedule == "scaled_linear") {
        auto v = linspaceF32(std::sqrt(start), std::sqrt(end), n); // python floats ** 0.5, then float32
        for (auto& b : v)
            b = b * b;
        return v;
    }
    if (schedule == "squaredcos_cap_v2") { // betas_for_alpha_bar (cosine), in double, stored as float32
        const auto alphaBar = [](double t) {
            const double c = std::cos((t + 0.008) / 1.008 * M_PI / 2.0);
            return c * c;
        };
        std::vector<float> v(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            const double t1 = static_cast<double>(i) / n, t2 = static_cast<double>(i + 1) / n;
            v[static_cast<size_t>(i)] =
                static_cast<float>(std::min(1.0 - alphaBar(t2) / alphaBar(t1), 0.999));
        }
        return v;
    }
    if (schedule == "sigmoid") {
        auto v = linspaceF32(-6.0f, 6.0f, n);
        for (auto& b : v)
            b = 1.0f / (1.0f + std::exp(-b)) * (end - start) + start;
        return v;
    }
    throw Error(where + ": beta_schedule \"" + schedule +
                "\" is not supported (supported: linear, scaled_linear, squaredcos_cap_v2, sigmoid)");
}

} // namespace

SchedulerConfig SchedulerConfig::defaults() {
    SchedulerConfig c;
    c.betas = makeBetas("linear", 0.0001f, 0.02f, c.numTrainTimesteps, "DDPMScheduler");
    return c;
}

SchedulerConfig SchedulerConfig::fromJson(const JsonConfig& json) {
    const std::string where = json.path().string();
    const auto refuse = [&](const std::string& key, const std::string& found, const std::string& allowed) {
        return Error(where + ": " + key + " = " + found + " is not supported (supported: " + allowed + ")");
    };
    SchedulerConfig c;
    c.className = json.value<std::string>("_class_name", "");
    c.numTrainTimesteps = json.value<int>("num_train_timesteps", 1000);
    if (c.numTrainTimesteps < 1 || c.numTrainTimesteps > 100000)
        throw Error(where + ": num_train_timesteps must be in 1..100000");
    c.betaSchedule = json.value<std::string>("beta_schedule", "linear");
    if (json.has("trained_betas")) {
        c.betas = json.get<std::vector<float>>("trained_betas");
        if (static_cast<int>(c.betas.size()) != c.numTrainTimesteps)
            throw Error(where + ": trained_betas has " + std::to_string(c.betas.size()) +
                        " values, expected num_train_timesteps = " + std::to_string(c.numTrainTimesteps));
    } else {
        c.betas = makeBetas(c.betaSchedule, json.value<float>("beta_start", 0.0001f),
                            json.value<float>("beta_end", 0.02f), c.numTrainTimesteps, where);
    }
    for (float b : c.betas)
        if (!(b > 0.0f && b < 1.0f)) throw Error(where + ": every beta must lie in (0, 1)");
    const auto variance = json.value<std::string>("variance_type", "fixed_small");
    if (variance == "fixed_small")
        c.varianceType = VarianceType::FixedSmall;
    else if (variance == "fixed_large")
        c.varianceType = VarianceType::FixedLarge;
    else
        throw refuse("variance_type", "\"" + variance + "\"", "fixed_small, fixed_large");
    c.clipSample = json.value<bool>("clip_sample", true);
    c.clipSampleRange = json.value<float>("clip_sample_range", 1.0f);
    const auto pred = json.value<std::string>("prediction_type", "epsilon");
    if (pred == "epsilon")
        c.predictionType = PredictionType::Epsilon;
    else if (pred == "sample")
        c.predictionType = PredictionType::Sample;
    else if (pred == "v_prediction")
        c.predictionType = PredictionType::VPrediction;
    else
        throw refuse("prediction_type", "\"" + pred + "\"", "epsilon, sample, v_prediction");
    if (json.value<bool>("thresholding", false)) throw refuse("thresholding", "true", "false");
    if (json.value<bool>("rescale_betas_zero_snr", false))
        throw refuse("rescale_betas_zero_snr", "true", "false");
    const auto spacing = json.value<std::string>("timestep_spacing", "leading");
    if (spacing == "leading")
        c.spacing = TimestepSpacing::Leading;
    else if (spacing == "linspace")
        c.spacing = TimestepSpacing::Linspace;
    else if (spacing == "trailing")
        c.spacing = TimestepSpacing::Trailing;
    else
        throw refuse("timestep_spacing", "\"" + spacing + "\"", "leading, linspace, trailing");
    c.stepsOffset = json.value<int>("steps_offset", 0);
    c.setAlphaToOne = json.value<bool>("set_alpha_to_one", true);
    return c;
}

Scheduler::Scheduler(SchedulerKind kind, SchedulerConfig config) : m_kind(kind), m_config(std::move(config)) {
    if (static_cast<int>(m_config.betas.size()) != m_config.numTrainTimesteps)
        throw Error("scheduler: " + std::to_string(m_config.betas.size()) + " betas for " +
                    std::to_string(m_config.numTrainTimesteps) + " training timesteps");
    m_alphasCumprod.resize(m_config.betas.size());
    float prod = 1.0f;
    for (size_t i = 0; i < m_config.betas.size(); ++i)
        m_alphasCumprod[i] = prod = prod * (1.0f - m_config.betas[i]);
    m_finalAlphaCumprod = m_config.setAlphaToOne ? 1.0f : m_alphasCumprod.front();
}

void Scheduler::setTimesteps(int steps) {
    const int n = m_config.numTrainTimesteps;
    if (steps < 1 || steps > n)
        throw Error("the number of steps must be in 1.." + std::to_string(n) +
                    " (the model was trained with " + std::to_string(n) + " timesteps), got " +
                    std::to_string(steps));
    std::vector<int> ts;
    switch (m_config.spacing) {
    case TimestepSpacing::Linspace: // np.linspace(0, n - 1, steps).round()[::-1]
        for (int i = steps - 1; i >= 0; --i) {
            const double v = steps == 1 ? 0.0 : static_cast<double>(n - 1) * i / (steps - 1);
            ts.push_back(static_cast<int>(std::nearbyint(v)));
        }
        break;
    case TimestepSpacing::Leading: // (arange(steps) · (n // steps))[::-1] + steps_offset
        for (int i = steps - 1; i >= 0; --i)
            ts.push_back(i * (n / steps) + m_config.stepsOffset);
        break;
    case TimestepSpacing::Trailing: { // round(arange(n, 0, -n / steps)) − 1
        const double delta = -static_cast<double>(n) / steps;
        const auto count = static_cast<int>(std::ceil((0.0 - n) / delta));
        for (int i = 0; i < count; ++i)
            ts.push_back(static_cast<int>(std::nearbyint(n + i * delta)) - 1);
        break;
    }
    }
    for (int t : ts)
        if (t < 0 || t >= n)
            throw Error("scheduler: timestep " + std::to_string(t) + " lies outside 0.." +
                        std::to_string(n - 1) + " (steps_offset " + std::to_string(m_config.stepsOffset) +
                        ")");
    m_timesteps = std::move(ts);
    m_inferenceSteps = steps;
}

bool Scheduler::needsNoise(int t, float eta) const {
    return m_kind == SchedulerKind::Ddpm ? t > 0 : eta > 0.0f;
}

SchedulerStep Scheduler::step(const Tensor& modelOutput, int t, const Tensor& sample, const Tensor* noise,
                              float eta) const {
    if (m_inferenceSteps == 0) throw Error("scheduler: setTimesteps() was not called");
    const int n = m_config.numTrainTimesteps;
    if (t < 0 || t >= n) throw Error("scheduler: timestep " + std::to_string(t) + " out of range");
    if (modelOutput.shape() != sample.shape())
        throw Error("scheduler: model output " + shapeToString(modelOutput.shape()) + " and sample " +
                    shapeToString(sample.shape()) + " differ in shape");
    const bool withNoise = needsNoise(t, eta);
    if (withNoise && (!noise || noise->shape() != sample.shape()))
        throw Error("scheduler: step at timestep " + std::to_string(t) + " needs variance noise of shape " +
                    shapeToString(sample.shape()));
    const int prev = t - n / m_inferenceSteps;
    const float aT = m_alphasCumprod[static_cast<size_t>(t)];
    const float aPrev = prev >= 0 ? m_alphasCumprod[static_cast<size_t>(prev)]
                                  : (m_kind == SchedulerKind::Ddpm ? 1.0f : m_finalAlphaCumprod);
    const float bT = 1.0f - aT, bPrev = 1.0f - aPrev;
    const float sqA = std::sqrt(aT), sqB = std::sqrt(bT);

    const auto out = ConstVectorMap(modelOutput.data(), modelOutput.numel()).array();
    const auto x = ConstVectorMap(sample.data(), sample.numel()).array();
    SchedulerStep r{Tensor(sample.shape()), Tensor(sample.shape())};
    auto x0 = VectorMap(r.predOriginal.data(), sample.numel()).array();
    Eigen::ArrayXf eps;
    switch (m_config.predictionType) {
    case PredictionType::Epsilon:
        x0 = (x - sqB * out) / sqA;
        eps = out;
        break;
    case PredictionType::Sample:
        x0 = out;
        eps = (x - sqA * x0) / sqB;
        break;
    case PredictionType::VPrediction:
        x0 = sqA * x - sqB * out;
        eps = sqA * out + sqB * x;
        break;
    }
    if (m_config.clipSample) x0 = x0.cwiseMax(-m_config.clipSampleRange).cwiseMin(m_config.clipSampleRange);
    auto prevX = VectorMap(r.prevSample.data(), sample.numel()).array();

    if (m_kind == SchedulerKind::Ddpm) {
        const float curA = aT / aPrev, curB = 1.0f - curA;
        const float x0Coeff = (std::sqrt(aPrev) * curB) / bT;
        const float xCoeff = std::sqrt(curA) * bPrev / bT;
        prevX = x0Coeff * x0 + xCoeff * x;
        if (withNoise) {
            const float variance = m_config.varianceType == VarianceType::FixedSmall
                                       ? std::max(bPrev / bT * curB, 1e-20f)
                                       : curB;
            prevX += std::sqrt(variance) * ConstVectorMap(noise->data(), noise->numel()).array();
        }
    } else {
        const float variance = (bPrev / bT) * (1.0f - aT / aPrev);
        const float std = eta * std::sqrt(variance);
        const float dirCoeff = std::sqrt(1.0f - aPrev - std * std);
        prevX = std::sqrt(aPrev) * x0 + dirCoeff * eps;
        if (withNoise) prevX += std * ConstVectorMap(noise->data(), noise->numel()).array();
    }
    return r;
}

} // namespace attnlens
