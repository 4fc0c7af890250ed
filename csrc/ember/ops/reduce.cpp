// Reductions. Note [Reduction layout]: the input is made contiguous and each run of adjacent
// reduced dims is viewed as (outer, R, inner); inner == 1 sums contiguous rows, otherwise rows
// of length `inner` are accumulated (vectorized across inner). Runs are reduced last to first.
// A permuted dense input (a transpose) is reduced in its memory order instead of being copied
// first (reduce_detail::memory_order): x.t().sum(0) ran 5.5x torch's time on the copy.
#include <algorithm>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/sum_kernels.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"
#include "ember/ops/unsafe_view.h"

namespace ember {
namespace {
using reduce_detail::reduce_mask;
using reduce_detail::reduced_shape;

// Sums `x` over the masked dims into dtype `out_dtype`, contiguous, with keepdim shape.
Tensor sum_impl(const Tensor& x_in, const std::vector<bool>& mask, ScalarType out_dtype) {
  // a permuted dense input (a transpose) is summed in memory order, the result put back in order
  if (auto perm = reduce_detail::memory_order(x_in); !perm.empty()) {
    std::vector<bool> pmask(perm.size());
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) pmask[i] = mask[perm[i]], inverse[perm[i]] = static_cast<int64_t>(i);
    return contiguous(permute(sum_impl(permute(x_in, perm), pmask, out_dtype), inverse));
  }
  Tensor x = contiguous(x_in);
  Shape cur = x.sizes();
  if (x.dim() == 0) return to_dtype(x, out_dtype, true);
  // Runs of reduced dims, last to first.
  Tensor src = x;
  for (int64_t d = x.dim() - 1; d >= 0;) {
    if (!mask[d]) {
      --d;
      continue;
    }
    int64_t hi = d;
    while (d >= 0 && mask[d]) --d;
    int64_t lo = d + 1;
    int64_t outer = 1, R = 1, inner = 1;
    for (int64_t i = 0; i < lo; ++i) outer *= cur[i];
    for (int64_t i = lo; i <= hi; ++i) R *= cur[i];
    for (int64_t i = hi + 1; i < static_cast<int64_t>(cur.size()); ++i) inner *= cur[i];
    Shape next = cur;
    for (int64_t i = lo; i <= hi; ++i) next[i] = 1;
    // Intermediate results keep full precision for floats; the last one gets out_dtype.
    bool last = true;
    for (int64_t i = 0; i < lo; ++i) last = last && !mask[i];
    ScalarType step_dtype = last ? out_dtype : (is_floating_point(out_dtype) ? ScalarType::Float64 : ScalarType::Int64);
    Tensor dst = empty(next, step_dtype);
    cpu::sum_kernel(src, dst, outer, R, inner);
    src = dst;
    cur = next;
  }
  return src;
}

}  // namespace

Tensor sum(const Tensor& t, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType out_dtype = dtype ? *dtype : (is_integral(t.dtype(), true) ? ScalarType::Int64 : t.dtype());
  auto mask = reduce_mask(t, dims);
  Shape shape = reduced_shape(t, mask, keepdim);
  Tensor x = dtype && *dtype != t.dtype() ? to_dtype(t, *dtype) : t;
  Tensor r;
  {
    autograd::NoGradGuard raw;  // the internal reshape is not part of the history (nor a view)
    if (t.numel() == 0) {
      r = zeros(shape, out_dtype);
    } else if (is_complex(out_dtype) && x.dim() == 0) {
      r = to_dtype(x, out_dtype, true);
    } else if (is_complex(out_dtype)) {  // sums of the (..., 2) real pairs
      std::vector<bool> m2 = mask;
      m2.push_back(false);
      Tensor parts = sum_impl(view_as_real(to_dtype(x, out_dtype)), m2, to_real(out_dtype));
      r = unsafe_view(view_as_complex(parts), shape);
    } else {
      r = unsafe_view(sum_impl(x, mask, out_dtype), shape);
    }
  }
  if (auto n = autograd::make_node<autograd::SumBackward1>(x)) {
    n->self_sizes = x.sizes();
    n->keepdim = keepdim;
    n->no_dims = !dims.has_value();
    if (dims && !dims->empty())
      for (int64_t d : *dims) n->dims.push_back(wrap_dim(d, t.dim()));
    autograd::set_history(r, n);
  }
  return r;
}

Tensor mean(const Tensor& t, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType out_dtype = dtype ? *dtype : t.dtype();
  EMBER_CHECK(is_floating_point(out_dtype) || is_complex(out_dtype),
              "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
              "Got: ",
              dtype_name(out_dtype));
  auto mask = reduce_mask(t, dims);
  int64_t count = 1;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (mask[d]) count *= t.sizes()[d];
  Tensor r;
  if (out_dtype == ScalarType::Float16 || out_dtype == ScalarType::BFloat16) {
    // Accumulate and divide in float32, round once (a float16 sum of 100 x 60000 is inf), as torch.
    Tensor s = sum(t, dims, keepdim, ScalarType::Float32);
    r = to_dtype(div(s, scalar_tensor(static_cast<double>(count), std::nullopt, true)), out_dtype);
  } else {
    Tensor s = sum(t, dims, keepdim, out_dtype);
    r = div(s, scalar_tensor(static_cast<double>(count), std::nullopt, true));
  }
  // the node torch's mean records: MeanBackward0 for the whole tensor, MeanBackward1 over dims
  const char* name = dims ? "MeanBackward1" : "MeanBackward0";
  if (auto* m = autograd::meta(r)) {
    if (auto* d = dynamic_cast<autograd::DivBackward0*>(m->grad_fn.get()))
      d->name_override = name;
    else if (auto* c = dynamic_cast<autograd::ToCopyBackward0*>(m->grad_fn.get()))
      c->name_override = name;
  }
  return r;
}

}  // namespace ember
