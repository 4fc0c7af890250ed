// torch.pdist (ops/distance.h).
//
// Note [pdist]: one pass over the pairs (as a Python composition it gathered both rows of every
// pair, 16x torch's time). The forward splits the pairs among threads in row-major order; each
// pair's sum is a vectorized reduction (the same bits for any thread count). The backward gives row i the sum over
// every j != i of g_ij d||x_i - x_j|| / d x_i, so each thread writes only its own rows (every pair is visited twice; no
// atomics).
#include "ember/ops/distance.h"

#include "ember/autograd/functions.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"
#include "ember/core/type_name.h"
#include "ember/cpu/distance_kernels.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

void check_pdist_input(const Tensor& x, double p) {
  EMBER_CHECK(x.dim() == 2, "pdist only supports 2D tensors, got: ", x.dim(), "D");
  const ScalarType dt = x.dtype();
  if (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)
    EMBER_NOT_IMPLEMENTED("\"pdist\" not implemented for '", scalar_type_name(dt), "'");
  EMBER_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64, "pdist only supports floating-point dtypes");
  EMBER_CHECK(p >= 0, "pdist only supports non-negative p values");
}

// The gradient of pdist. Under create_graph it has a history that raises when differentiated, as
// torch's (no second derivative).
Tensor pdist_backward(const Tensor& grad, const Tensor& x, double p, const Tensor& dist) {
  const int64_t n = x.size(0), m = x.size(1);
  Tensor gx = empty({n, m}, x.dtype());
  {
    autograd::NoGradGuard no_grad;
    const Tensor xc = contiguous(x), gc = contiguous(to_dtype(grad, x.dtype())), dc = contiguous(dist);
    cpu::pdist_backward(x.dtype(), gc.data_ptr(), xc.data_ptr(), dc.data_ptr(), gx.data_ptr(), n, m, p);
  }
  if (auto node = autograd::make_node<autograd::LambdaBackward>(grad, x, dist))
    node->record("PdistBackwardBackward0", {gx}, {}, {},
                 [](const autograd::TensorList&, const autograd::TensorList&) -> autograd::TensorList {
                   EMBER_NOT_IMPLEMENTED("the derivative for '_pdist_backward' is not implemented.");
                 });
  return gx;
}

}  // namespace

Tensor pdist(const Tensor& x, double p) {
  check_pdist_input(x, p);
  const int64_t n = x.size(0), m = x.size(1);
  Tensor out = empty({n > 1 ? n * (n - 1) / 2 : 0}, x.dtype());
  {
    autograd::NoGradGuard no_grad;
    const Tensor xc = contiguous(x);
    cpu::pdist_forward(x.dtype(), xc.data_ptr(), out.data_ptr(), n, m, p);
  }
  if (auto node = autograd::make_node<autograd::LambdaBackward>(x))
    node->record("PdistBackward0", {out}, {x}, {out},
                 [p](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
                   if (!g[0].defined()) return {Tensor()};
                   return {pdist_backward(g[0], s[0], p, s[1])};
                 });
  return out;
}

}  // namespace ember
