#pragma once
// Resampling of small feature grids (position-embedding tables), with PyTorch's semantics.

#include "core/tensor/tensor.h"

#include <optional>

namespace attnlens {

// torch.nn.functional.interpolate(mode="bicubic", align_corners=False) on input [C, H, W] → [C, outH, outW].
// Keys's cubic convolution with A = −0.75, source indices clamped at the borders. When scaleH/scaleW
// are given (as F.interpolate(scale_factor=...) passes them), the source coordinate is
// (dst + 0.5) / scale − 0.5 — not (dst + 0.5) · H/outH − 0.5 — which is what makes HF's "+0.1" trick
// matter. Coordinates are computed in float, as PyTorch's CPU kernel does for float tensors.
Tensor bicubicInterpolate(const Tensor& input, int outH, int outW,
                          std::optional<double> scaleH = std::nullopt,
                          std::optional<double> scaleW = std::nullopt);

} // namespace attnlens
