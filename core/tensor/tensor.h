#pragma once
// Tensor: float32, row-major (C order), owning or sharing its buffer. It has no mathematical
// semantics of its own; arithmetic goes through Eigen maps (matrix()/rowMajor views) or ops/.
//
// Axis conventions used project-wide (written down once, here):
//   activations        [tokens, features]            (batch size is always 1)
//   attention          [layer][head][query][key]     rows are post-softmax probabilities
//   linear weights     [out, in]                     y = x · Wᵀ + b  (PyTorch nn.Linear)
//
// Copying a Tensor is cheap and shares the buffer (like a shared_ptr); use clone() for a deep copy.
// A tensor may view memory owned by something else (a memory-mapped checkpoint): the owner is kept
// alive by the shared handle.

#include <Eigen/Core>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace attnlens {

using Shape = std::vector<int64_t>;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using VectorMap = Eigen::Map<Eigen::VectorXf>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXf>;

std::string shapeToString(const Shape& shape);
int64_t shapeNumel(const Shape& shape);

class Tensor {
public:
    Tensor() = default;
    // Zero-initialised tensor of the given shape.
    explicit Tensor(Shape shape);
    Tensor(Shape shape, float fill);
    Tensor(Shape shape, std::vector<float> values); // values.size() must equal numel
    // A view on memory owned by `owner` (kept alive as long as this tensor or a copy lives).
    static Tensor view(Shape shape, float* data, std::shared_ptr<void> owner);
    static Tensor fromMatrix(const RowMatrix& m);

    const Shape& shape() const { return m_shape; }
    int rank() const { return static_cast<int>(m_shape.size()); }
    int64_t dim(int axis) const; // negative axes count from the end
    int64_t numel() const { return m_numel; }
    bool empty() const { return m_numel == 0; }

    float* data() { return m_data; }
    const float* data() const { return m_data; }
    std::span<float> values() { return {m_data, static_cast<size_t>(m_numel)}; }
    std::span<const float> values() const { return {m_data, static_cast<size_t>(m_numel)}; }

    // Element access with bounds checks (throws attnlens::Error); for tests and small tools.
    float at(std::initializer_list<int64_t> index) const;
    float& at(std::initializer_list<int64_t> index);

    // The tensor as a matrix: rows = product of all but the last axis, cols = last axis.
    MatrixMap matrix();
    ConstMatrixMap matrix() const;
    // The rank-2 slice at leading indices, e.g. attention.slice2d({layer, head}) -> [query, key].
    MatrixMap slice2d(std::initializer_list<int64_t> leading);
    ConstMatrixMap slice2d(std::initializer_list<int64_t> leading) const;
    // A tensor sharing the buffer of the sub-tensor at leading indices (no copy).
    Tensor sub(std::initializer_list<int64_t> leading) const;

    Tensor reshaped(Shape shape) const; // shares the buffer; numel must match
    Tensor clone() const;
    std::vector<float> toVector() const { return {m_data, m_data + m_numel}; }

private:
    int64_t offsetOf(std::initializer_list<int64_t> index, bool allowPrefix) const;

    Shape m_shape;
    int64_t m_numel = 0;
    std::shared_ptr<void> m_owner;
    float* m_data = nullptr;
};

} // namespace attnlens
