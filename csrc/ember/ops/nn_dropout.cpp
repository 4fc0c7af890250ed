// Dropout family: compositions of a Bernoulli mask (ops/random.cpp) and elementwise ops, so the
// gradient (mask times the incoming gradient) and in-place autograd come from the parts.
#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"

namespace ember {
namespace {
using reduce_detail::num;

void check_p(double p) {
  EMBER_CHECK_VALUE(p >= 0.0 && p <= 1.0, "dropout probability has to be between 0 and 1, but got ", p);
}

// A mask of 1s (probability 1 - p) and 0s, shaped like input or one value per (N, C) map.
Tensor keep_mask(const Tensor& input, double p, bool feature, Generator* gen) {
  Shape s = input.sizes();
  if (feature) {
    EMBER_CHECK(input.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
    for (size_t d = 2; d < s.size(); ++d) s[d] = 1;
  }
  Tensor m = empty(s, input.dtype());
  autograd::NoGradGuard raw;
  bernoulli_(m, 1.0 - p, gen);
  return m;
}

Tensor mul_maybe_inplace(const Tensor& a, const Tensor& b, bool inplace) {
  return inplace ? binary_op(BinaryOp::Mul, a, b, a, true) : mul(a, b);
}

Tensor dropout_impl(const Tensor& input, double p, bool train, bool inplace, bool feature, bool alpha, Generator* gen) {
  check_p(p);
  if (!train || p == 0.0 || input.numel() == 0) return input;
  if (!is_floating_point(input.dtype()))
    EMBER_CHECK(false, "dropout: result type Float can't be cast to the desired output type ",
                dtype_name(input.dtype()));
  if (p == 1.0) return mul_maybe_inplace(input, zeros({}, input.dtype()), inplace);
  Tensor mask = keep_mask(input, p, feature, gen);
  if (!alpha) {
    {
      autograd::NoGradGuard raw;
      mask = mul(mask, num(1.0 / (1.0 - p)));
    }
    return mul_maybe_inplace(input, mask, inplace);
  }
  // alpha' = -selu's scale * alpha; kept values x, dropped alpha', then a * v + b.
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  Tensor bterm, scale;
  {
    autograd::NoGradGuard raw;
    bterm = add(mul(sub(mask, num(1.0)), num(kAlpha * a)), num(kAlpha * a * p));
    scale = mul(mask, num(a));
  }
  Tensor y = mul_maybe_inplace(input, scale, inplace);
  return inplace ? binary_op(BinaryOp::Add, y, bterm, y, true) : add(y, bterm);
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool train, bool inplace, Generator* gen) {
  return dropout_impl(input, p, train, inplace, false, false, gen);
}
Tensor feature_dropout(const Tensor& input, double p, bool train, bool inplace, Generator* gen) {
  return dropout_impl(input, p, train, inplace, true, false, gen);
}
Tensor alpha_dropout(const Tensor& input, double p, bool train, bool inplace, Generator* gen) {
  return dropout_impl(input, p, train, inplace, false, true, gen);
}
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train, bool inplace, Generator* gen) {
  return dropout_impl(input, p, train, inplace, true, true, gen);
}

}  // namespace ember
