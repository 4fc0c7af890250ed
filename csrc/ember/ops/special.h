// Special functions of the gamma family that torch.distributions needs: the regularized
// incomplete gamma functions and the reparameterization derivative of Gamma samples.
#pragma once
#include "ember/core/tensor.h"

namespace ember {

// P(a, x) = gamma(a, x) / Gamma(a) (torch.igamma, torch.special.gammainc); broadcasting; float result.
Tensor igamma(const Tensor& a, const Tensor& x);
// Q(a, x) = 1 - P(a, x) (torch.igammac, torch.special.gammaincc).
Tensor igammac(const Tensor& a, const Tensor& x);
// d x / d alpha for x ~ Gamma(alpha, 1) at fixed CDF value (implicit reparameterization):
// -(dP(alpha, x)/d alpha) / p(x; alpha). Not differentiable itself.
Tensor standard_gamma_grad(const Tensor& alpha, const Tensor& x);

// Bessel functions of orders 0 and 1 (ops/bessel.cpp, Note [Bessel functions]): I0 (torch.i0),
// I0e = exp(-|x|) I0, I1, I1e, K0, K0e = exp(x) K0, K1, K1e, J0, J1, Y0, Y1. Integer inputs compute
// in the default dtype; float16/bfloat16 only for the I family, as torch. I0..I1e are differentiable.
enum class BesselOp : uint8_t { I0, I0e, I1, I1e, K0, K0e, K1, K1e, J0, J1, Y0, Y1 };
Tensor bessel(BesselOp op, const Tensor& x);

namespace math {
double bessel_i0(double x);
double bessel_i0e(double x);
double bessel_i1(double x);
double bessel_i1e(double x);
double bessel_k0(double x);
double bessel_k0e(double x);
double bessel_k1(double x);
double bessel_k1e(double x);
double bessel_j0(double x);
double bessel_j1(double x);
double bessel_y0(double x);
double bessel_y1(double x);
double reg_lower_gamma(double a, double x);  // P(a, x); NaN outside a >= 0, x >= 0
double reg_upper_gamma(double a, double x);  // Q(a, x)
double standard_gamma_grad(double a, double x);
}  // namespace math

}  // namespace ember
