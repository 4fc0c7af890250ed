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

namespace math {
double reg_lower_gamma(double a, double x);  // P(a, x); NaN outside a >= 0, x >= 0
double reg_upper_gamma(double a, double x);  // Q(a, x)
double standard_gamma_grad(double a, double x);
}  // namespace math

}  // namespace ember
