#include "core/io/weight_binder.h"

#include "core/util/error.h"

namespace attnlens {

bool WeightBinder::checkShapeAndType(const TensorInfo& info, const Shape& shape) {
    // Accept a shape that differs only by leading 1s (e.g. final_logits_bias [1, V] vs [V]).
    Shape a = info.shape, b = shape;
    while (!a.empty() && a.front() == 1 && a.size() > b.size())
        a.erase(a.begin());
    while (!b.empty() && b.front() == 1 && b.size() > a.size())
        b.erase(b.begin());
    if (a != b) {
        m_problems.push_back("'" + info.name + "' has shape " + shapeToString(info.shape) + ", expected " +
                             shapeToString(shape));
        return false;
    }
    if (!isFloatWeightType(info.dtype) ||
        (info.dtype == DType::Ggml && !ggmlTypeInfo(info.ggml)->dequantizes)) {
        m_problems.push_back(
            "'" + info.name + "' has dtype " +
            std::string(info.dtype == DType::Ggml ? ggmlTypeInfo(info.ggml)->name : dtypeName(info.dtype)) +
            ", expected F32, F16, BF16 or a GGML block type this build decodes");
        return false;
    }
    if (m_callbacks) m_callbacks->checkCancel();
    return true;
}

Tensor WeightBinder::loadChecked(const TensorInfo& info, const Shape& shape) {
    if (!checkShapeAndType(info, shape)) return {};
    try {
        return m_file.load(info).reshaped(shape);
    } catch (const Error& e) {
        m_problems.push_back(e.what());
        return {};
    }
}

Tensor WeightBinder::require(const std::string& name, const Shape& shape) {
    const TensorInfo* info = m_file.find(name);
    if (!info) {
        m_problems.push_back("'" + name + "' is missing (expected shape " + shapeToString(shape) + ")");
        return {};
    }
    return loadChecked(*info, shape);
}

Tensor WeightBinder::optional(const std::string& name, const Shape& shape) {
    const TensorInfo* info = m_file.find(name);
    if (!info) return {};
    return loadChecked(*info, shape);
}

WeightBinder::Stored WeightBinder::requireStored(const std::string& name, const Shape& shape) {
    const TensorInfo* info = m_file.find(name);
    if (!info || info->dtype == DType::F32 || shape.size() != 2) return {require(name, shape), {}};
    if (!checkShapeAndType(*info, shape)) return {};
    try {
        return {{}, m_file.loadHalf(*info)};
    } catch (const Error& e) {
        m_problems.push_back(e.what());
        return {};
    }
}

void WeightBinder::finish(const std::string& context) const {
    if (m_problems.empty()) return;
    std::string msg = context + ": " + std::to_string(m_problems.size()) + " weight problem" +
                      (m_problems.size() == 1 ? "" : "s") + ": ";
    const size_t shown = std::min<size_t>(m_problems.size(), 20);
    for (size_t i = 0; i < shown; ++i)
        msg += (i ? "; " : "") + m_problems[i];
    if (shown < m_problems.size()) msg += "; ... and " + std::to_string(m_problems.size() - shown) + " more";
    throw Error(msg);
}

} // namespace attnlens
