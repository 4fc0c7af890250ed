// erfcx, log_ndtr, ndtri, airy_ai and entr (ops/special_unary.h): scalar double functions applied over the
// elements in parallel (as Python compositions of whole-tensor ops they took 2.3-15x torch's time).
#include "ember/ops/special_unary.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <type_traits>

#include "ember/autograd/functions.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/core/type_name.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/ops.h"

namespace ember {
namespace math {

namespace {

constexpr double kInvSqrtPi = 0.56418958354775628695;  // 1 / sqrt(pi)
constexpr double kSqrt2Pi = 2.50662827463100050242;    // sqrt(2 pi)
constexpr double kInvSqrt2 = 0.70710678118654752440;   // 1 / sqrt(2)
constexpr double kInf = std::numeric_limits<double>::infinity();

// exp(x^2) with x^2 split exactly into hi + lo (fma), so the result keeps exp's accuracy where
// x^2 is large (rounding x^2 first would cost x^2 ulp: ~700 at x = 26).
double exp_of_square(double x) {
  const double hi = x * x, lo = std::fma(x, x, -hi);
  return std::exp(hi) * (1.0 + lo);
}

}  // namespace

// erfcx(x) = exp(x^2) erfc(x). Below 10 from libm's erfc (relative accuracy to its underflow at
// 26.5; for x < 0 it lies in (1, 2]), with exp(x^2) exact to rounding (overflowing to inf below
// -26.6); from 10 on the asymptotic series 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k, whose
// 13th term is below 1e-17 there.
double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 10.0) return x < -26.7 ? kInf : exp_of_square(x) * std::erfc(x);
  if (x == kInf) return 0.0;
  const double t = 1.0 / (2.0 * x * x);
  double s = 0.0;
  for (int k = 12; k >= 1; --k) s = (1.0 - s) * (2 * k - 1) * t;  // Horner on the alternating series
  return (1.0 - s) * kInvSqrtPi / x;
}

// log Phi(x), Phi(x) = erfc(-x / sqrt2) / 2. For x < -1, log(erfcx(-x/sqrt2) / 2) - x^2/2 (no
// underflow, no cancellation: both terms are negative); above, log of Phi or log1p(-Phi(-x)).
double log_ndtr(double x) {
  if (std::isnan(x)) return x;
  if (x < -1.0) return std::log(erfcx(-x * kInvSqrt2) / 2.0) - x * x / 2.0;
  if (x < 1.0) return std::log(std::erfc(-x * kInvSqrt2) / 2.0);
  return std::log1p(-std::erfc(x * kInvSqrt2) / 2.0);
}

// ndtri(p): Acklam's rational approximation (relative error 1.2e-9) refined by one Halley step on
// Phi(x) - p. Near p = 1/2 the step's residual is erf(x/sqrt2)/2 - (p - 1/2) (p - 1/2 exact), so x keeps
// its relative accuracy as it goes to 0; in the tails Phi from erfc (relatively accurate), and the upper
// tail as -ndtri(1 - p) (1 - p exact).
namespace {

// Acklam's coefficients, highest degree first: the central numerator and denominator (in r = q^2,
// q = p - 1/2) and the tail's (in q = sqrt(-2 log p)); the denominators' constant term 1 left out.
constexpr double kCentralNum[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                  1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
constexpr double kCentralDen[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                  6.680131188771972e+01, -1.328068155288572e+01};
constexpr double kTailNum[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                               -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
constexpr double kTailDen[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};

template <size_t N>
double horner(const double (&c)[N], double x) {  // c[0] x^(N-1) + ... + c[N-1]
  double s = 0.0;
  for (double v : c) s = s * x + v;
  return s;
}

// ndtri(p) for p in (0, 1) to Acklam's 1.2e-9 (refine: the Halley step), else NaN / -+inf.
template <bool refine>
double ndtri_to(double p) {
  if (!(p >= 0.0 && p <= 1.0)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  constexpr double kLow = 0.02425;
  if (p > 1.0 - kLow) return -ndtri_to<refine>(1.0 - p);
  double x, residual;
  if (p < kLow) {
    const double q = std::sqrt(-2.0 * std::log(p));
    x = horner(kTailNum, q) / (horner(kTailDen, q) * q + 1.0);
    if (!refine) return x;
    residual = std::erfc(-x * kInvSqrt2) / 2.0 - p;
  } else {
    const double q = p - 0.5, r = q * q;
    x = horner(kCentralNum, r) * q / (horner(kCentralDen, r) * r + 1.0);
    if (!refine) return x;
    residual = std::erf(x * kInvSqrt2) / 2.0 - q;
  }
  const double u = residual * kSqrt2Pi * std::exp(x * x / 2.0);  // residual / Phi'(x)
  return std::isfinite(u) ? x - u / (1.0 + x * u / 2.0) : x;     // (subnormal p: Phi'(x) underflows)
}

}  // namespace

double ndtri(double p) { return ndtri_to<true>(p); }

// Note [airy_ai]
// For |x| <= 10, Ai is the Taylor series about the nearest node x0 of a grid of step 1/4:
// Ai'' = x Ai gives a_{k+2} = (x0 a_k + a_{k-1}) / ((k+2)(k+1)) from Ai(x0), Ai'(x0) (airy_nodes.inc,
// scripts/fit_airy.py, 40-digit values rounded once). |x - x0| <= 1/8 and |x0| <= 10 make the terms
// fall like (sqrt(10)/8)^k / k!: 26 of them reach double rounding, 14 a float's. Beyond 10 the
// asymptotic expansions in zeta = 2/3 |x|^1.5 (DLMF 9.7.5, 9.7.9) are accurate to rounding. +-inf
// give NaN, as torch.
namespace {

// 1 / ((k + 2)(k + 1)): the recurrence's divisions as multiplications (a chain of 26 divisions
// took twice torch's time).
constexpr auto kTaylorSteps = [] {
  std::array<double, 32> r{};
  for (int k = 0; k < 32; ++k) r[k] = 1.0 / ((k + 2.0) * (k + 1.0));
  return r;
}();

template <int kTerms>
double airy_ai_to(double x) {
  static constexpr double kNodes[][2] = {
#include "ember/ops/airy_nodes.inc"
  };
  constexpr double kRadius = 10.0, kStep = 0.25;
  if (std::isnan(x) || std::isinf(x)) return std::numeric_limits<double>::quiet_NaN();
  if (std::fabs(x) <= kRadius) {
    const int j = static_cast<int>(std::nearbyint((x + kRadius) / kStep));
    const double x0 = -kRadius + kStep * j, h = x - x0;
    double a_prev = 0.0, a = kNodes[j][0], a_next = kNodes[j][1];  // a_{k-1}, a_k, a_{k+1} at k = 0
    double total = a + a_next * h, hk = h;
    for (int k = 0; k < kTerms; ++k) {
      const double a2 = (x0 * a + a_prev) * kTaylorSteps[k];
      hk *= h;
      total += a2 * hk;
      a_prev = a, a = a_next, a_next = a2;
    }
    return total;
  }
  // u_k of DLMF 9.7.2: u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k); the terms shrink below
  // rounding before they turn around.
  static const auto kU = [] {
    std::array<double, 36> u{};
    u[0] = 1.0;
    for (int k = 1; k < 36; ++k) u[k] = u[k - 1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2.0 * k - 1) * 216 * k);
    return u;
  }();
  const double ax = std::fabs(x), t = std::sqrt(ax), zeta = 2.0 * ax * t / 3.0, z = 1.0 / zeta;
  if (x > 0) {
    double s = 0.0;
    for (int k = 35; k >= 0; --k) s = s * z + ((k & 1) ? -kU[k] : kU[k]);
    return std::exp(-zeta) * s / (2.0 * std::sqrt(std::numbers::pi) * std::sqrt(t));
  }
  const double zz = z * z;
  double p = 0.0, q = 0.0;
  for (int k = 17; k >= 0; --k) {
    p = p * zz + ((k & 1) ? -kU[2 * k] : kU[2 * k]);
    q = q * zz + ((k & 1) ? -kU[2 * k + 1] : kU[2 * k + 1]);
  }
  const double theta = zeta + std::numbers::pi / 4;
  return (std::sin(theta) * p - std::cos(theta) * q * z) / (std::sqrt(std::numbers::pi) * std::sqrt(t));
}

}  // namespace

double airy_ai(double x) { return airy_ai_to<26>(x); }

double entr(double x) {
  if (x > 0) return -x * std::log(x);       // (inf: -inf)
  return x == 0 ? 0.0 : x < 0 ? -kInf : x;  // NaN stays NaN
}

}  // namespace math

namespace {

// For a float result: erfcx(x >= 0) as t Q(2t - 1), t = 1.5 / (1.5 + x), the float erfc kernel's
// polynomial (cpu/erfcx_coefs_f32.inc, relative error 1.3e-7; no libm call); ndtri's estimate
// (1.2e-9 relative is 0.02 of a float ulp); Ai's series to 14 terms (the 15th is below 1e-10 of the
// first).
double erfcx_float(double x) {
  if (!(x >= 0.0 && x < std::numeric_limits<double>::infinity())) return math::erfcx(x);
  const double t = 1.5 / (1.5 + x), s = 2.0 * t - 1.0;
  double q = 0.0;
#define EMBER_ERFC_COEF(c) q = q * s + static_cast<double>(c);
#include "ember/cpu/erfcx_coefs_f32.inc"
#undef EMBER_ERFC_COEF
  return t * q;
}
double ndtri_float(double p) { return math::ndtri_to<false>(p); }
double airy_ai_float(double x) { return math::airy_ai_to<14>(x); }

struct SpecialInfo {
  const char* name;   // torch's kernel name, for dtype errors
  bool half = false;  // float16/bfloat16 accepted (entr), else NotImplementedError as torch
};

SpecialInfo special_info(SpecialUnaryOp op) {
  switch (op) {
    case SpecialUnaryOp::Erfcx:
      return {"erfcx"};
    case SpecialUnaryOp::LogNdtr:
      return {"log_ndtr"};
    case SpecialUnaryOp::Ndtri:
      return {"ndtri"};
    case SpecialUnaryOp::AiryAi:
      return {"airy_ai"};
    case SpecialUnaryOp::Entr:
      return {"entr", true};
  }
  return {"?"};
}

// o[k] = f(in[k]) in double, in parallel; f a lambda, so it inlines (through a function pointer, a call
// per element cost more than entr's log).
template <typename T, typename F>
void apply(const T* in, T* o, int64_t n, F f) {
  parallel_for(0, n, 512, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) o[k] = static_cast<T>(f(static_cast<double>(static_cast<opmath_t<T>>(in[k]))));
  });
}

// op over x's elements into a new contiguous tensor of x's dtype; a float result takes the float forms.
Tensor special_values(SpecialUnaryOp op, const SpecialInfo& info, const Tensor& x) {
  const Tensor xc = contiguous(x);
  Tensor out = empty(x.sizes(), x.dtype());
  const int64_t n = x.numel();
  EMBER_DISPATCH_FLOAT(x.dtype(), info.name, [&] {
    const scalar_t* in = xc.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    constexpr bool kDouble = std::is_same_v<scalar_t, double>;
    switch (op) {
      case SpecialUnaryOp::Erfcx:
        if constexpr (kDouble)
          apply(in, o, n, [](double v) { return math::erfcx(v); });
        else
          apply(in, o, n, [](double v) { return erfcx_float(v); });
        break;
      case SpecialUnaryOp::LogNdtr:
        apply(in, o, n, [](double v) { return math::log_ndtr(v); });
        break;
      case SpecialUnaryOp::Ndtri:
        if constexpr (kDouble)
          apply(in, o, n, [](double v) { return math::ndtri(v); });
        else
          apply(in, o, n, [](double v) { return ndtri_float(v); });
        break;
      case SpecialUnaryOp::AiryAi:
        if constexpr (kDouble)
          apply(in, o, n, [](double v) { return math::airy_ai(v); });
        else
          apply(in, o, n, [](double v) { return airy_ai_float(v); });
        break;
      case SpecialUnaryOp::Entr:
        apply(in, o, n, [](double v) { return math::entr(v); });
        break;
    }
  });
  return out;
}

}  // namespace

Tensor special_unary(SpecialUnaryOp op, const Tensor& input) {
  const SpecialInfo info = special_info(op);
  const ScalarType dt = input.dtype();
  if (is_complex(dt) || (!info.half && (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)))
    EMBER_NOT_IMPLEMENTED("\"", info.name, "_cpu\" not implemented for '", scalar_type_name(dt), "'");
  const Tensor x = is_floating_point(dt) ? input : to_dtype(input, default_dtype());
  Tensor y;
  {
    autograd::NoGradGuard no_grad;
    y = special_values(op, info, x);
  }
  if (op == SpecialUnaryOp::AiryAi) return y;
  static constexpr const char* kNodes[] = {"SpecialErfcxBackward0", "SpecialLogNdtrBackward0", "SpecialNdtriBackward0",
                                           "", "SpecialEntrBackward0"};  // (airy_ai: none)
  if (auto n = autograd::make_node<autograd::LambdaBackward>(x)) {
    auto backward = [op](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
      const Tensor& xv = s[0];
      const Tensor yv = s.size() > 1 ? s[1] : Tensor();
      Tensor d;
      switch (op) {
        case SpecialUnaryOp::Erfcx:  // 2 x erfcx(x) - 2/sqrt(pi)
          d = sub(mul(mul(xv, yv), ew::num(2.0)), ew::num(2.0 * math::kInvSqrtPi));
          break;
        case SpecialUnaryOp::LogNdtr:  // phi(x) / Phi(x) = exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)
          d = div(exp(sub(mul(mul(xv, xv), ew::num(-0.5)), yv)), ew::num(math::kSqrt2Pi));
          break;
        case SpecialUnaryOp::Ndtri:  // 1 / phi(ndtri(p)) = sqrt(2 pi) exp(ndtri(p)^2 / 2)
          d = mul(exp(mul(mul(yv, yv), ew::num(0.5))), ew::num(math::kSqrt2Pi));
          break;
        default:  // entr: -(1 + log x), torch's formula (inf at 0, NaN below)
          d = neg(add(log(xv), ew::num(1.0)));
          break;
      }
      return {mul(g[0], d)};
    };
    // entr's gradient needs only the input (its result not saved, as torch's: it may change in place)
    if (op == SpecialUnaryOp::Entr)
      n->record(kNodes[static_cast<int>(op)], {y}, {x}, {}, backward);
    else
      n->record(kNodes[static_cast<int>(op)], {y}, {x}, {y}, backward);
  }
  return y;
}

}  // namespace ember
