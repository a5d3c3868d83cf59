#pragma once
// WeightBinder: resolves checkpoint tensors by name into typed members at load time and collects
// every problem (missing tensor, wrong shape, unloadable dtype) so that the loader can report them
// all in ONE error instead of stopping at the first.
//
//   WeightBinder bind(file);
//   layer.q.weight = bind.require("model.encoder.layers.0.self_attn.q_proj.weight", {d, d});
//   Tensor bias = bind.optional("final_logits_bias", {1, v});   // empty if absent
//   bind.finish("'" + dir + "'");   // throws attnlens::Error listing every problem, if any
//
// F32 tensors stay zero-copy views on the memory-mapped file (TensorFile::load); F16/BF16 are
// converted to float32 once, here.

#include "core/io/tensor_file.h"
#include "core/util/callbacks.h"

#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

class WeightBinder {
public:
    explicit WeightBinder(const TensorFile& file) : m_file(file) {}

    // The tensor `name` with exactly `shape`; on a problem records it and returns an empty Tensor.
    Tensor require(const std::string& name, const Shape& shape);
    // Like require() but absence is not a problem (returns an empty Tensor).
    Tensor optional(const std::string& name, const Shape& shape);
    // A matrix (a linear layer's weight, an embedding table) as require() checks it, kept in its stored
    // format: F16 / BF16 as a HalfMatrix (no float32 copy), F32 as a Tensor; the other member empty.
    struct Stored {
        Tensor f32;
        HalfMatrix half;
    };
    Stored requireStored(const std::string& name, const Shape& shape);
    bool has(std::string_view name) const { return m_file.contains(name); }
    // Records a problem found by the caller (a tensor that contradicts the config, say).
    void problem(std::string text) { m_problems.push_back(std::move(text)); }
    // Polls `callbacks` for cancellation before each tensor is read (large checkpoints load for seconds).
    void setCallbacks(const Callbacks* callbacks) { m_callbacks = callbacks; }

    const std::vector<std::string>& problems() const { return m_problems; }
    // Throws attnlens::Error("<context>: N weight problem(s): ...; ...") if any problem was recorded.
    void finish(const std::string& context) const;

private:
    Tensor loadChecked(const TensorInfo& info, const Shape& shape);
    bool checkShapeAndType(const TensorInfo& info, const Shape& shape);

    const TensorFile& m_file;
    const Callbacks* m_callbacks = nullptr;
    std::vector<std::string> m_problems;
};

} // namespace attnlens
