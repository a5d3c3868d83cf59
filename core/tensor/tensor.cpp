#include "core/tensor/tensor.h"

#include "core/util/error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace attnlens {

std::string shapeToString(const Shape& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

int64_t shapeNumel(const Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) throw Error("negative dimension in shape " + shapeToString(shape));
        n *= d;
    }
    return n;
}

// calloc: a large zero tensor comes as fresh pages the kernel zeroes when they are first written, so a long
// text's attention store (24 layers x 14 heads x 450^2 = 272 MB) costs no pass over memory before the first
// layer runs (that pass took 0.5 s here, with no cancel check in it).
Tensor::Tensor(Shape shape) : m_shape(std::move(shape)), m_numel(shapeNumel(m_shape)) {
    auto* buffer =
        static_cast<float*>(std::calloc(static_cast<size_t>(std::max<int64_t>(m_numel, 1)), sizeof(float)));
    if (!buffer) throw std::bad_alloc();
    m_data = buffer;
    m_owner = std::shared_ptr<void>(buffer, [](void* p) { std::free(p); });
}

Tensor::Tensor(Shape shape, float fill) : m_shape(std::move(shape)), m_numel(shapeNumel(m_shape)) {
    auto buffer = std::shared_ptr<float[]>(new float[static_cast<size_t>(std::max<int64_t>(m_numel, 1))]);
    std::fill_n(buffer.get(), m_numel, fill);
    m_data = buffer.get();
    m_owner = std::shared_ptr<void>(buffer, buffer.get());
}

Tensor::Tensor(Shape shape, std::vector<float> values) : Tensor(std::move(shape)) {
    if (static_cast<int64_t>(values.size()) != m_numel)
        throw Error("tensor of shape " + shapeToString(m_shape) + " needs " + std::to_string(m_numel) +
                    " values, got " + std::to_string(values.size()));
    std::copy(values.begin(), values.end(), m_data);
}

Tensor Tensor::view(Shape shape, float* data, std::shared_ptr<void> owner) {
    Tensor t;
    t.m_shape = std::move(shape);
    t.m_numel = shapeNumel(t.m_shape);
    t.m_data = data;
    t.m_owner = std::move(owner);
    return t;
}

Tensor Tensor::fromMatrix(const RowMatrix& m) {
    Tensor t({m.rows(), m.cols()});
    t.matrix() = m;
    return t;
}

int64_t Tensor::dim(int axis) const {
    const int r = rank();
    const int a = axis < 0 ? axis + r : axis;
    if (a < 0 || a >= r)
        throw Error("axis " + std::to_string(axis) + " out of range for shape " + shapeToString(m_shape));
    return m_shape[a];
}

int64_t Tensor::offsetOf(std::initializer_list<int64_t> index, bool allowPrefix) const {
    const auto n = static_cast<int>(index.size());
    if (n > rank() || (!allowPrefix && n != rank()))
        throw Error("index of rank " + std::to_string(n) + " for tensor of shape " + shapeToString(m_shape));
    int64_t offset = 0;
    int axis = 0;
    for (int64_t i : index) {
        if (i < 0 || i >= m_shape[axis])
            throw Error("index " + std::to_string(i) + " out of range on axis " + std::to_string(axis) +
                        " of shape " + shapeToString(m_shape));
        offset = offset * m_shape[axis] + i;
        ++axis;
    }
    for (; axis < rank(); ++axis)
        offset *= m_shape[axis];
    return offset;
}

float Tensor::at(std::initializer_list<int64_t> index) const {
    return m_data[offsetOf(index, false)];
}
float& Tensor::at(std::initializer_list<int64_t> index) {
    return m_data[offsetOf(index, false)];
}

MatrixMap Tensor::matrix() {
    const int64_t cols = rank() == 0 ? 1 : m_shape.back();
    return {m_data, cols ? m_numel / cols : 0, cols};
}

ConstMatrixMap Tensor::matrix() const {
    const int64_t cols = rank() == 0 ? 1 : m_shape.back();
    return {m_data, cols ? m_numel / cols : 0, cols};
}

MatrixMap Tensor::slice2d(std::initializer_list<int64_t> leading) {
    if (static_cast<int>(leading.size()) + 2 != rank())
        throw Error("slice2d needs " + std::to_string(rank() - 2) + " leading indices for shape " +
                    shapeToString(m_shape));
    return {m_data + offsetOf(leading, true), m_shape[rank() - 2], m_shape[rank() - 1]};
}

ConstMatrixMap Tensor::slice2d(std::initializer_list<int64_t> leading) const {
    if (static_cast<int>(leading.size()) + 2 != rank())
        throw Error("slice2d needs " + std::to_string(rank() - 2) + " leading indices for shape " +
                    shapeToString(m_shape));
    return {m_data + offsetOf(leading, true), m_shape[rank() - 2], m_shape[rank() - 1]};
}

Tensor Tensor::sub(std::initializer_list<int64_t> leading) const {
    const int64_t offset = offsetOf(leading, true);
    Shape rest(m_shape.begin() + static_cast<std::ptrdiff_t>(leading.size()), m_shape.end());
    return view(std::move(rest), m_data + offset, m_owner);
}

Tensor Tensor::reshaped(Shape shape) const {
    if (shapeNumel(shape) != m_numel)
        throw Error("cannot reshape " + shapeToString(m_shape) + " to " + shapeToString(shape));
    return view(std::move(shape), m_data, m_owner);
}

Tensor Tensor::clone() const {
    Tensor t(m_shape);
    if (m_numel) std::memcpy(t.m_data, m_data, static_cast<size_t>(m_numel) * sizeof(float));
    return t;
}

} // namespace attnlens
