// Regularized incomplete gamma functions and the Gamma reparameterization derivative
// (ops/special.h). Each evaluates in double, elementwise over the broadcast inputs.
#include "ember/ops/special.h"

#include <cmath>
#include <limits>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/parallel.h"
#include "ember/cpu/unary_math.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/ops.h"

namespace ember {
namespace math {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = 1e-16;
constexpr int64_t kMaxIter = 1000000;  // the series and fraction need O(sqrt(a)) terms

// log(x^a e^-x / Gamma(a)): the factor both expansions share.
double log_prefactor(double a, double x) { return a * std::log(x) - x - std::lgamma(a); }

// P(a, x) by its power series e^-x x^a / Gamma(a) * sum_n x^n / (a (a+1) ... (a+n)); for x < a + 1.
double lower_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int64_t n = 1; n < kMaxIter; ++n) {
    term *= x / (a + double(n));
    sum += term;
    if (term < sum * kEps) break;
  }
  return sum * std::exp(log_prefactor(a, x));
}

// Q(a, x) by its continued fraction (modified Lentz); for x >= a + 1.
double upper_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int64_t i = 1; i < kMaxIter; ++i) {
    double an = -double(i) * (double(i) - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < kEps) break;
  }
  return std::exp(log_prefactor(a, x)) * h;
}

// Shared edge cases; returns true with P in *p when (a, x) is one of them.
bool gamma_edge(double a, double x, double* p) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0 || (a == 0 && x == 0)) return *p = kNaN, true;
  if (a == 0) return *p = 1.0, true;  // the limit a -> 0 for x > 0
  if (x == 0) return *p = 0.0, true;
  if (std::isinf(x)) return *p = std::isinf(a) ? kNaN : 1.0, true;
  if (std::isinf(a)) return *p = 0.0, true;
  return false;
}

}  // namespace

double reg_lower_gamma(double a, double x) {
  double p;
  if (gamma_edge(a, x, &p)) return p;
  return x < a + 1.0 ? lower_series(a, x) : 1.0 - upper_fraction(a, x);
}

double reg_upper_gamma(double a, double x) {
  double p;
  if (gamma_edge(a, x, &p)) return std::isnan(p) ? p : 1.0 - p;
  return x < a + 1.0 ? 1.0 - lower_series(a, x) : upper_fraction(a, x);
}

// Note [Gamma reparameterization]: with x = F^-1(u; a) and u fixed, dx/da = -(dP/da) / p(x; a).
// Differentiating the series P = sum_n e^-x x^(a+n) / Gamma(a+n+1) term by term and dividing by
// p(x; a) = e^-x x^(a-1) / Gamma(a) gives
//   dx/da = -sum_n c_n (log x - digamma(a+n+1)),  c_0 = x / a,  c_n = c_(n-1) x / (a+n),
// a sum of positive c_n, accurate where samples fall. For very large a, or far in the upper tail
// (where the c_n grow like e^x and cancel), the Wilson-Hilferty approximation
// x = a (1 - 1/(9a) + z / (3 sqrt a))^3 is differentiated at fixed z instead.
double standard_gamma_grad(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || !(a > 0) || x < 0) return kNaN;
  if (x == 0) return 0.0;
  if (std::isinf(x) || std::isinf(a)) return kNaN;
  const double sa = std::sqrt(a);
  if (a > 1e4 || x > a + 40.0 * sa + 40.0) {
    double z = (std::cbrt(x / a) - 1.0 + 1.0 / (9.0 * a)) * 3.0 * sa;
    double s = 1.0 - 1.0 / (9.0 * a) + z / (3.0 * sa);
    double ds = 1.0 / (9.0 * a * a) - z / (6.0 * a * sa);
    return s * s * s + 3.0 * a * s * s * ds;
  }
  const double lx = std::log(x);
  double c = x / a, psi = digamma(a + 1.0), sum = 0.0, abs_sum = 0.0;
  for (int64_t n = 0; n < kMaxIter; ++n) {
    double t = c * (lx - psi);
    sum += t;
    abs_sum += std::fabs(t);
    const double next = a + double(n) + 1.0, inv = 1.0 / next;
    if (next > x && std::fabs(t) <= abs_sum * 1e-17) break;
    c *= x * inv;
    psi += inv;
  }
  return -sum;
}

}  // namespace math

namespace {

// f(a, x) elementwise over the broadcast inputs, in double; the result has the floating type
// the inputs promote to.
template <typename F>
Tensor binary_double(const char* name, const Tensor& a, const Tensor& x, const F& f) {
  ScalarType rt = result_type(a, x);
  // Integer inputs are an error, as in torch (no promotion to a float type).
  if (!is_floating_point(rt)) EMBER_NOT_IMPLEMENTED("\"", name, "_cpu\" not implemented for '", dtype_name(rt), "'");
  Shape shape = broadcast_shapes(a.sizes(), x.sizes(), name);
  Tensor ad = contiguous(expand(to_dtype(a, ScalarType::Float64), shape));
  Tensor xd = contiguous(expand(to_dtype(x, ScalarType::Float64), shape));
  Tensor out = empty(shape, ScalarType::Float64);
  const double *pa = ad.data<double>(), *px = xd.data<double>();
  double* po = out.data<double>();
  parallel_for(0, out.numel(), 2048, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) po[i] = f(pa[i], px[i]);
  });
  return to_dtype(out, rt);
}

void check_real(const char* name, const Tensor& a, const Tensor& x) {
  if (is_complex(a.dtype()) || is_complex(x.dtype()))
    EMBER_NOT_IMPLEMENTED("\"", name, "\" not implemented for '",
                          dtype_name(is_complex(a.dtype()) ? a.dtype() : x.dtype()), "'");
}

// igamma / igammac with their gradient in x (+-x^(a-1) e^-x / Gamma(a)); none in a, as torch.
Tensor incomplete_gamma(const Tensor& a, const Tensor& x, bool upper) {
  const char* name = upper ? "igammac" : "igamma";
  check_real(name, a, x);
  Tensor y = binary_double(name, a, x, upper ? math::reg_upper_gamma : math::reg_lower_gamma);
  if (auto n = autograd::make_node<autograd::LambdaBackward>(a, x)) {
    bool a_grad = autograd::requires_grad(a);
    n->record(upper ? "IgammacBackward0" : "IgammaBackward0", {y}, {a, x}, {},
              [upper, a_grad](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
                if (a_grad)
                  EMBER_NOT_IMPLEMENTED("the derivative for '", upper ? "igammac" : "igamma",
                                        ": input' is not implemented.");
                const Tensor &av = s[0], &xv = s[1];
                Tensor logp = sub(sub(mul(sub(av, ew::num(1.0)), log(xv)), xv), lgamma(av));
                Tensor gx = mul(g[0], exp(logp));
                if (upper) gx = neg(gx);
                Tensor r = autograd::sum_to(gx, xv.sizes());
                return {Tensor(), r.dtype() == xv.dtype() ? r : to_dtype(r, xv.dtype())};
              });
  }
  return y;
}

}  // namespace

Tensor igamma(const Tensor& a, const Tensor& x) { return incomplete_gamma(a, x, false); }
Tensor igammac(const Tensor& a, const Tensor& x) { return incomplete_gamma(a, x, true); }

Tensor standard_gamma_grad(const Tensor& alpha, const Tensor& x) {
  check_real("_standard_gamma_grad", alpha, x);
  autograd::NoGradGuard no_grad;  // torch defines no derivative for it
  return binary_double("_standard_gamma_grad", alpha, x,
                       [](double a, double v) { return math::standard_gamma_grad(a, v); });
}

}  // namespace ember
