// Note [Double math]: branch-free float64 log, log2, log10, log1p, expm1, tanh, sin, cos and tan, so
// the unary loops vectorize them (glibc's are calls: float64 sin took 9.7x torch's time, log 5.4x,
// tanh 11.6x; these 1.3-1.8x, torch's being MKL's table-driven ones, which ember also calls where
// MKL is installed: Note [MKL VML] in mkl_blas.cpp). Every polynomial is a Taylor series (exact rational coefficients)
// cut where the first dropped term is below 2^-60 of the result over the reduced range; the rest follows fdlibm's
// algorithms. Errors against the correctly rounded result, measured over random doubles of every
// exponent and the hard cases (test_unary.py): log/log2/log10/log1p and sin/cos within 1 ulp, tanh
// 1.5, tan 2.2, expm1 1.6 (2.2 at the baseline kernel level, without FMA) (torch's SLEEF: 1 ulp).
// Long polynomials go through poly_x4 (unary_math.h) past their first terms. Trigonometry takes |x| < 2^20
// (trig_needs_libm: larger, inf and NaN go to libm in a second pass, as in Note [Float trigonometry]).
// Kernel code (Note [Multi-ISA kernels] in isa.h): include after isa_begin.h and unary_math.h.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ember/cpu/unary_math.h"

namespace ember::math {
inline namespace EMBER_ISA_NS {  // Note [Multi-ISA kernels] in isa.h

// ---- logarithms: x = 2^k m, m in [sqrt(1/2), sqrt(2)), f = m - 1 and, with s = f / (2 + f),
// log(1 + f) = f - hfsq + s (hfsq + R(s^2)), hfsq = f^2 / 2, R(z) = sum 2 z^n / (2n + 1) (n = 1..10:
// |s| <= 0.1716, so the first dropped term is below 2^-62 of the result). ----
struct LogPartsD {
  double f, hfsq, r, dk;  // log(x) = dk ln2 + f - hfsq + r
};
EMBER_MATH_INLINE LogPartsD log_parts_of_m(uint64_t iu, int64_t k) {
  LogPartsD p;
  p.f = std::bit_cast<double>((iu & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull) - 1.0;
  const double s = p.f / (2.0 + p.f);
  const double z = s * s, w = z * z;
  const double t1 = w * (2.0 / 5 + w * (2.0 / 9 + w * (2.0 / 13 + w * (2.0 / 17 + w * (2.0 / 21)))));
  const double t2 = z * (2.0 / 3 + w * (2.0 / 7 + w * (2.0 / 11 + w * (2.0 / 15 + w * (2.0 / 19)))));
  p.hfsq = 0.5 * p.f * p.f;
  p.r = s * (p.hfsq + (t1 + t2));
  p.dk = static_cast<double>(k);
  return p;
}
constexpr uint64_t kSqrtHalfOffset = 0x3ff0000000000000ull - 0x3fe6a09e667f3bcdull;  // moves m's cut to sqrt(1/2)
EMBER_MATH_INLINE LogPartsD log_parts(double x) {
  const bool sub = x < 2.2250738585072014e-308;         // subnormal (or zero or negative: replaced by log_special)
  const double xs = sub ? x * 18014398509481984.0 : x;  // 2^54
  const uint64_t iu = std::bit_cast<uint64_t>(xs) + kSqrtHalfOffset;
  return log_parts_of_m(iu, static_cast<int64_t>(iu >> 52) - 0x3ff - (sub ? 54 : 0));
}
// log(0) = -inf, log(x < 0) = NaN, inf and NaN stay.
EMBER_MATH_INLINE double log_special(double x, double r) {
  return x < 0.0                                          ? std::numeric_limits<double>::quiet_NaN()
         : x == 0.0                                       ? -std::numeric_limits<double>::infinity()
         : !(x < std::numeric_limits<double>::infinity()) ? x
                                                          : r;
}
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 in two parts, the first's low 32 bits zero
constexpr double kLn2Lo = 1.90821492927058770002e-10;
EMBER_MATH_INLINE double log(double x) {
  const LogPartsD p = log_parts(x);
  return log_special(x, p.dk * kLn2Hi + (p.f - (p.hfsq - (p.r + p.dk * kLn2Lo))));
}
// log2 and log10 (fdlibm's e_log2.c / e_log10.c): f - hfsq split as hi + lo with hi's low 32 bits
// cleared, so its products with the high halves of 1/ln2 and 1/ln10 are exact and log2(2^k) = k.
struct LogHiLo {
  double hi, lo;
};
EMBER_MATH_INLINE LogHiLo log_hi_lo(const LogPartsD& p) {
  const double hi = std::bit_cast<double>(std::bit_cast<uint64_t>(p.f - p.hfsq) & 0xffffffff00000000ull);
  return {hi, (p.f - hi) - p.hfsq + p.r};
}
EMBER_MATH_INLINE double log2(double x) {
  const LogPartsD p = log_parts(x);
  const LogHiLo h = log_hi_lo(p);
  constexpr double kInvLn2Hi = 1.44269504072144627571e+00, kInvLn2Lo = 1.67517131648865118353e-10;
  const double val_hi = h.hi * kInvLn2Hi;
  double val_lo = (h.lo + h.hi) * kInvLn2Lo + h.lo * kInvLn2Hi;
  const double w = p.dk + val_hi;
  val_lo += (p.dk - w) + val_hi;
  return log_special(x, val_lo + w);
}
EMBER_MATH_INLINE double log10(double x) {
  const LogPartsD p = log_parts(x);
  const LogHiLo h = log_hi_lo(p);
  constexpr double kInvLn10Hi = 4.34294481878168880939e-01, kInvLn10Lo = 2.50829467116452752298e-11;
  constexpr double kLog10Of2Hi = 3.01029995663611771306e-01, kLog10Of2Lo = 3.69423907715893078616e-13;
  const double val_hi = h.hi * kInvLn10Hi, y2 = p.dk * kLog10Of2Hi;
  double val_lo = p.dk * kLog10Of2Lo + (h.lo + h.hi) * kInvLn10Lo + h.lo * kInvLn10Hi;
  const double w = y2 + val_hi;
  val_lo += (y2 - w) + val_hi;
  return log_special(x, val_lo + w);
}
// log(1 + x): u = 1 + x split as above; c, the rounding error of u divided by u, restores what
// forming u lost (a tiny x gives x), as the float log1p in unary_math.h.
EMBER_MATH_INLINE double log1p(double x) {
  const double u = 1.0 + x;
  const uint64_t iu = std::bit_cast<uint64_t>(u) + kSqrtHalfOffset;  // (NaN and u <= 0: replaced below)
  const int64_t k = static_cast<int64_t>(iu >> 52) - 0x3ff;
  double c = k >= 2 ? 1.0 - (u - x) : x - (u - 1.0);
  c = k < 54 ? c / u : 0.0;  // past 2^54 the correction is below an ulp
  const LogPartsD p = log_parts_of_m(iu, k);
  const double r = p.dk * kLn2Hi + (p.f - (p.hfsq - (p.r + (p.dk * kLn2Lo + c))));
  const double v = x == -1.0                                      ? -std::numeric_limits<double>::infinity()
                   : !(x > -1.0)                                  ? std::numeric_limits<double>::quiet_NaN()
                   : x == std::numeric_limits<double>::infinity() ? x
                                                                  : r;
  return x == 0.0 ? x : v;  // keeps -0
}

// ---- e^x - 1 and tanh ----

// e^x - 1: the Taylor series to x^24 / 24! for -1 < x < 2 (written x + x^2 q(x), the leading term
// added last; below -1 its alternating terms cancel too much), math::exp(x) - 1 beyond (where the
// subtraction loses at most a bit).
EMBER_MATH_INLINE double expm1(double x) {
  static constexpr double kT[] = {1.0 / 720.0,
                                  1.0 / 5040.0,
                                  1.0 / 40320.0,
                                  1.0 / 362880.0,
                                  1.0 / 3628800.0,
                                  1.0 / 39916800.0,
                                  1.0 / 479001600.0,
                                  1.0 / 6227020800.0,
                                  1.0 / 87178291200.0,
                                  1.0 / 1307674368000.0,
                                  1.0 / 20922789888000.0,
                                  1.0 / 355687428096000.0,
                                  1.0 / 6402373705728000.0,
                                  1.0 / 121645100408832000.0,
                                  1.0 / 2432902008176640000.0,
                                  1.0 / 51090942171709440000.0,
                                  1.0 / 1124000727777607680000.0,
                                  1.0 / 25852016738884976640000.0,
                                  1.0 / 620448401733239439360000.0};  // 1/6! .. 1/24!
  const double q = 0.5 + x * (1.0 / 6 + x * (1.0 / 24 + x * (1.0 / 120 + x * poly_x4(x, kT))));
  const double small = x == 0.0 ? x : x + (x * x) * q;  // keeps -0
  const double big = math::exp(x) - 1.0;
  return (x > -1.0 && x < 2.0) ? small : big;  // NaN takes math::exp's path, which keeps it
}
// tanh: its Taylor series to x^39 for |x| < 0.55 (written x + x^3 p(x^2); the terms shrink by
// about (2x/pi)^2 each), and beyond tanh(|x|) = 1 - 2u / (1 + u), u = e^(-2|x|) <= 1/3 (no overflow;
// +-1 from |x| = 19.1 on), with x's sign put back.
EMBER_MATH_INLINE double tanh(double x) {
  const double a = std::fabs(x), z = x * x;
  static constexpr double kP[] = {
      -0.3333333333333333,     0.13333333333333333,    -0.05396825396825397,    0.021869488536155203,
      -0.008863235529902197,   0.003592128036572481,   -0.0014558343870513183,  0.000590027440945586,
      -0.00023912911424355248, 9.691537956929451e-05,  -3.927832388331683e-05,  1.5918905069328964e-05,
      -6.451689215655431e-06,  2.6147711512907546e-06, -1.0597268320104654e-06, 4.294911078273806e-07,
      -1.7406618963571648e-07, 7.054636946400968e-08,  -2.859136662305254e-08};  // x^3 .. x^39
  const double p = poly_x4(z, kP);
  const double small = a + a * z * p;
  const double u = math::exp(-2.0 * a);
  const double y = a < 0.55 ? small : 1.0 - 2.0 * u / (1.0 + u);  // NaN takes the second, which keeps it
  return std::bit_cast<double>(std::bit_cast<uint64_t>(y) | (std::bit_cast<uint64_t>(x) & 0x8000000000000000ull));
}

// ---- trigonometry: x = k pi/2 + r, |r| <= pi/4 (and a hair), r as a double-double hi + lo ----

constexpr double kDoubleTrigLibmBound = 1048576.0;  // 2^20: k * (33-bit pieces of pi/2) stays exact
EMBER_MATH_INLINE bool trig_needs_libm(double x) { return !(std::fabs(x) < kDoubleTrigLibmBound); }
struct ReducedD {
  double hi, lo;
  uint64_t q;  // k mod 2^64 (k's quadrant is q & 3)
};
// a - b as s + e exactly (Knuth's TwoSum: no ordering of |a| and |b| needed).
EMBER_MATH_INLINE double two_diff(double a, double b, double& e) {
  const double s = a - b, bb = s - a;
  e = (a - (s - bb)) - (b + bb);
  return s;
}
EMBER_MATH_INLINE ReducedD reduce_half_pi(double x) {
  const double kRound = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer kept in the low bits
  const double t = x * 0.63661977236758134308 + kRound;
  const double k = t - kRound;
  // pi/2 in four pieces, the first three 33 bits long (k times them is exact for |k| < 2^20)
  const double a = x - k * 1.57079632673412561417e+00;  // exact: x and k p1 within a factor 2 (or k = 0)
  double e1, e2;
  const double s1 = two_diff(a, k * 6.07710050630396597660e-11, e1);
  const double s2 = two_diff(s1, k * 2.02226624871116645580e-21, e2);
  const double lo = (e1 + e2) - k * 8.47842766036889956997e-32;
  ReducedD r;
  r.hi = s2 + lo;
  r.lo = lo - (r.hi - s2);
  r.q = std::bit_cast<uint64_t>(t);
  return r;
}
// sin(hi + lo) = sin(hi) + lo cos(hi) to below an ulp; z = hi^2. Terms to r^17 / 17!.
EMBER_MATH_INLINE double sin_dd(double hi, double lo, double z) {
  static constexpr double kP[] = {
      -1.0 / 6.0,        1.0 / 120.0,        -1.0 / 5040.0,          1.0 / 362880.0,
      -1.0 / 39916800.0, 1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0};  // r^3 .. r^17
  const double p = poly_x4(z, kP);
  return hi + (hi * z * p + lo * (1.0 - 0.5 * z));
}
// cos(hi + lo) = cos(hi) - lo sin(hi); 1 - z/2 formed with its rounding error kept (fdlibm's
// __kernel_cos). Terms to r^18 / 18!.
EMBER_MATH_INLINE double cos_dd(double hi, double lo, double z) {
  static constexpr double kP[] = {
      1.0 / 24.0,        -1.0 / 720.0,         1.0 / 40320.0,          -1.0 / 3628800.0,
      1.0 / 479001600.0, -1.0 / 87178291200.0, 1.0 / 20922789888000.0, -1.0 / 6402373705728000.0};  // r^4 .. r^18
  const double p = poly_x4(z, kP);
  const double hz = 0.5 * z, w = 1.0 - hz;
  return w + (((1.0 - w) - hz) + (z * z * p - hi * lo));
}
EMBER_MATH_INLINE double sin(double x) {
  const ReducedD r = reduce_half_pi(x);
  const double z = r.hi * r.hi;
  const double v = (r.q & 1) ? cos_dd(r.hi, r.lo, z) : sin_dd(r.hi, r.lo, z);
  return x == 0.0 ? x : ((r.q & 2) ? -v : v);  // sin(-0) = -0
}
EMBER_MATH_INLINE double cos(double x) {
  const ReducedD r = reduce_half_pi(x);
  const double z = r.hi * r.hi;
  const double v = (r.q & 1) ? sin_dd(r.hi, r.lo, z) : cos_dd(r.hi, r.lo, z);
  return ((r.q + 1) & 2) ? -v : v;
}
EMBER_MATH_INLINE double tan(double x) {
  const ReducedD r = reduce_half_pi(x);
  const double z = r.hi * r.hi;
  const double s = sin_dd(r.hi, r.lo, z), c = cos_dd(r.hi, r.lo, z);
  return x == 0.0 ? x : ((r.q & 1) ? -c / s : s / c);  // tan(-0) = -0
}

}  // namespace EMBER_ISA_NS
}  // namespace ember::math
