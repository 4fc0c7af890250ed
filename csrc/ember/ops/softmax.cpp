// softmax and log_softmax along one dim. The input is read as (outer, R, inner) (Note [Reduction
// layout]); contiguous rows (inner == 1) take three passes over a row that stays in cache: max,
// exp and sum, then scale; float rows use the widest vectors of cpu/vec_math.h (16 lanes with AVX-512).
#include <cmath>
#include <limits>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/cpu/softmax_kernels.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

Tensor softmax_impl(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  Tensor x = dtype ? to_dtype(t, *dtype) : t;
  dim = wrap_dim(dim, x.dim());
  const char* kernel = dim == std::max<int64_t>(x.dim() - 1, 0)
                           ? (log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl")
                           : (log ? "log_softmax_kernel_impl" : "softmax_kernel_impl");
  Tensor y = empty(x.sizes(), x.dtype());
  if (x.numel() == 0) return y;  // torch checks nothing for an empty input
  if (!is_floating_point(x.dtype()))
    EMBER_NOT_IMPLEMENTED("\"", kernel, "\" not implemented for '", dtype_name(x.dtype()), "'");
  {
    autograd::NoGradGuard raw;
    auto l = reduce_detail::dim_layout(x, dim);
    cpu::softmax_kernel(l.x, y, l.outer, l.R, l.inner, log, kernel);
  }
  if (auto n = autograd::make_node<LambdaBackward>(x)) {
    std::vector<int64_t> dims{dim};
    n->record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {y}, {}, {y},
              [dims, log](const TensorList& g, const TensorList& s) -> TensorList {
                const Tensor& y = s[0];
                // One fused pass over contiguous rows when no graph is recorded; the composition
                // below is differentiable (create_graph).
                if (!autograd::GradMode::is_enabled() && dims[0] == y.dim() - 1 && y.dim() > 0 &&
                    is_floating_point(y.dtype()) && g[0].dtype() == y.dtype() && g[0].sizes() == y.sizes() &&
                    y.is_contiguous()) {
                  Tensor gc = contiguous(g[0]);
                  Tensor gx = empty(y.sizes(), y.dtype());
                  const int64_t R = y.sizes().back();
                  if (y.numel() > 0) cpu::softmax_backward_kernel(gc, y, gx, y.numel() / R, R, log);
                  return {gx};
                }
                if (log)  // d log_softmax: g - softmax * sum(g)
                  return {sub(g[0], mul(ember::exp(y), sum(g[0], dims, /*keepdim=*/true)))};
                return {mul(y, sub(g[0], sum(mul(g[0], y), dims, /*keepdim=*/true)))};
              });
    n->jvp_fn = [dims, log](const TensorList& t, const TensorList& s) -> TensorList {
      if (!t[0].defined()) return {Tensor()};
      const Tensor& y = s[0];
      if (log)  // t - sum(softmax * t)
        return {sub(t[0], sum(mul(ember::exp(y), t[0]), dims, /*keepdim=*/true))};
      return {mul(y, sub(t[0], sum(mul(t[0], y), dims, /*keepdim=*/true)))};
    };
  }
  return y;
}

}  // namespace

Tensor softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(t, dim, dtype, false);
}
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(t, dim, dtype, true);
}

}  // namespace ember
