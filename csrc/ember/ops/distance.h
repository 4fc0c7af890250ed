// Pairwise distances (ops/distance.cpp). Not part of ember.h: include this header where used.
#pragma once
#include "ember/core/tensor.h"

namespace ember {

// torch.pdist: the p-norm distances ||x_i - x_j||_p between the rows of a 2-d float/double x, pairs
// i < j in row-major order (n (n - 1) / 2 of them). p = 0 counts differing coordinates, p = inf is
// the largest difference. Differentiable once, as torch's (a second derivative raises
// NotImplementedError).
Tensor pdist(const Tensor& x, double p = 2.0);

}  // namespace ember
