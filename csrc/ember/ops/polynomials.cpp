// Note [Orthogonal polynomials]: torch.special's Chebyshev (T, U, V, W), Hermite (H, He), Laguerre
// and Legendre polynomials by their three-term recurrences, one C++ kernel per family
// (cpu/polynomial_kernels.cpp) in double, vectorized across elements. They were compositions of
// ember ops, a pass over the tensor per degree and several per step (64K float32, degree 5:
// 1.3-2.8x torch's time). torch truncates n and returns 0 for a negative one; it builds no graph.
// torch switches to trigonometric forms for Chebyshev polynomials of |x| < 1 past degree 6-8; the
// recurrence in double is as accurate there for float32 and within rounding for float64.
#include "ember/ops/polynomials.h"

#include "ember/autograd/grad_mode.h"
#include "ember/core/parallel.h"
#include "ember/cpu/polynomial_kernels.h"
#include "ember/ops/ops.h"

namespace ember {

Tensor orthogonal_polynomial(PolynomialKind kind, const Tensor& x, const Tensor& n) {
  const ScalarType dt = x.dtype();
  EMBER_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64,
              "orthogonal_polynomial: expected float32 or float64 input, got ", dtype_name(dt));
  EMBER_CHECK(n.dtype() == dt && n.sizes() == x.sizes(),
              "orthogonal_polynomial: expected n of the input's dtype and shape ", x.shape_str(), ", got ",
              dtype_name(n.dtype()), " ", n.shape_str());
  EMBER_CHECK(x.device().is_cpu() && n.device().is_cpu(), "orthogonal_polynomial: CPU tensors only");
  autograd::NoGradGuard no_grad;
  const Tensor xc = contiguous(x), nc = contiguous(n);
  Tensor y = empty(x.sizes(), dt);
  const int64_t count = x.numel();
  const int64_t es = static_cast<int64_t>(element_size(dt));
  const char *px = static_cast<const char*>(xc.data_ptr()), *pn = static_cast<const char*>(nc.data_ptr());
  char* py = static_cast<char*>(y.data_ptr());
  const auto kernel = EMBER_ISA_SELECT(cpu::orthogonal_polynomial);
  parallel_for(0, count, 4096, [&](int64_t b, int64_t e) {
    kernel(static_cast<int>(kind), dt, px + b * es, pn + b * es, py + b * es, e - b);
  });
  return y;
}

}  // namespace ember
