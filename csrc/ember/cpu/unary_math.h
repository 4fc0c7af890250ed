// Scalar math for the unary kernels: special functions the C++ library lacks (erfinv,
// digamma, trigamma, zeta, polygamma) and branch-free float versions of exp/tanh/erf-based functions.
//
// Note [Vectorizable float math]: glibc's expf/tanhf/erff are calls GCC cannot vectorize (and
// SLEEF's AVX2 versions measured slower than PyTorch's kernels: exp 45 ms vs 30 ms, tanh and erf
// slower than glibc, on 16M floats). The float functions below are straight-line code (selects,
// no branches, no calls), so the contiguous loops in loops.h auto-vectorize them under -O3
// -march=native. Each is within a few ulp of the correctly rounded result over the whole range.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ember/cpu/isa_check.h"  // Note [Multi-ISA kernels]

// Forced inlining: in a kernel file with many ops GCC's inliner runs out of budget, and a call
// left in a loop body stops it from vectorizing.
#define EMBER_MATH_INLINE [[gnu::always_inline]] inline

namespace ember::math {
inline namespace EMBER_ISA_NS {  // Note [Multi-ISA kernels] in isa.h

// ---- float: vectorizable ----

// e^x over float's whole range (subnormal results and inf included, NaN propagates), within
// 2 ulp. One body for a float (auto-vectorized in the unary loops) and for an explicit lane type
// (cpu::exp8 in vec_math.h drives softmax and logsumexp): F is float or a GCC vector of floats,
// I the int32 of the same shape. Cephes' reduction x = n ln2 + r with a degree-7 polynomial for
// e^r; 2^n is applied as two factors so n in [-150, 128] never leaves the normal exponent range.
#ifdef EMBER_AVX512_LANES
// Note [16-lane float math]: exp_lanes' arithmetic at 16 lanes, operation for operation (the
// fused multiply-adds where GCC contracts the float code), with 2^n applied by vscalefps in one
// step: the same float for every input (checked over all 2^32 floats), in about half the
// instructions of the auto-vectorized body, whose integer exponent steps AVX-512 issues on one
// port. x86 max/min return their second operand when either is NaN, so NaN comes through.
EMBER_MATH_INLINE __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
  const __m512 round = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), round), round);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}
#endif

// e^r for |r| <= ln2 / 2: Cephes' degree-7 polynomial (exp_lanes and exp2; exp16 has the same at 16 lanes).
template <typename F>
EMBER_MATH_INLINE F exp_reduced(F r) {
  F p = F{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * (r * r) + r + 1.0f;
}

template <typename F, typename I>
EMBER_MATH_INLINE F exp_lanes(F x) {
#ifdef EMBER_AVX512_LANES
  if constexpr (sizeof(F) == 64) return std::bit_cast<F>(exp16(std::bit_cast<__m512>(x)));
#endif
  const F zero{};
  // Clamps written as x86 max/min (the second operand, x, comes through when it is NaN). Below
  // -104 the result rounds to 0 and above 89 it overflows to inf with no further select.
  F xc = zero - 104.0f > x ? zero - 104.0f : x;
  xc = zero + 89.0f < xc ? zero + 89.0f : xc;
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer...
  const F t = xc * 1.44269504088896341f + kRound;
  const F n = t - kRound;
  const I ni = std::bit_cast<I>(t) - std::bit_cast<int32_t>(kRound);  // ...kept in the low bits
  F r = xc - n * 0.693359375f;                                        // ln2 split so n * ln2_hi is exact
  r = r - n * -2.12194440e-4f;
  const F p = exp_reduced(r);
  const I n1 = ni >> 1, n2 = ni - n1;
  return (p * std::bit_cast<F>((n1 + 127) << 23)) * std::bit_cast<F>((n2 + 127) << 23);
}

EMBER_MATH_INLINE float exp(float x) { return exp_lanes<float, int32_t>(x); }

// c[0] + c[1] x + ... + c[N-1] x^(N-1) as four Horner chains in x^4 joined at the end (Estrin's idea):
// a quarter of the dependent FMAs. One chain of a dozen FMAs per element kept too few independent
// ones in the out-of-order window (float64 exp ran at 1.8x torch's time at 8 lanes). c: a constexpr
// array, so the loads fold into constants.
template <size_t R, size_t N>
EMBER_MATH_INLINE double horner_x4(double x4, const double (&c)[N]) {
  constexpr size_t top = R + (N - 1 - R) / 4 * 4;
  double p = c[top];
#pragma GCC unroll 16
  for (size_t j = top; j >= R + 4; j -= 4) p = p * x4 + c[j - 4];
  return p;
}
template <size_t N>
EMBER_MATH_INLINE double poly_x4(double x, const double (&c)[N]) {
  static_assert(N >= 4);
  const double x2 = x * x, x4 = x2 * x2;
  return (horner_x4<0>(x4, c) + x * horner_x4<1>(x4, c)) + x2 * (horner_x4<2>(x4, c) + x * horner_x4<3>(x4, c));
}

// Note [Double exp]: e^x for double, within 1 ulp, branch-free (glibc's exp is a call the loops
// cannot vectorize: float64 exp took 3x torch's time). x = n ln2 + r, |r| <= ln2 / 2, with ln2
// split so n * ln2_hi is exact; e^r as its Taylor series to r^13 / 13! (truncation below 2^-58
// relative) written 1 + r + r^2 q(r), so the leading terms add last; 2^n applied as two factors as
// in exp_lanes. Overflow and underflow come from the clamps; NaN passes them (x86 max/min order).
EMBER_MATH_INLINE double exp(double x) {
  double xc = -746.0 > x ? -746.0 : x;
  xc = 710.0 < xc ? 710.0 : xc;
  const double kRound = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer...
  const double t = xc * 1.4426950408889634074 + kRound;
  const double n = t - kRound;
  const int64_t ni = std::bit_cast<int64_t>(t) - std::bit_cast<int64_t>(kRound);  // ...kept in the low bits
  double r = xc - n * 6.93147180369123816490e-01;                                 // ln2_hi: 32 significant bits
  r = r - n * 1.90821492927058770002e-10;                                         // ln2_lo
  static constexpr double kT[] = {1.0 / 120.0,      1.0 / 720.0,       1.0 / 5040.0,
                                  1.0 / 40320.0,    1.0 / 362880.0,    1.0 / 3628800.0,
                                  1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0};  // 1/5! .. 1/13!
  const double q = 0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * poly_x4(r, kT)));  // Horner for the terms that count
  const double p = 1.0 + (r + r * r * q);
  const int64_t n1 = ni >> 1, n2 = ni - n1;
  return (p * std::bit_cast<double>((n1 + 1023) << 52)) * std::bit_cast<double>((n2 + 1023) << 52);
}

EMBER_MATH_INLINE float sigmoid(float x) { return 1.0f / (1.0f + math::exp(-x)); }

// log(1 + x), within 2 ulp, branch-free: fdlibm's log1pf (musl's constants) taken down its general
// path for every x. u = 1 + x is split as 2^k m with m in [sqrt(1/2), sqrt(2)), log(m) comes from
// the odd series in s = f / (2 + f), f = m - 1, and c = the rounding error of u, divided by u,
// restores what forming u lost (so a tiny x gives x). glibc's log1pf is a call the loops cannot
// vectorize: softplus, mish and logsigmoid spent most of their time there (softplus 15x torch's).
EMBER_MATH_INLINE float log1p(float x) {
  const float u = 1.0f + x;
  // unsigned: a NaN's bits would overflow int32 here (its lanes are replaced below anyway)
  const uint32_t iu = std::bit_cast<uint32_t>(u) + (0x3f800000u - 0x3f3504f3u);
  const int32_t k = static_cast<int32_t>(iu >> 23) - 0x7f;
  float c = k >= 2 ? 1.0f - (u - x) : x - (u - 1.0f);
  c = k < 25 ? c / u : 0.0f;  // past 2^25 the correction is below an ulp (and c / u could underflow)
  const float f = std::bit_cast<float>((iu & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s, w = z * z;
  const float t1 = w * (0.40000972152f + w * 0.24279078841f);
  const float t2 = z * (0.66666662693f + w * 0.28498786688f);
  const float hfsq = 0.5f * f * f;
  const float dk = static_cast<float>(k);
  const float r = s * (hfsq + (t1 + t2)) + (dk * 9.0580006145e-06f + c) - hfsq + f + dk * 6.9313812256e-01f;
  // x = -1 gives -inf and x < -1 NaN (as NaN itself); +inf stays +inf; -0 stays -0 (below: in
  // the same chain GCC made branches of the selects)
  const float v = x == -1.0f                                    ? -std::numeric_limits<float>::infinity()
                  : !(x > -1.0f)                                ? std::numeric_limits<float>::quiet_NaN()
                  : x == std::numeric_limits<float>::infinity() ? x
                                                                : r;
  return x == 0.0f ? x : v;
}

// e^x - 1, within 3 ulp, branch-free: the Taylor series to x^11 / 11! for |x| < 1 (truncation
// below 2^-28 relative), e^x - 1 from math::exp beyond, where the subtraction loses at most a bit.
// glibc's expm1f is a call the loops cannot vectorize (elu: 6.6x torch's time).
EMBER_MATH_INLINE float expm1(float x) {
  float p = 2.5052108385e-08f;  // 1 / 11!
  p = p * x + 2.7557319224e-07f;
  p = p * x + 2.7557319224e-06f;
  p = p * x + 2.4801587302e-05f;
  p = p * x + 1.9841269841e-04f;
  p = p * x + 1.3888888889e-03f;
  p = p * x + 8.3333333333e-03f;
  p = p * x + 4.1666666667e-02f;
  p = p * x + 1.6666666667e-01f;
  p = p * x + 0.5f;
  const float small = x == 0.0f ? x : p * (x * x) + x;  // keeps -0
  const float big = math::exp(x) - 1.0f;
  return std::fabs(x) < 1.0f ? small : big;  // NaN takes math::exp's path, which keeps it
}

// Note [Float sinh and cosh]: branch-free, for |x| <= 88.5 (beyond, where e^|x| overflows before
// sinh and cosh do, the loops hand the element to libm). sinh: the odd Taylor series to x^11 / 11!
// for |x| < 1 (truncation below 2^-32 relative), (e^|x| - e^-|x|) / 2 from math::exp beyond, where
// the subtraction loses under a bit; cosh: (e^|x| + e^-|x|) / 2 everywhere (no cancellation).
// glibc's sinhf/coshf are calls the loops cannot vectorize (9.5x torch's time).
EMBER_MATH_INLINE float sinh(float x) {
  const float a = std::fabs(x), z = a * a;
  float p = 2.5052108385e-08f;  // 1 / 11!
  p = p * z + 2.7557319224e-06f;
  p = p * z + 1.9841269841e-04f;
  p = p * z + 8.3333333333e-03f;
  p = p * z + 1.6666666667e-01f;
  const float small = a + a * z * p;
  const float e = math::exp(a);
  const float big = 0.5f * e - 0.5f / e;
  return std::copysign(a < 1.0f ? small : big, x);  // NaN: math::exp keeps it; sinh(-0) = -0
}
EMBER_MATH_INLINE float cosh(float x) {
  const float e = math::exp(std::fabs(x));
  return 0.5f * e + 0.5f / e;
}
// Where sinh and cosh leave float to libm (and the infinities, which libm keeps exact).
EMBER_MATH_INLINE bool hyperbolic_needs_libm(float x) { return !(std::fabs(x) <= 88.5f) && x == x; }

// tanh: odd minimax polynomial near 0 (Cephes tanhf), 1 - 2 / (e^2|x| + 1) elsewhere.
EMBER_MATH_INLINE float tanh(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float s = -5.70498872745e-3f;
  s = std::fma(s, z, 2.06390887954e-2f);
  s = std::fma(s, z, -5.37397155531e-2f);
  s = std::fma(s, z, 1.33314422036e-1f);
  s = std::fma(s, z, -3.33332819422e-1f);
  const float small = std::fma(s * z, a, a);
  const float big = 1.0f - 2.0f / (math::exp(2.0f * a) + 1.0f);
  const float r = std::copysign(a < 0.625f ? small : big, x);  // odd, and tanh(-0) = -0
  return x != x ? x : r;
}

// erf(x) and erfc(|x|) pieces. For |x| < 1: x * P(x^2). For |x| >= 1: erfc(|x|) =
// exp(-x^2) * R(2/|x| - 1) / |x| (coefficients: scripts/fit_erfc.py), with x^2 passed as a float
// plus its rounding error (fma), so the relative error does not grow with x^2.
EMBER_MATH_INLINE float erfc_tail(float a, float a2, float a2_lo) {  // erfc(a), a >= 1; a^2 = a2 + a2_lo
  const float t = 1.0f / a;
  const float v = 2.0f * t - 1.0f;
  float q = 0.0f;
#define EMBER_ERFC_COEF(c) q = std::fma(q, v, c);
#include "ember/cpu/erfc_coefs_f32.inc"
#undef EMBER_ERFC_COEF
  // exp(-a^2) = exp(-a2) * (1 - a2_lo): a2_lo is below an ulp of a2.
  const float r = math::exp(-a2) * (1.0f - a2_lo) * q * t;
  return a > 10.0f ? 0.0f : r;  // erfc(10) < 2^-149 (and inf * 0 would make NaN)
}
EMBER_MATH_INLINE float erf_small(float x) {  // erf(x) for |x| <= 1
  const float z = x * x;
  float p = 7.853861353153693e-5f;
  p = std::fma(p, z, -8.010193625184903e-4f);
  p = std::fma(p, z, 5.188327685732524e-3f);
  p = std::fma(p, z, -2.685381193529856e-2f);
  p = std::fma(p, z, 1.128358514861418e-1f);
  p = std::fma(p, z, -3.761262582423300e-1f);
  p = std::fma(p, z, 1.128379165726710f);
  return x * p;
}
EMBER_MATH_INLINE float erf(float x) {
  const float a = std::fabs(x);
  const float b = a < 1.0f ? 1.0f : a, b2 = b * b;
  const float big = std::copysign(1.0f - erfc_tail(b, b2, std::fma(b, b, -b2)), x);
  const float r = a < 1.0f ? erf_small(x) : big;
  return x != x ? x : r;
}
// Phi(x), the standard normal CDF, and e = exp(-x^2/2), for gelu and its gradient (which needs both).
// Phi(x) = erfc(-x/sqrt2)/2 with erfc(a) = exp(-a^2) t Q(2t - 1), t = 1.5/(1.5 + a), for every a >= 0
// (scripts/fit_erfc.py, relative error 1.3e-7): one range, so no second polynomial per lane, and
// relative accuracy kept for negative x, where Phi is tiny.
EMBER_MATH_INLINE float normal_cdf(float x, float& e) {
  const float a = std::fabs(x) * 0.70710678118654752f;
  // a^2 = x^2/2 from x itself (a's rounding error would grow by a^2 in exp(-a^2)), as a float plus
  // its rounding error: exp(-a^2) = exp(-a2) * (1 - a2_lo), a2_lo below an ulp of a2.
  const float x2 = x * x;
  const float a2 = 0.5f * x2, a2_lo = a < 20.0f ? 0.5f * std::fma(x, x, -x2) : 0.0f;  // inf - inf for |x| = inf
  e = math::exp(-a2) * (1.0f - a2_lo);
  const float t = 1.5f / (1.5f + a);
  const float s = 2.0f * t - 1.0f;
  float q = 0.0f;
#define EMBER_ERFC_COEF(c) q = std::fma(q, s, c);
#include "ember/cpu/erfcx_coefs_f32.inc"
#undef EMBER_ERFC_COEF
  const float half_erfc = 0.5f * e * t * q;  // erfc(|x|/sqrt2) / 2
  return x > 0.0f ? 1.0f - half_erfc : half_erfc;
}
// x * Phi(x)
EMBER_MATH_INLINE float gelu(float x) {
  float e;
  return x * normal_cdf(x, e);
}

#ifdef EMBER_AVX512_LANES
// normal_cdf at 16 lanes, operation for operation (Note [16-lane float math]; the division stays
// a division, so each lane's float is normal_cdf's).
EMBER_MATH_INLINE __m512 normal_cdf16(__m512 x, __m512& e) {
  const __m512 a = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
  const __m512 x2 = _mm512_mul_ps(x, x);
  const __m512 a2 = _mm512_mul_ps(_mm512_set1_ps(0.5f), x2);
  const __mmask16 finite = _mm512_cmp_ps_mask(a, _mm512_set1_ps(20.0f), _CMP_LT_OQ);
  const __m512 a2_lo = _mm512_maskz_mul_ps(finite, _mm512_set1_ps(0.5f), _mm512_fmsub_ps(x, x, x2));
  e = _mm512_mul_ps(exp16(_mm512_xor_ps(a2, _mm512_set1_ps(-0.0f))), _mm512_sub_ps(_mm512_set1_ps(1.0f), a2_lo));
  const __m512 t = _mm512_div_ps(_mm512_set1_ps(1.5f), _mm512_add_ps(_mm512_set1_ps(1.5f), a));
  const __m512 s = _mm512_fmsub_ps(_mm512_set1_ps(2.0f), t, _mm512_set1_ps(1.0f));
  __m512 q = _mm512_setzero_ps();
#define EMBER_ERFC_COEF(c) q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(c));
#include "ember/cpu/erfcx_coefs_f32.inc"
#undef EMBER_ERFC_COEF
  const __m512 half_erfc = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), e), t), q);
  const __mmask16 positive = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ);
  return _mm512_mask_sub_ps(half_erfc, positive, _mm512_set1_ps(1.0f), half_erfc);
}
EMBER_MATH_INLINE __m512 gelu16(__m512 x) {
  __m512 e;
  return _mm512_mul_ps(x, normal_cdf16(x, e));
}
EMBER_MATH_INLINE __m512 copysign16(__m512 v, __m512 x) {  // one bitwise select: x's sign bit, v's others
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  return _mm512_castsi512_ps(
      _mm512_ternarylogic_epi32(sign, _mm512_castps_si512(v), _mm512_castps_si512(x), 0xAC));  // sign ? x : v
}
EMBER_MATH_INLINE __m512 nan_as_x16(__m512 r, __m512 x) {  // x != x ? x : r
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), r, x);
}
EMBER_MATH_INLINE __m512 tanh16(__m512 x) {  // math::tanh
  const __m512 a = _mm512_abs_ps(x), z = _mm512_mul_ps(x, x);
  __m512 s = _mm512_set1_ps(-5.70498872745e-3f);
  s = _mm512_fmadd_ps(s, z, _mm512_set1_ps(2.06390887954e-2f));
  s = _mm512_fmadd_ps(s, z, _mm512_set1_ps(-5.37397155531e-2f));
  s = _mm512_fmadd_ps(s, z, _mm512_set1_ps(1.33314422036e-1f));
  s = _mm512_fmadd_ps(s, z, _mm512_set1_ps(-3.33332819422e-1f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(s, z), a, a);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e2a = exp16(_mm512_mul_ps(_mm512_set1_ps(2.0f), a));
  const __m512 big = _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e2a, one)));
  const __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.625f), _CMP_LT_OQ), big, small);
  return nan_as_x16(copysign16(r, x), x);
}
EMBER_MATH_INLINE __m512 erf16(__m512 x) {  // math::erf (erf_small and erfc_tail)
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 a = _mm512_abs_ps(x);
  const __mmask16 small = _mm512_cmp_ps_mask(a, one, _CMP_LT_OQ);
  const __m512 b = _mm512_mask_blend_ps(small, a, one), b2 = _mm512_mul_ps(b, b);
  const __m512 b2_lo = _mm512_fmsub_ps(b, b, b2);
  const __m512 t = _mm512_div_ps(one, b);
  const __m512 v = _mm512_fmsub_ps(_mm512_set1_ps(2.0f), t, one);
  __m512 q = _mm512_setzero_ps();
#define EMBER_ERFC_COEF(c) q = _mm512_fmadd_ps(q, v, _mm512_set1_ps(c));
#include "ember/cpu/erfc_coefs_f32.inc"
#undef EMBER_ERFC_COEF
  const __m512 e = exp16(_mm512_xor_ps(b2, _mm512_set1_ps(-0.0f)));
  // 1 - erfc_tail: GCC moves the subtraction into erfc_tail's select and fuses it with the last
  // product, 1 - (e (1 - b2_lo) q) t in one rounding; 1 where b > 10
  __m512 one_minus_tail = _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_mul_ps(e, _mm512_sub_ps(one, b2_lo)), q), t, one);
  one_minus_tail = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, _mm512_set1_ps(10.0f), _CMP_GT_OQ), one_minus_tail, one);
  const __m512 z = _mm512_mul_ps(x, x);
  __m512 p = _mm512_set1_ps(7.853861353153693e-5f);
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-8.010193625184903e-4f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(5.188327685732524e-3f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-2.685381193529856e-2f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.128358514861418e-1f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-3.761262582423300e-1f));
  p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.128379165726710f));
  const __m512 near0 = _mm512_mul_ps(x, p);
  return nan_as_x16(_mm512_mask_blend_ps(small, copysign16(one_minus_tail, x), near0), x);
}
EMBER_MATH_INLINE __m512 sigmoid16(__m512 x) {  // math::sigmoid
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_xor_ps(x, _mm512_set1_ps(-0.0f)))));
}
#endif

// ---- float: logarithms, trigonometric and inverse trigonometric functions (vectorizable) ----

// Note [Float log]: x = 2^k m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^25 first) and
// f = m - 1; log(1 + f) from fdlibm's series in s = f / (2 + f) (musl's logf constants), as log1p
// above without its rounding correction. log2 and log10 split f - f^2/2 into a part with its 12
// low bits cleared, whose products with the high halves of 1/ln2 and 1/ln10 are exact (fdlibm's
// log2f and log10f), so powers of 2 give exact log2. Within 1 ulp; glibc's logf is a call the
// loops cannot vectorize (log 3x torch's time, log10 14x).
struct LogParts {
  float f, hfsq, r, dk;  // log(x) = dk ln2 + f - hfsq + r
};
EMBER_MATH_INLINE LogParts log_parts(float x) {
  const bool sub = x < 1.17549435e-38f;  // subnormal (or zero or negative: replaced by log_special)
  const float xs = sub ? x * 33554432.0f : x;
  const uint32_t iu = std::bit_cast<uint32_t>(xs) + (0x3f800000u - 0x3f3504f3u);
  const int32_t k = static_cast<int32_t>(iu >> 23) - 0x7f - (sub ? 25 : 0);
  LogParts p;
  p.f = std::bit_cast<float>((iu & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  const float s = p.f / (2.0f + p.f);
  const float z = s * s, w = z * z;
  const float t1 = w * (0.40000972152f + w * 0.24279078841f);
  const float t2 = z * (0.66666662693f + w * 0.28498786688f);
  p.hfsq = 0.5f * p.f * p.f;
  p.r = s * (p.hfsq + (t1 + t2));
  p.dk = static_cast<float>(k);
  return p;
}
// log(0) = -inf, log(x < 0) = NaN, inf and NaN stay.
EMBER_MATH_INLINE float log_special(float x, float r) {
  return x < 0.0f                                        ? std::numeric_limits<float>::quiet_NaN()
         : x == 0.0f                                     ? -std::numeric_limits<float>::infinity()
         : !(x < std::numeric_limits<float>::infinity()) ? x
                                                         : r;
}
EMBER_MATH_INLINE float log(float x) {
  const LogParts p = log_parts(x);
  return log_special(x, p.r + p.dk * 9.0580006145e-06f - p.hfsq + p.f + p.dk * 6.9313812256e-01f);
}
// f - hfsq as hi + lo, hi with its 12 low bits cleared
EMBER_MATH_INLINE float log_hi(const LogParts& p) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(p.f - p.hfsq) & 0xfffff000u);
}
EMBER_MATH_INLINE float log2(float x) {
  const LogParts p = log_parts(x);
  const float hi = log_hi(p), lo = p.f - hi - p.hfsq + p.r;
  return log_special(x, (lo + hi) * -1.7605285393e-04f + lo * 1.4428710938e+00f + hi * 1.4428710938e+00f + p.dk);
}
EMBER_MATH_INLINE float log10(float x) {
  const LogParts p = log_parts(x);
  const float hi = log_hi(p), lo = p.f - hi - p.hfsq + p.r;
  return log_special(x, p.dk * 7.9034151668e-07f + (lo + hi) * -3.1689971365e-05f + lo * 4.3432617188e-01f +
                            hi * 4.3432617188e-01f + p.dk * 3.0102920532e-01f);
}

// Note [Float trigonometry]: sin, cos and tan in double: x = k pi/2 + r with |r| <= pi/4 (pi/2 in
// fdlibm's three pieces, the first two 33 bits long, so k times them is exact for |k| < 2^20 and
// r keeps full double precision even where x is close to a multiple of pi/2), sin and cos of r
// from polynomials fitted to below 3e-11 relative error, then one rounding to float: results are
// the correctly rounded ones bar rare ties. |x| >= 2^20 (and inf, NaN) go to libm instead
// (trig_needs_libm; the kernels give those elements a second pass). glibc's sinf is a call the
// loops cannot vectorize (sin 9x torch's time, tan 15x).
constexpr float kTrigLibmBound = 1048576.0f;
EMBER_MATH_INLINE bool trig_needs_libm(float x) { return !(std::fabs(x) < kTrigLibmBound); }
// r, and k mod 2^64 in q (k's quadrant is q & 3)
EMBER_MATH_INLINE double reduce_half_pi(float x, uint64_t& q) {
  const double xd = x;
  const double kRound = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer kept in the low bits
  const double t = xd * 0.63661977236758134308 + kRound;
  const double k = t - kRound;
  q = std::bit_cast<uint64_t>(t);
  return ((xd - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) - k * 2.02226624879595063154e-21;
}
EMBER_MATH_INLINE double sin_poly(double r, double z) {  // sin(r), z = r^2, |r| <= pi/4
  return r + r * z *
                 (-0x1.555555545e16bp-3 +
                  z * (0x1.11110def25647p-7 + z * (-0x1.a013a7691f451p-13 + z * 0x1.6dbdf3be956a0p-19)));
}
EMBER_MATH_INLINE double cos_poly(double z) {  // cos(r), z = r^2, |r| <= pi/4
  return 1.0 - 0.5 * z +
         z * z *
             (0x1.5555555502d04p-5 +
              z * (-0x1.6c16bf54d664dp-10 + z * (0x1.a015c45556b62p-16 + z * -0x1.25243d4782ce2p-22)));
}
EMBER_MATH_INLINE float sin(float x) {
  uint64_t q;
  const double r = reduce_half_pi(x, q), z = r * r;
  const double v = (q & 1) ? cos_poly(z) : sin_poly(r, z);
  return x == 0.0f ? x : static_cast<float>((q & 2) ? -v : v);  // sin(-0) = -0
}
EMBER_MATH_INLINE float cos(float x) {
  uint64_t q;
  const double r = reduce_half_pi(x, q), z = r * r;
  const double v = (q & 1) ? sin_poly(r, z) : cos_poly(z);
  return static_cast<float>(((q + 1) & 2) ? -v : v);
}
EMBER_MATH_INLINE float tan(float x) {
  uint64_t q;
  const double r = reduce_half_pi(x, q), z = r * r;
  const double s = sin_poly(r, z), c = cos_poly(z);
  return x == 0.0f ? x : static_cast<float>((q & 1) ? -c / s : s / c);  // tan(-0) = -0
}

// Note [Float inverse trigonometry]: atan and atan2 through one double routine (asin and acos: Note
// [Double asin and acos]): the
// angle of (d, n) with 0 <= n <= d as pi/4 + atan((n - d) / (n + d)) above tan(pi/8), atan(n / d)
// below (one division), atan of |t| <= tan(pi/8) from a polynomial fitted to below 2e-11
// relative error; the quadrant by exact double steps, one rounding to float at the end. atan2's
// limits at zeros and infinities as C's; glibc's are calls (atan 15x torch's time, atan2 14x).
// The angle of (ax, ay) in [0, pi/2]; ax, ay >= 0 or NaN.
EMBER_MATH_INLINE double first_quadrant_angle(double ay, double ax) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const bool swap = ay > ax;
  double n = swap ? ax : ay, d = swap ? ay : ax;
  // (inf, inf): pi/4; (finite, inf): 0; (0, 0): 0. Plain selects: GCC does not vectorize
  // selects on combined conditions here.
  const double n_at_inf = n == kInf ? 1.0 : 0.0;
  n = d == kInf ? n_at_inf : n;
  d = d == kInf ? 1.0 : d;
  d = d == 0.0 ? 1.0 : d;
  const bool big = n > 0.41421356237309504880 * d;
  const double t = big ? (n - d) / (n + d) : n / d, z = t * t;
  const double p =
      t + t * z *
              (-0x1.5555555504d78p-2 +
               z * (0x1.9999982e6c6c5p-3 +
                    z * (-0x1.2491c2db6edb0p-3 +
                         z * (0x1.c6f6f8cfd7153p-4 +
                              z * (-0x1.71d8af3c1a367p-4 + z * (0x1.245c947fd38dcp-4 + z * -0x1.4b99cb2c78fd2p-5))))));
  const double a = big ? 0.78539816339744830962 + p : p;
  return swap ? 1.57079632679489661923 - a : a;
}
EMBER_MATH_INLINE bool sign_bit_of(double x) { return std::bit_cast<int64_t>(x) < 0; }
EMBER_MATH_INLINE float atan(float x) {
  const double a = first_quadrant_angle(std::fabs(static_cast<double>(x)), 1.0);
  return static_cast<float>(sign_bit_of(x) ? -a : a);
}
EMBER_MATH_INLINE float atan2(float y, float x) {
  const double ay = std::fabs(static_cast<double>(y)), ax = std::fabs(static_cast<double>(x));
  const double a0 = first_quadrant_angle(ay, ax);
  const double a = sign_bit_of(x) ? 3.14159265358979323846 - a0 : a0;
  const float r = static_cast<float>(sign_bit_of(y) ? -a : a);
  return x != x || y != y ? x + y : r;  // NaN (first_quadrant_angle maps (NaN, inf) to 0)
}

// Note [Double asin and acos]: fdlibm's asin and acos (musl's constants): the rational R(z) in z = x^2
// (|x| < 1/2) or z = (1 - |x|) / 2, s = sqrt(z) split into its high 32 bits f and a correction c for
// the results that need more than a double's product; every branch computed and the result selected, so
// the loops vectorize (glibc's are calls: 2.4-3x torch's time, whose SLEEF kernels are vectorized).
// Within 0.9 ulp; NaN past +-1 and for NaN.
EMBER_MATH_INLINE double asin_acos_rational(double z) {
  const double p = z * (1.66666666666666657415e-01 +
                        z * (-3.25565818622400915405e-01 +
                             z * (2.01212532134862925881e-01 +
                                  z * (-4.00555345006794114027e-02 +
                                       z * (7.91534994289814532176e-04 + z * 3.47933107596021167570e-05)))));
  const double q =
      1.0 + z * (-2.40339491173441421878e+00 +
                 z * (2.02094576023350569471e+00 + z * (-6.88283971605453293030e-01 + z * 7.70381505559019352791e-02)));
  return p / q;
}
EMBER_MATH_INLINE double high_half(double s) {  // s with its low 32 bits cleared (exact products f * f)
  return std::bit_cast<double>(std::bit_cast<uint64_t>(s) & 0xffffffff00000000ull);
}
constexpr double kPio2Hi = 1.57079632679489655800e+00, kPio2Lo = 6.12323399573676603587e-17;
EMBER_MATH_INLINE double asin(double x) {
  const double a = std::fabs(x);
  const bool small = a < 0.5;
  const double z = small ? a * a : (1.0 - a) * 0.5, r = asin_acos_rational(z), s = std::sqrt(z);
  const double f = high_half(s), c = (z - f * f) / (s + f);  // (NaN at a = 1 and 0: not selected there)
  const double near_one = kPio2Hi - (2.0 * (s + s * r) - kPio2Lo);
  const double middle = 0.5 * kPio2Hi - (2.0 * s * r - (kPio2Lo - 2.0 * c) - (0.5 * kPio2Hi - 2.0 * f));
  const double v = small ? a + a * r : (a >= 0.975 ? near_one : middle);
  return a <= 1.0 ? std::copysign(v, x) : std::numeric_limits<double>::quiet_NaN();
}
EMBER_MATH_INLINE double acos(double x) {
  const double a = std::fabs(x);
  const bool small = a < 0.5;
  const double z = small ? x * x : (1.0 - a) * 0.5, r = asin_acos_rational(z), s = std::sqrt(z);
  const double f = high_half(s), c = (z - f * f) / (s + f);
  const double v_small = kPio2Hi - (x - (kPio2Lo - x * r));
  const double v_neg = 3.14159265358979311600e+00 - 2.0 * (s + (r * s - kPio2Lo));
  const double v_pos = x == 1.0 ? 0.0 : 2.0 * (f + (r * s + c));
  const double v = small ? v_small : (x < 0.0 ? v_neg : v_pos);
  return a <= 1.0 ? v : std::numeric_limits<double>::quiet_NaN();
}
// float: the same R(z) in double, without the corrections a float result does not need (0.5 ulp and a
// little; the atan route, a division more, took 1.6x torch's time).
EMBER_MATH_INLINE float asin(float x) {
  const double a = std::fabs(static_cast<double>(x));
  const bool small = a < 0.5;
  const double z = small ? a * a : (1.0 - a) * 0.5, r = asin_acos_rational(z), s = std::sqrt(z);
  const double v = small ? a + a * r : 1.57079632679489661923 - 2.0 * (s + s * r);
  return std::fabs(x) <= 1.0f ? static_cast<float>(std::copysign(v, static_cast<double>(x)))
                              : std::numeric_limits<float>::quiet_NaN();
}
EMBER_MATH_INLINE float acos(float x) {
  const double xd = x, a = std::fabs(xd);
  const bool small = a < 0.5;
  const double z = small ? xd * xd : (1.0 - a) * 0.5, r = asin_acos_rational(z), s = std::sqrt(z);
  const double v = small ? 1.57079632679489661923 - (xd + xd * r)
                         : (xd < 0.0 ? 3.14159265358979323846 - 2.0 * (s + s * r) : 2.0 * (s + s * r));
  return std::fabs(x) <= 1.0f ? static_cast<float>(v) : std::numeric_limits<float>::quiet_NaN();
}

// Note [Float erfinv]: erfinv(y) = y g(w), w = -log(1 - y^2), as in Giles' approximation, but with
// g fitted in double to 4e-9 relative error (degree 10 in w - 2.5 below w = 5, in sqrt(w) - 3.168
// above; a float's w stays below 16) instead of his 3.7-ulp float polynomials: 1 - y^2 is exact in
// double, its float rounding is taken out of the float log to first order, one rounding at the
// end: within 1 ulp (torch's float erfinv: 0.54). The double routine below (Newton steps on erf) is
// a call per element (43x torch's time). In pieces (w; g by the central polynomial, w < 5, or the
// outer one; the result) for cpu/unary_kernels.cpp's erfinv_float_loop, which runs the outer one only
// in blocks that need it. Still 1.8-1.9x torch's time on float32 (its scalar float Newton steps are
// cheaper than these double polynomials); float polynomials would give up the 1 ulp.
EMBER_MATH_INLINE double erfinv_float_w(float y) {
  const double a = std::fabs(static_cast<double>(y));
  const double p = (1.0 - a) * (1.0 + a);
  const float pf = static_cast<float>(p);
  const float rounding = static_cast<float>(p - static_cast<double>(pf)) / pf;  // log(p) = log(pf) + rounding
  return -static_cast<double>(math::log(pf)) - static_cast<double>(rounding);
}
EMBER_MATH_INLINE bool erfinv_float_is_central(double w) { return w < 5.0; }
EMBER_MATH_INLINE double erfinv_float_central(double w) {
  const double u = w - 2.5;
  double g1 = 0x1.de69e809736c6p-32;
  g1 = g1 * u - 0x1.2c4c5dc854131p-27;
  g1 = g1 * u + 0x1.1b3f5f0869caep-26;
  g1 = g1 * u + 0x1.f3c013479def0p-22;
  g1 = g1 * u - 0x1.cbda8263e96c8p-19;
  g1 = g1 * u - 0x1.4cd7be940f54bp-18;
  g1 = g1 * u + 0x1.c9bb8d2d90448p-13;
  g1 = g1 * u - 0x1.486685ea47454p-10;
  g1 = g1 * u - 0x1.11c3e1ecaabdfp-8;
  g1 = g1 * u + 0x1.f91e8b466d8a3p-3;
  return g1 * u + 0x1.805c5cff94d35p+0;
}
EMBER_MATH_INLINE double erfinv_float_outer(double w) {
  const double v = std::sqrt(w) - 0x1.95822343260bap+1;
  double g2 = -0x1.1087591a00ed4p-15;
  g2 = g2 * v + 0x1.ce834d452f237p-14;
  g2 = g2 * v - 0x1.142e84500cdf8p-14;
  g2 = g2 * v - 0x1.6a20e3000df9bp-12;
  g2 = g2 * v + 0x1.3268c294a8a10p-10;
  g2 = g2 * v - 0x1.21bc3336842d3p-9;
  g2 = g2 * v + 0x1.ae72cb716cc84p-9;
  g2 = g2 * v - 0x1.337ed33844545p-8;
  g2 = g2 * v + 0x1.a3af9484322ccp-8;
  g2 = g2 * v + 0x1.01199b5a1e12fp+0;
  return g2 * v + 0x1.803207ce50d7ap+1;
}
EMBER_MATH_INLINE float erfinv_float_finish(float y, double g) {
  const double a = std::fabs(static_cast<double>(y));
  const float r = static_cast<float>(g * a);
  // +-1: +-inf; past +-1 and NaN: NaN
  const float big = a == 1.0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  return std::copysign(a < 1.0 ? r : big, y);
}
EMBER_MATH_INLINE float erfinv(float y) {
  const double w = erfinv_float_w(y);
  return erfinv_float_finish(y, erfinv_float_is_central(w) ? erfinv_float_central(w) : erfinv_float_outer(w));
}

// Note [Float exp2, erfc and inverse hyperbolics]: glibc's exp2f, erfcf, asinhf, acoshf and atanhf
// are calls the loops cannot vectorize (exp2 5x torch's time, erfc 5.6x, atanh 9.5x); these are
// branch-free float forms built on math::exp, log and log1p.
// 2^x: x = n + f with n = round(x), f exact and |f| <= 1/2; 2^f = e^(f ln2) by exp_lanes'
// polynomial (f ln2's rounding adds under 0.4 ulp); 2^n applied as two factors. Integers give
// exact powers of two; within 2 ulp.
EMBER_MATH_INLINE float exp2(float x) {
  // Clamps in x86 max/min order (NaN comes through): below -151 the result rounds to 0, above 129
  // it is inf.
  float xc = -151.0f > x ? -151.0f : x;
  xc = 129.0f < xc ? 129.0f : xc;
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer, kept in the low bits
  const float t = xc + kRound;
  const float n = t - kRound;
  const int32_t ni = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(kRound);
  const float p = exp_reduced((xc - n) * 0.693147180559945309f);
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  return (p * std::bit_cast<float>((n1 + 127) << 23)) * std::bit_cast<float>((n2 + 127) << 23);
}
// erfc(x) = E(|x|) for x >= 0 and 2 - E(|x|) below, E(a) = exp(-a^2) t Q(2t - 1), t = 1.5 / (1.5 + a):
// normal_cdf's one-range form (Q's relative error 1.3e-7 for every a), a^2 as a float plus its
// rounding error, so relative accuracy holds deep into the tail, where 1 - erf would be 0. Within
// 5.4 ulp (mean 0.13; torch's 0.8). The same form in double (t = 3 / (3 + a), a degree-12 fit) rounds
// once, but measured 3x slower here, 1.5x torch's time.
EMBER_MATH_INLINE float erfc(float x) {
  const float a = std::fabs(x);
  const float a2 = a * a, a2_lo = a < 20.0f ? std::fma(a, a, -a2) : 0.0f;  // inf - inf for |x| = inf
  const float e = math::exp(-a2) * (1.0f - a2_lo);
  const float t = 1.5f / (1.5f + a);
  const float s = 2.0f * t - 1.0f;
  float q = 0.0f;
#define EMBER_ERFC_COEF(c) q = std::fma(q, s, c);
#include "ember/cpu/erfcx_coefs_f32.inc"
#undef EMBER_ERFC_COEF
  const float tail = e * t * q;
  return x < 0.0f ? 2.0f - tail : tail;  // NaN stays NaN
}
// atanh(x) = sign(x) log1p(2a / (1 - a)) / 2, a = |x|, with 2a + 2a^2 / (1 - a) for a < 1/2 (the
// same value, rounded better; fdlibm's split). 1 gives inf (2a / 0), past 1 NaN (log1p of < -1).
EMBER_MATH_INLINE float atanh(float x) {
  const float a = std::fabs(x);
  const float u = a < 0.5f ? 2.0f * a + 2.0f * a * a / (1.0f - a) : 2.0f * a / (1.0f - a);
  return std::copysign(0.5f * math::log1p(u), x);  // -0 stays -0, NaN NaN
}
// asinh(x) = sign(x) log1p(a + a^2 / (1 + sqrt(1 + a^2))), a = |x| (exact cancellation-free form);
// past 2^28, where 1 + a^2 is a^2 and a^2 nears overflow, log(a) + ln2.
EMBER_MATH_INLINE float asinh(float x) {
  const float a = std::fabs(x);
  const float am = a < 268435456.0f ? a : 1.0f;  // keeps the unused lane finite
  const float small = math::log1p(am + am * am / (1.0f + std::sqrt(1.0f + am * am)));
  const float big = math::log(a) + 0.693147180559945309f;
  const float r = a < 268435456.0f ? small : big;  // NaN: big's log keeps it
  return std::copysign(r, x);
}
// acosh(x) = log1p(t + sqrt(2t + t^2)), t = x - 1 (exact near 1); past 2^28 log(x) + ln2; NaN below 1.
EMBER_MATH_INLINE float acosh(float x) {
  const float t = x < 268435456.0f ? x - 1.0f : 1.0f;
  const float small = math::log1p(t + std::sqrt(2.0f * t + t * t));
  const float big = math::log(x) + 0.693147180559945309f;
  const float r = x < 268435456.0f ? small : big;                 // NaN: big's log keeps it
  return x < 1.0f ? std::numeric_limits<float>::quiet_NaN() : r;  // (far below 1, 2t + t^2 rounds to t^2)
}

// Note [Float lgamma]: lgamma for float x > 0 in double, branch-free: x is shifted up to
// z = x + n >= 8 (n <= 8) while P = x (x + 1) ... (x + n - 1) collects the factors, then
// lgamma(x) = Stirling(z) - log(P), Stirling's series to 1/z^11 (truncation below 2e-14 at z = 8).
// Double keeps the cancellation near the roots 1 and 2 harmless for a float result; they are
// exact zeros. x <= 0, inf and NaN (not_positive_finite) take the reflection formula below in a
// second vectorized pass (glibc's lgammaf is a call per element: 2.5x torch's time, whose SLEEF
// lgamma is vectorized).
// log for double x > 0, finite and normal: fdlibm's log (musl's constants), within 1 ulp.
EMBER_MATH_INLINE double log_normal_double(double x) {
  const uint64_t ix = std::bit_cast<uint64_t>(x) + (0x3ff0000000000000ull - 0x3fe6a09e667f3bcdull);
  // k as a double without an int64 conversion (AVX2 has none): 2^52 + (ix >> 52), exactly.
  const double dk = std::bit_cast<double>((ix >> 52) | 0x4330000000000000ull) - (4503599627370496.0 + 1023.0);
  const double f = std::bit_cast<double>((ix & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull) - 1.0;
  const double hfsq = 0.5 * f * f;
  const double s = f / (2.0 + f);
  const double z = s * s, w = z * z;
  const double t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double t2 =
      z * (6.666666666666735130e-01 +
           w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  return s * (hfsq + (t1 + t2)) + dk * 1.90821492927058770002e-10 - hfsq + f + dk * 6.93147180369123816490e-01;
}
EMBER_MATH_INLINE bool not_positive_finite(float x) {
  return !(x > 0.0f && x < std::numeric_limits<float>::infinity());
}
EMBER_MATH_INLINE double lgamma_positive_double(double x) {  // x > 0, finite
  double z = x, p = 1.0;
  for (int i = 0; i < 8; ++i) {  // unrolled: each lane steps until z >= 8
    const bool step = z < 8.0;
    p = step ? p * z : p;
    z = step ? z + 1.0 : z;
  }
  const double r = 1.0 / z, r2 = r * r;
  const double series =
      r *
      (1.0 / 12.0 + r2 * (-1.0 / 360.0 +
                          r2 * (1.0 / 1260.0 + r2 * (-1.0 / 1680.0 + r2 * (1.0 / 1188.0 + r2 * (-691.0 / 360360.0))))));
  return (z - 0.5) * log_normal_double(z) - z + 0.91893853320467274178 + series - log_normal_double(p);
}
// lgamma(|x|) in double for any float x: lgamma's first pass (|x|: the lanes of x < 0 compute
// something finite; garbage logs of negative values made denormals, and a select on x made GCC
// spill: each 3x slower).
EMBER_MATH_INLINE double lgamma_of_abs(float x) { return lgamma_positive_double(std::fabs(x)); }
// lgamma(x) for x in (0, inf) from lg = lgamma_of_abs(x), exact zeros at 1 and 2.
EMBER_MATH_INLINE float lgamma_positive(float x, double lg) {
  return x == 1.0f || x == 2.0f ? 0.0f : static_cast<float>(lg);
}
// lgamma(x) for the other x (not_positive_finite) from lg = lgamma_of_abs(x): the reflection
// log|Gamma(x)| = log(pi / |sin(pi x)|) - lgamma(1 - x) with lgamma(1 - x) = lg + log|x|, so
// log(pi / (|x| |sin(pi x)|)) - lg, in double (r = x - rint(x) is exact; sin(pi r), |r| <= 1/2, by
// its Taylor series to r^21). Poles (zeros, integers: all of x <= -2^23) and the infinities give
// +inf, NaN stays NaN. Vectorizable: lgamma_float_loop's second pass over the blocks holding such x
// (glibc's lgammaf per element was 2.9x torch's time on normal samples). Selects in double: float
// ones made GCC spill (4x slower).
EMBER_MATH_INLINE float lgamma_reflected(float x, double lg) {
  const double xd = -std::fabs(static_cast<double>(x));  // (finite work in x > 0's lanes)
  const double r = xd - std::rint(xd), r2 = r * r;
  double s = 0x1.2877020d52cf0p-31;  // (-1)^k pi^(2k+1) / (2k+1)!, k = 10 .. 0
  s = s * r2 - 0x1.8a404211f9547p-26;
  s = s * r2 + 0x1.aaec32af93359p-21;
  s = s * r2 - 0x1.6fadb9f155744p-16;
  s = s * r2 + 0x1.e8f434d018d63p-12;
  s = s * r2 - 0x1.e3074fde8871fp-8;
  s = s * r2 + 0x1.50783487ee782p-4;
  s = s * r2 - 0x1.32d2cce62bd86p-1;
  s = s * r2 + 0x1.466bc6775aae2p+1;
  s = s * r2 - 0x1.4abbce625be53p+2;
  s = s * r2 + 0x1.921fb54442d18p+1;
  const double denominator = std::max(std::fabs(s * r) * -xd, 1e-300);  // (the poles' lanes stay finite)
  const double v = log_normal_double(3.14159265358979323846 / denominator) - lg;
  const double pole_value = xd != xd ? xd : std::numeric_limits<double>::infinity();
  const bool pole = !(xd < 0.0 && xd > -8388608.0) || r == 0.0;
  return static_cast<float>(pole ? pole_value : v);
}
// digamma for float x in (0, inf) in double, the same way: shifted to z >= 10 (n <= 10) with
// sum 1/(x + k) kept as one fraction (no division per step), then log z - 1/(2z) - the asymptotic
// series (math::digamma's, below). Near the root 1.4616 the cancellation stays far under a float
// ulp. Other x take math::digamma (reflection, poles). The scalar double routine per element was
// torch's time (both slow: 14 ms per 1M floats).
EMBER_MATH_INLINE float digamma_positive(float x) {  // x in (0, inf); others: not_positive_finite
  double z = x, num = 0.0, den = 1.0;
  for (int i = 0; i < 10; ++i) {  // unrolled: each lane steps until z >= 10
    const bool step = z < 10.0;
    num = step ? num * z + den : num;
    den = step ? den * z : den;
    z = step ? z + 1.0 : z;
  }
  const double r = 1.0 / z, w = r * r;
  const double s =
      w * (1.0 / 12 - w * (1.0 / 120 - w * (1.0 / 252 - w * (1.0 / 240 - w * (1.0 / 132 - w * (691.0 / 32760))))));
  return static_cast<float>(log_normal_double(z) - 0.5 * r - s - num / den);
}

// ---- scalar special functions (float and double) ----

// Note [Double erfinv]: erfinv(y) = y g(w), w = -log(1 - y^2), as Giles' approximation, with g as
// polynomials fitted to double precision (erfinv_double.inc from scripts/fit_erfinv.py) in w - 3.125
// below w = 6.25, in sqrt(w) - 3.25 up to w = 16 and in sqrt(w) - 5 above; branch-free (the outer two
// evaluated and one selected), log through log_normal_double, so the loops vectorize (Newton steps on glibc's erf
// and exp were a call per element: 9.7x torch's time). 1 - y^2 as (1 - |y|)(1 + |y|), whose rounding
// moves g by under 1e-16. Within 2 ulp; +-1 give +-inf, past them and NaN give NaN. The element loop
// (erfinv_double_loop, cpu/unary_kernels.cpp) runs the central polynomial alone where a block allows.
#include "ember/cpu/erfinv_double.inc"
template <size_t N>
EMBER_MATH_INLINE double horner_of(const double (&c)[N], double t) {
  double p = c[0];
#pragma GCC unroll 32  // unrolled whole, so the element loops around it vectorize
  for (size_t k = 1; k < N; ++k) p = p * t + c[k];
  return p;
}
// The pieces, so the element loop can skip the outer ranges: w, the central range (for
// erfinv_is_central: w < 6.2454, in the fit) and the outer ones (with +-1, past them and NaN).
constexpr double kErfinvCentralEnd = 0.99903;
EMBER_MATH_INLINE bool erfinv_is_central(double y) { return std::fabs(y) < kErfinvCentralEnd; }
EMBER_MATH_INLINE double erfinv_w(double y) {
  const double a = std::fabs(y), p = (1.0 - a) * (1.0 + a);
  return -log_normal_double(p > 0.0 ? p : 1.0);  // (|y| >= 1 and NaN: the outer form's selects)
}
EMBER_MATH_INLINE double erfinv_central(double y, double w) {
  return std::copysign(horner_of(kErfinvCentral, w - 3.125) * std::fabs(y), y);
}
EMBER_MATH_INLINE double erfinv_outer(double y, double w) {
  const double a = std::fabs(y), s = std::sqrt(w);
  const double g = w < 16.0 ? horner_of(kErfinvMiddle, s - 3.25) : horner_of(kErfinvTail, s - 5.0);
  const double r = a < 1.0    ? g * a
                   : a == 1.0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  return std::copysign(r, y);
}
EMBER_MATH_INLINE double erfinv(double y) {
  const double w = erfinv_w(y);
  return erfinv_is_central(y) ? erfinv_central(y, w) : erfinv_outer(y, w);
}

// digamma (psi): reflection for x < 0, recurrence up to x >= 10, then the asymptotic series.
inline double digamma(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x == 0)
    return std::signbit(x) ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  if (x < 0) {
    if (x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    return digamma(1.0 - x) - kPi / std::tan(kPi * x);
  }
  double r = 0;
  while (x < 10.0) r -= 1.0 / x, x += 1.0;
  const double z = 1.0 / (x * x);
  const double s =
      z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760))))));
  return r + std::log(x) - 0.5 / x - s;
}

// trigamma (psi'): reflection for x < 0, recurrence up to x >= 10, then the asymptotic series.
inline double trigamma(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x == -std::numeric_limits<double>::infinity()) return std::numeric_limits<double>::quiet_NaN();
  if (x <= 0 && x == std::floor(x)) return std::numeric_limits<double>::infinity();
  if (x < 0) {
    const double s = std::sin(kPi * x);
    return -trigamma(1.0 - x) + kPi * kPi / (s * s);
  }
  double r = 0;
  while (x < 10.0) r += 1.0 / (x * x), x += 1.0;
  const double z = 1.0 / (x * x);
  const double s =
      1.0 / x + z / 2 + z / x * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (5.0 / 66)))));
  return r + s;
}

// Hurwitz zeta(s, q) = sum_k (k + q)^-s: direct sum until the terms are tiny or q + k > 9,
// then the Euler-Maclaurin tail (Cephes' algorithm). Negative q works for integer s only.
inline double zeta(double s, double q) {
  constexpr double kEps = 1.11022302462515654042e-16;
  // Euler-Maclaurin coefficients (2k)! / B_2k.
  static constexpr double kA[] = {12.0,
                                  -720.0,
                                  30240.0,
                                  -1209600.0,
                                  47900160.0,
                                  -1.8924375803183791606e9,
                                  7.47242496e10,
                                  -2.950130727918164224e12,
                                  1.1646782814350067249e14,
                                  -4.5979787224074726105e15,
                                  1.8152105401943546773e17,
                                  -7.1661652561756670113e18};
  if (s == 1) return std::numeric_limits<double>::infinity();
  if (s < 1) return std::numeric_limits<double>::quiet_NaN();
  if (q <= 0) {
    if (q == std::floor(q)) return std::numeric_limits<double>::infinity();
    if (s != std::floor(s)) return std::numeric_limits<double>::quiet_NaN();
  }
  double sum = std::pow(q, -s), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    ++i, a += 1.0;
    b = std::pow(a, -s);
    sum += b;
    if (std::fabs(b) < kEps * std::fabs(sum)) return sum;
  }
  const double w = a;
  sum += b * w / (s - 1.0) - 0.5 * b;
  double fac = 1.0, k = 0.0;
  for (double c : kA) {
    fac *= s + k;
    b /= w;
    const double t = fac * b / c;
    sum += t;
    if (std::fabs(t / sum) < kEps) break;
    k += 1.0;
    fac *= s + k;
    b /= w;
    k += 1.0;
  }
  return sum;
}

// polygamma(n, x): the n-th derivative of digamma; (-1)^(n+1) n! zeta(n+1, x) for n >= 2.
inline double polygamma(int n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  const double sign = n % 2 ? 1.0 : -1.0;
  return sign * std::exp(std::lgamma(n + 1.0)) * zeta(n + 1.0, x);
}

}  // namespace EMBER_ISA_NS
}  // namespace ember::math
