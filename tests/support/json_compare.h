#pragma once
// Compares a tensor with a nested JSON array (goldens written by the Python tools). Header-only.

#include "core/io/json_file.h"
#include "core/tensor/tensor.h"

#include <QtGlobal>

#include <cmath>
#include <functional>
#include <vector>

namespace jsontest {

// The JSON array's values in row-major order.
inline std::vector<float> flatten(const attnlens::Json& j) {
    std::vector<float> flat;
    std::function<void(const attnlens::Json&)> walk = [&](const attnlens::Json& x) {
        if (x.is_array())
            for (const auto& e : x)
                walk(e);
        else
            flat.push_back(x.get<float>());
    };
    walk(j);
    return flat;
}

// Largest |a − b| over a tensor and a nested JSON array of the same shape (shape checked first:
// a size bug is reported as such, as infinity).
inline double maxDiff(const attnlens::Tensor& t, const attnlens::Json& j) {
    attnlens::Shape shape;
    for (const attnlens::Json* c = &j; c->is_array(); c = &(*c)[0]) {
        shape.push_back(static_cast<int64_t>(c->size()));
        if (c->empty()) break;
    }
    if (shape != t.shape()) {
        qWarning("shape %s vs golden %s", attnlens::shapeToString(t.shape()).c_str(),
                 attnlens::shapeToString(shape).c_str());
        return INFINITY;
    }
    const std::vector<float> flat = flatten(j);
    double worst = 0;
    for (int64_t i = 0; i < t.numel(); ++i)
        worst = std::max(worst, std::abs(double(t.data()[i]) - double(flat[size_t(i)])));
    return worst;
}

} // namespace jsontest
