#include "core/layers/rotary.h"

#include "core/util/error.h"

#include <cmath>
#include <string>
#include <vector>

namespace attnlens {

std::vector<float> RotaryEmbedding::defaultInverseFrequencies(float base, int rotaryDim) {
    std::vector<float> theta(static_cast<size_t>(rotaryDim / 2));
    for (size_t i = 0; i < theta.size(); ++i)
        theta[i] = 1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(rotaryDim));
    return theta;
}

void RotaryEmbedding::apply(RowMatrix& x, int heads, int64_t firstPosition) const {
    if (rotaryDim % 2 != 0 || rotaryDim > headDim || rotaryDim <= 0)
        throw Error("rotary embedding: " + std::to_string(rotaryDim) + " rotary dimensions for a head of " +
                    std::to_string(headDim));
    if (x.cols() != static_cast<Eigen::Index>(heads) * headDim)
        throw Error("rotary embedding: " + std::to_string(x.cols()) + " columns, expected " +
                    std::to_string(heads) + " heads × " + std::to_string(headDim));
    const int half = rotaryDim / 2;
    if (!inverseFrequencies.empty() && inverseFrequencies.size() != static_cast<size_t>(half))
        throw Error("rotary embedding: " + std::to_string(inverseFrequencies.size()) + " frequencies for " +
                    std::to_string(rotaryDim) + " rotary dimensions");
    const std::vector<float> theta =
        inverseFrequencies.empty() ? defaultInverseFrequencies(base, rotaryDim) : inverseFrequencies;
    std::vector<float> cosines(static_cast<size_t>(half)), sines(static_cast<size_t>(half));
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        const auto p = static_cast<float>(firstPosition + r);
        for (int i = 0; i < half; ++i) {
            const float angle = p * theta[size_t(i)];
            cosines[size_t(i)] = std::cos(angle) * attentionScaling;
            sines[size_t(i)] = std::sin(angle) * attentionScaling;
        }
        float* row = x.row(r).data();
        for (int h = 0; h < heads; ++h) {
            float* v = row + static_cast<int64_t>(h) * headDim;
            const int stride = interleaved ? 2 : 1, partner = interleaved ? 1 : half;
            for (int i = 0; i < half; ++i) {
                float* a = v + i * stride;
                const float x1 = a[0], x2 = a[partner];
                a[0] = x1 * cosines[size_t(i)] - x2 * sines[size_t(i)];
                a[partner] = x2 * cosines[size_t(i)] + x1 * sines[size_t(i)];
            }
        }
    }
}

} // namespace attnlens
