// The 5-d grid_sample (ops/nn_grid_sample.cpp; the 4-d one, grid_sample_2d, is in ops/nn.h). Not part of
// ember.h: include this header where used.
#pragma once
#include "ember/core/tensor.h"

namespace ember {

// F.grid_sample of input (N, C, D, H, W) at grid (N, Do, Ho, Wo, 3) (x, y, z in [-1, 1]), float32 or
// float64: trilinear or nearest, padding 0 zeros, 1 border, 2 reflection. Differentiable once, as torch's.
Tensor grid_sample_3d(const Tensor& input, const Tensor& grid, bool nearest, int padding, bool align_corners);

}  // namespace ember
