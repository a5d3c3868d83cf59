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

// F.interpolate(mode="bicubic", align_corners=False, antialias=True) on [C, H, W] → [C, outH, outW]: Pillow's
// separable filter (A = −0.5) whose support widens by in/out when shrinking, centred at (dst + 0.5)·in/out,
// the taps inside the input renormalised (no clamping) — a different kernel from bicubicInterpolate even when
// enlarging. Width first, then height; an axis whose size does not change is left as it is. Weights in float,
// as PyTorch's CPU kernel computes them for float tensors (DINOv2 with registers' position embeddings).
Tensor bicubicInterpolateAntialias(const Tensor& input, int outH, int outW);

} // namespace attnlens
