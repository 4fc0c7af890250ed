// Differentiable helpers that the backward formulas of the reduction family need, ahead of the
// unary and indexing families. Internal, not part of the public API: always call them qualified
// (internal::exp), so they never collide with the public ops of the same names once those exist.
#pragma once
#include <vector>

#include "ember/ops/ops.h"

namespace ember::internal {

Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);  // no gradient (zero almost everywhere)
// cond ? a : b, broadcast; the result has the promoted dtype of a and b.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// out[.., k, ..] = x[.., index[.., k, ..], ..] along `dim`; index has x's sizes except at dim.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// zeros(sizes) with src added at `index` along `dim` (gather's adjoint); index is shaped like src,
// which has `sizes` except at dim. Repeated indices accumulate.
Tensor scatter_add(const Tensor& src, int64_t dim, const Tensor& index, IntArrayRef sizes);
// Differentiable shape changes (the public view ops do not record history yet): the result
// shares x's data like the view op of the same name; the gradient is reshaped/permuted back.
Tensor reshape(const Tensor& x, IntArrayRef sizes);
Tensor permute(const Tensor& x, IntArrayRef perm);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, IntArrayRef sizes);  // gradient summed back to x's shape
// Reinserts size-1 dims at the reduced positions of `mask` (a keepdim=False result's gradient
// made broadcastable against the input).
Tensor unsqueeze_reduced(const Tensor& x, const std::vector<bool>& mask, int64_t ndim);
// A copy with the order along `dim` reversed.
Tensor flip(const Tensor& x, int64_t dim);
// g spread evenly over the elements of x equal to r (NaN matches NaN), where g and r have the
// keepdim shape of a reduction over `mask`: torch's gradient rule for amax/amin, full max/min/
// median and the inf norms.
Tensor evenly_distribute(const Tensor& g, const Tensor& x, const Tensor& r, const std::vector<bool>& mask);
// Gradient of a value-selecting reduction along dim (max/min/kthvalue/median/mode with dim):
// each slice's g goes to its selected index, in a tensor of `sizes`.
Tensor select_backward(const Tensor& g, int64_t dim, const Tensor& indices, const Shape& sizes, bool keepdim);
// A 0-d wrapped number (ranks below tensors in type promotion).
inline Tensor num(Scalar s) { return scalar_tensor(s, std::nullopt, /*wrapped=*/true); }

}  // namespace ember::internal
