// Pairwise distances (ops/distance.cpp). Not part of ember.h: include this header where used.
#pragma once
#include "ember/core/tensor.h"

namespace ember {

// torch.pdist: the p-norm distances ||x_i - x_j||_p between the rows of a 2-d float/double x, pairs
// i < j in row-major order (n (n - 1) / 2 of them). p = 0 counts differing coordinates, p = inf is
// the largest difference. Differentiable once, as torch's (a second derivative raises
// NotImplementedError).
Tensor pdist(const Tensor& x, double p = 2.0);

// torch.cdist's direct form: out (..., P, R) = ||x1[..., i, :] - x2[..., j, :]||_p for x1 (..., P, M) and
// x2 (..., R, M) of one float/double dtype and the same batch dims (torch.cdist's batch broadcasting and
// its matmul form for p = 2 are ember/_composite.py's). p as pdist's; NaN differences as torch's (p = inf skips them).
// Differentiable once, as torch's.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);

}  // namespace ember
