#include "core/util/random.h"

#include <cmath>

namespace attnlens {

float NormalRng::next() {
    if (m_haveSpare) {
        m_haveSpare = false;
        return static_cast<float>(m_spare);
    }
    const auto uniform = [this] {
        return (static_cast<double>(m_engine() >> 11) + 1.0) * 0x1.0p-53;
    }; // (0, 1]
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double theta = 2.0 * M_PI * uniform();
    m_spare = r * std::sin(theta);
    m_haveSpare = true;
    return static_cast<float>(r * std::cos(theta));
}

Tensor NormalRng::tensor(const Shape& shape) {
    Tensor t(shape);
    for (float& v : t.values())
        v = next();
    return t;
}

} // namespace attnlens
