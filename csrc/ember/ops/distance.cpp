// torch.pdist and torch.cdist's direct form (ops/distance.h).
//
// Note [pdist]: one pass over the pairs (as a Python composition it gathered both rows of every
// pair, 16x torch's time; cdist's composition built the (P, R, M) differences: 3.4x torch's time and
// 256 MB for 1024 x 512 rows of 128). The forward splits the pairs among threads in row-major order;
// short rows take the pairs in lanes, long ones a vectorized reduction per pair (Note [Distances in
// lanes] in cpu/distance_kernels.cpp; the same bits for any thread count). The backward gives row i the sum over
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

// The gradients of cdist (Note [Distance gradients] in cpu/distance_kernels.cpp). Under create_graph they
// have a history that raises when differentiated, as torch's.
autograd::TensorList cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, const Tensor& dist,
                                    double p, bool want1, bool want2) {
  const int64_t d = x1.dim(), P = x1.size(d - 2), R = x2.size(d - 2), M = x1.size(d - 1);
  int64_t B = 1;
  for (int64_t k = 0; k < d - 2; ++k) B *= x1.size(k);
  Tensor g1, g2;
  {
    autograd::NoGradGuard no_grad;
    const Tensor a = contiguous(x1), b = contiguous(x2), g = contiguous(to_dtype(grad, x1.dtype()));
    const Tensor dd = contiguous(dist);
    if (want1) g1 = empty(x1.sizes(), x1.dtype());
    if (want2) g2 = empty(x2.sizes(), x1.dtype());
    cpu::cdist_backward(x1.dtype(), g.data_ptr(), a.data_ptr(), b.data_ptr(), dd.data_ptr(),
                        want1 ? g1.data_ptr() : nullptr, want2 ? g2.data_ptr() : nullptr, B, P, R, M, p);
  }
  if (auto node = autograd::make_node<autograd::LambdaBackward>(grad, x1, x2, dist)) {
    auto refuse = [](const autograd::TensorList&, const autograd::TensorList&) -> autograd::TensorList {
      EMBER_NOT_IMPLEMENTED("the derivative for '_cdist_backward' is not implemented.");
    };
    if (g1.defined() && g2.defined())
      node->record("CdistBackwardBackward0", {g1, g2}, {}, {}, refuse);
    else
      node->record("CdistBackwardBackward0", {g1.defined() ? g1 : g2}, {}, {}, refuse);
  }
  return {g1, g2};
}

}  // namespace

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  const int64_t d = x1.dim();
  EMBER_CHECK(d >= 2 && x2.dim() == d && x1.size(d - 1) == x2.size(d - 1),
              "cdist: expected x1 (..., P, M) and x2 (..., R, M) with the same batch dims");
  Shape batch;
  int64_t B = 1;
  for (int64_t k = 0; k < d - 2; ++k) {
    EMBER_CHECK(x1.size(k) == x2.size(k), "cdist: expected x1 (..., P, M) and x2 (..., R, M) with the same batch dims");
    batch.push_back(x1.size(k));
    B *= x1.size(k);
  }
  const ScalarType dt = x1.dtype();
  if (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)
    EMBER_NOT_IMPLEMENTED("\"cdist\" not implemented for '", scalar_type_name(dt), "'");
  EMBER_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64, "cdist only supports floating-point dtypes");
  EMBER_CHECK(x2.dtype() == dt, "expected scalar type ", scalar_type_name(dt), " but found ",
              scalar_type_name(x2.dtype()));
  EMBER_CHECK(p >= 0, "cdist only supports non-negative p values");
  const int64_t P = x1.size(d - 2), R = x2.size(d - 2), M = x1.size(d - 1);
  Shape out_shape = batch;
  out_shape.push_back(P);
  out_shape.push_back(R);
  Tensor out = empty(out_shape, dt);
  {
    autograd::NoGradGuard no_grad;
    const Tensor a = contiguous(x1), b = contiguous(x2);
    cpu::cdist_forward(dt, a.data_ptr(), b.data_ptr(), out.data_ptr(), B, P, R, M, p);
  }
  if (auto node = autograd::make_node<autograd::LambdaBackward>(x1, x2)) {
    const bool want1 = autograd::requires_grad(x1), want2 = autograd::requires_grad(x2);
    node->record(
        "CdistBackward0", {out}, {x1, x2}, {out},
        [p, want1, want2](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
          if (!g[0].defined()) return {Tensor(), Tensor()};
          return cdist_backward(g[0], s[0], s[1], s[2], p, want1, want2);
        });
  }
  return out;
}

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
