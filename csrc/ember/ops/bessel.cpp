// Bessel functions of orders 0 and 1 (ops/special.h): I0, I1 (and exp(-|x|) times them), K0, K1
// (and exp(x) times them), J0, J1, Y0, Y1, elementwise in double.
//
// Note [Bessel functions]
// Each function is a Chebyshev series of a smooth part on one or two intervals, with what is not
// smooth outside the series (scripts/fit_bessel.py computes the series in 50-digit arithmetic and
// checks them; bessel_coefs.inc holds them):
// - I0, I1: exp(-x) I_n(x) (over x for n = 1) on [0, 8] in t = x/4 - 1; sqrt(x) exp(-x) I_n(x) on
//   [8, inf) in t = 16/x - 1. I_n(x) = exp(x) times that, so it overflows where exp(x) does.
// - K0, K1: on (0, 2] the parts without the logarithm, K0 + log(x/2) I0 and x K1 - x log(x/2) I1,
//   in t = x^2/2 - 1; sqrt(x) exp(x) K_n(x) on [2, inf) in t = 4/x - 1.
// - J0, J1 on [0, 5]: J_n over its zeros there ((x^2 - z^2) as (x - z)(x + z) with z in two
//   doubles, so the result keeps its relative accuracy next to a zero) in t = 2x^2/25 - 1; Y0 - (2/pi)
//   log(x) J0 and (Y1 - (2/pi)(J1 log x - 1/x)) / x likewise. Above 5, Hankel's form
//   J_n = sqrt(2/(pi x)) (P cos chi - Q sin chi), Y_n = sqrt(2/(pi x)) (P sin chi + Q cos chi),
//   chi = x - (2n+1) pi/4, with P and x Q as series in t = 50/x^2 - 1, and cos chi, sin chi from
//   libm's sin/cos of x (exact argument reduction at any x).
// cpu/bessel_kernels.cpp evaluates the same series branch-free and vectorized (both intervals for
// every element, one selected), and only the leading terms a float result can show when the result
// is float32 or 16-bit; the functions here are the scalar forms it falls back to outside its range,
// and the C++ API's math::bessel_*.
// Accuracy against mpmath: a few ulp (Y0/Y1/K0 lose relative accuracy only next to their zeros,
// as every Chebyshev or rational form does). Edge values (0, negative x, infinities, NaN) as torch.
// Derivatives: I0, I0e, I1, I1e have them (written with these ops, so they differentiate again);
// the others have none, as in torch.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "ember/autograd/functions.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/bessel_kernels.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/ops.h"
#include "ember/ops/special.h"

namespace ember {
namespace math {
namespace {

#include "ember/ops/bessel_coefs.inc"

constexpr double kInvPi = std::numbers::inv_pi;
constexpr double k2OverPi = 2.0 * std::numbers::inv_pi;

// sum_k c[k] T_k(t) (Clenshaw's recurrence), |t| <= 1.
template <size_t N>
double chebyshev(const double (&c)[N], double t) {
  double b1 = 0.0, b2 = 0.0;
  for (size_t k = N - 1; k >= 1; --k) {
    const double b0 = c[k] + 2.0 * t * b1 - b2;
    b2 = b1;
    b1 = b0;
  }
  return c[0] + t * b1 - b2;
}

// (x^2 - z^2) for a zero z = hi + lo: (x - z)(x + z), exact in x - hi near the zero.
double minus_zero_squared(double x, const double (&z)[2]) { return ((x - z[0]) - z[1]) * (x + z[0]); }

// exp(-a) I0(a), exp(-a) I1(a) for a = |x| >= 0 (NaN passes through).
double i0e_abs(double a) {
  if (a < 0x1p-27) return 1.0 - a;  // exp(-a) (1 + a^2/4 + ...) rounded: i0(0) = 1 exactly
  return a <= 8.0 ? chebyshev(k_i0e_small, a / 4.0 - 1.0) : chebyshev(k_i0e_large, 16.0 / a - 1.0) / std::sqrt(a);
}
double i1e_abs(double a) {
  return a <= 8.0 ? chebyshev(k_i1e_small, a / 4.0 - 1.0) * a : chebyshev(k_i1e_large, 16.0 / a - 1.0) / std::sqrt(a);
}

// P and Q of Hankel's form for order n at x > 5, and sqrt(1/(pi x)).
struct Hankel {
  double p, q, amp, s, c;  // s, c: sin x, cos x
};
Hankel hankel(int n, double x) {
  const double t = 50.0 / (x * x) - 1.0;
  Hankel h;
  h.p = n == 0 ? chebyshev(k_p0_large, t) : chebyshev(k_p1_large, t);
  h.q = (n == 0 ? chebyshev(k_q0_large, t) : chebyshev(k_q1_large, t)) / x;
  h.amp = std::sqrt(kInvPi / x);
  h.s = std::sin(x);
  h.c = std::cos(x);
  return h;
}

// J0, J1 at a = |x|.
double j0_abs(double a) {
  if (a < 0x1p-27) return 1.0;  // 1 - a^2/4 rounded
  if (a <= 5.0) {
    return minus_zero_squared(a, kJ0Zeros[0]) * minus_zero_squared(a, kJ0Zeros[1]) *
           chebyshev(k_j0_small, a * a * (2.0 / 25.0) - 1.0);
  }
  // sqrt(2/(pi a)) (P cos chi - Q sin chi) with chi = a - pi/4: cos chi = (c + s)/sqrt 2, sin chi = (s - c)/sqrt 2
  const Hankel h = hankel(0, a);
  return h.amp * (h.p * (h.c + h.s) - h.q * (h.s - h.c));
}
double j1_abs(double a) {
  if (a <= 5.0) return a * minus_zero_squared(a, kJ1Zero) * chebyshev(k_j1_small, a * a * (2.0 / 25.0) - 1.0);
  // chi = a - 3 pi/4: cos chi = (s - c)/sqrt 2, sin chi = -(s + c)/sqrt 2
  const Hankel h = hankel(1, a);
  return h.amp * (h.p * (h.s - h.c) + h.q * (h.s + h.c));
}

}  // namespace

double bessel_i0e(double x) { return i0e_abs(std::fabs(x)); }
double bessel_i1e(double x) {
  const double y = i1e_abs(std::fabs(x));
  return x < 0 ? -y : y;
}
// exp(a) times the scaled value: inf where exp(a) overflows, NaN at +-inf (inf / inf), as torch.
double bessel_i0(double x) {
  const double a = std::fabs(x);
  return a <= 8.0 ? std::exp(a) * i0e_abs(a) : std::exp(a) * (chebyshev(k_i0e_large, 16.0 / a - 1.0) / std::sqrt(a));
}
double bessel_i1(double x) {
  const double a = std::fabs(x);
  const double y = a <= 8.0 ? std::exp(a) * (chebyshev(k_i1e_small, a / 4.0 - 1.0) * a)
                            : std::exp(a) * (chebyshev(k_i1e_large, 16.0 / a - 1.0) / std::sqrt(a));
  return x < 0 ? -y : y;
}

namespace {
// K0, K1 on (0, 2]: the series plus the logarithmic part.
double k0_small(double x) { return chebyshev(k_k0_small, x * x / 2.0 - 1.0) - std::log(x / 2.0) * bessel_i0(x); }
double k1_small(double x) { return chebyshev(k_k1_small, x * x / 2.0 - 1.0) / x + std::log(x / 2.0) * bessel_i1(x); }
// K_n's value at x where it is not a finite positive x: NaN below 0 or NaN, +inf at 0; else -1.
double k_edge(double x) {
  if (!(x >= 0.0)) return std::numeric_limits<double>::quiet_NaN();
  return x == 0.0 ? std::numeric_limits<double>::infinity() : -1.0;
}
}  // namespace

double bessel_k0(double x) {
  if (const double e = k_edge(x); e != -1.0) return e;
  return x <= 2.0 ? k0_small(x) : std::exp(-x) * (chebyshev(k_k0e_large, 4.0 / x - 1.0) / std::sqrt(x));
}
double bessel_k0e(double x) {
  if (const double e = k_edge(x); e != -1.0) return e;
  return x <= 2.0 ? k0_small(x) * std::exp(x) : chebyshev(k_k0e_large, 4.0 / x - 1.0) / std::sqrt(x);
}
double bessel_k1(double x) {
  if (const double e = k_edge(x); e != -1.0) return e;
  return x <= 2.0 ? k1_small(x) : std::exp(-x) * (chebyshev(k_k1e_large, 4.0 / x - 1.0) / std::sqrt(x));
}
double bessel_k1e(double x) {
  if (const double e = k_edge(x); e != -1.0) return e;
  return x <= 2.0 ? k1_small(x) * std::exp(x) : chebyshev(k_k1e_large, 4.0 / x - 1.0) / std::sqrt(x);
}

double bessel_j0(double x) { return j0_abs(std::fabs(x)); }
double bessel_j1(double x) {
  const double y = j1_abs(std::fabs(x));
  return std::signbit(x) ? -y : y;  // odd, -0 included
}
double bessel_y0(double x) {
  if (!(x > 0.0)) return x == 0.0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (x <= 5.0) return chebyshev(k_y0_small, x * x * (2.0 / 25.0) - 1.0) + k2OverPi * std::log(x) * j0_abs(x);
  // chi = x - pi/4: P sin chi + Q cos chi = (P (s - c) + Q (s + c)) / sqrt 2
  const Hankel h = hankel(0, x);
  return h.amp * (h.p * (h.s - h.c) + h.q * (h.s + h.c));
}
double bessel_y1(double x) {
  if (!(x > 0.0)) return x == 0.0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (x <= 5.0)
    return x * chebyshev(k_y1_small, x * x * (2.0 / 25.0) - 1.0) + k2OverPi * (j1_abs(x) * std::log(x) - 1.0 / x);
  // chi = x - 3 pi/4: P sin chi + Q cos chi = (-P (s + c) + Q (s - c)) / sqrt 2
  const Hankel h = hankel(1, x);
  return h.amp * (h.q * (h.s - h.c) - h.p * (h.s + h.c));
}

}  // namespace math

namespace {

struct BesselInfo {
  const char* name;  // torch's kernel name, for dtype errors
  double (*f)(double);
  bool half;  // float16/bfloat16 inputs accepted (the i0 family), else NotImplementedError as torch
};

BesselInfo bessel_info(BesselOp op) {
  switch (op) {
    case BesselOp::I0:
      return {"i0_vml", math::bessel_i0, true};
    case BesselOp::I0e:
      return {"i0e", math::bessel_i0e, true};
    case BesselOp::I1:
      return {"i1", math::bessel_i1, true};
    case BesselOp::I1e:
      return {"i1e", math::bessel_i1e, true};
    case BesselOp::K0:
      return {"modified_bessel_k0", math::bessel_k0, false};
    case BesselOp::K0e:
      return {"scaled_modified_bessel_k0", math::bessel_k0e, false};
    case BesselOp::K1:
      return {"modified_bessel_k1", math::bessel_k1, false};
    case BesselOp::K1e:
      return {"scaled_modified_bessel_k1", math::bessel_k1e, false};
    case BesselOp::J0:
      return {"bessel_j0", math::bessel_j0, false};
    case BesselOp::J1:
      return {"bessel_j1", math::bessel_j1, false};
    case BesselOp::Y0:
      return {"bessel_y0", math::bessel_y0, false};
    case BesselOp::Y1:
      return {"bessel_y1", math::bessel_y1, false};
  }
  return {"?", nullptr, false};
}

// y = f(x) over n contiguous elements: cpu::bessel_kernel (vectorized, `scalar` for the elements
// outside its range), through double buffers for the other dtypes.
template <typename T>
void bessel_run(int op, const T* x, T* y, int64_t n, double (*scalar)(double)) {
  if constexpr (std::is_same_v<T, double>) {
    cpu::bessel_kernel(op, false, x, y, n, scalar);
  } else {
    constexpr int64_t kBlock = 512;
    double xd[kBlock], yd[kBlock];
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      for (int64_t j = 0; j < len; ++j) xd[j] = static_cast<double>(static_cast<opmath_t<T>>(x[k + j]));
      cpu::bessel_kernel(op, true, xd, yd, len, scalar);
      for (int64_t j = 0; j < len; ++j) y[k + j] = static_cast<T>(yd[j]);
    }
  }
}

// f over x's elements into a new contiguous tensor of x's (floating) dtype.
Tensor bessel_values(BesselOp op, const BesselInfo& info, const Tensor& x) {
  Tensor xc = contiguous(x);
  Tensor out = empty(x.sizes(), x.dtype());
  const int64_t n = x.numel();
  EMBER_DISPATCH_FLOAT(x.dtype(), info.name, [&] {
    const scalar_t* in = xc.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    parallel_for(0, n, 1024,
                 [&](int64_t b, int64_t e) { bessel_run(static_cast<int>(op), in + b, o + b, e - b, info.f); });
  });
  return out;
}

}  // namespace

Tensor bessel(BesselOp op, const Tensor& input) {
  const BesselInfo info = bessel_info(op);
  const ScalarType dt = input.dtype();
  if (is_complex(dt) || (!info.half && (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)))
    EMBER_NOT_IMPLEMENTED("\"", info.name, "_cpu\" not implemented for '", dtype_name(dt), "'");
  const Tensor x = is_floating_point(dt) ? input : to_dtype(input, default_dtype());
  const bool differentiable = op == BesselOp::I0 || op == BesselOp::I0e || op == BesselOp::I1 || op == BesselOp::I1e;
  Tensor y;
  {
    autograd::NoGradGuard no_grad;
    y = bessel_values(op, info, x);
  }
  if (!differentiable) return y;
  static constexpr const char* kNodes[] = {"I0Backward0", "SpecialI0EBackward0", "SpecialI1Backward0",
                                           "SpecialI1EBackward0"};
  if (auto n = autograd::make_node<autograd::LambdaBackward>(x)) {
    auto backward = [op](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
      const Tensor& xv = s[0];
      const Tensor yv = s.size() > 1 ? s[1] : Tensor();
      Tensor d;
      switch (op) {
        case BesselOp::I0:  // I0' = I1
          d = bessel(BesselOp::I1, xv);
          break;
        case BesselOp::I0e:  // (e^-|x| I0)' = e^-|x| I1 - sgn(x) e^-|x| I0
          d = sub(bessel(BesselOp::I1e, xv), mul(sign(xv), yv));
          break;
        case BesselOp::I1:  // I1' = I0 - I1 / x, 1/2 at 0
          d = where(eq(xv, ew::num(0.0)), scalar_tensor(Scalar(0.5), xv.dtype()),
                    sub(bessel(BesselOp::I0, xv), div(yv, xv)));
          break;
        default:  // I1e: e^-|x| I0 - e^-|x| I1 (sgn(x) + 1/x), 1/2 at 0
          d = where(eq(xv, ew::num(0.0)), scalar_tensor(Scalar(0.5), xv.dtype()),
                    sub(bessel(BesselOp::I0e, xv), mul(yv, add(sign(xv), reciprocal(xv)))));
          break;
      }
      return {mul(g[0], d)};
    };
    // I0's gradient is I1 of the input (its result not saved, as torch's: it may change in place)
    if (op == BesselOp::I0)
      n->record(kNodes[0], {y}, {x}, {}, backward);
    else
      n->record(kNodes[static_cast<int>(op)], {y}, {x}, {y}, backward);
  }
  return y;
}

}  // namespace ember
