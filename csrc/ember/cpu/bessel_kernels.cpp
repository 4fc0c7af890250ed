// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h). The branch-free forms of the
// Bessel functions of ops/bessel.cpp (Note [Bessel functions]): both intervals' series are
// evaluated for every element and one is selected, so the element loops vectorize; exp, log, sin and
// cos are the vectorizable ones of unary_math.h and below, not libm's calls.
#include "ember/cpu/bessel_kernels.h"

#include "ember/cpu/isa_begin.h"
#include "ember/cpu/unary_math.h"

namespace ember::cpu {
namespace {

#include "ember/ops/bessel_coefs.inc"

constexpr double kInvPi = 0.31830988618379067154;
constexpr double k2OverPi = 0.63661977236758134308;
constexpr double kLn2 = 0.69314718055994530942;

// sum_{k < M} c[k] T_k(t), unrolled so that the element loop around it is the innermost one.
template <size_t M, size_t N>
EMBER_MATH_INLINE double chebyshev(const double (&c)[N], double t) {
  static_assert(M >= 2 && M <= N);
  double b1 = 0.0, b2 = 0.0;
  const double t2 = 2.0 * t;
#pragma GCC unroll 40
  for (size_t k = M - 1; k >= 1; --k) {
    const double b0 = c[k] + t2 * b1 - b2;
    b2 = b1;
    b1 = b0;
  }
  return c[0] + t * b1 - b2;
}

// The series `name` at t: all its terms for double results, its leading k_<name>_f32 for float ones.
#define SERIES(name, t) chebyshev<(F32 ? name##_f32 : sizeof(name) / sizeof(double))>(name, t)

EMBER_MATH_INLINE double minus_zero_squared(double x, const double (&z)[2]) { return ((x - z[0]) - z[1]) * (x + z[0]); }

// sin x and cos x for 0 <= x < 2^20: x = k pi/2 + r with pi/2 in fdlibm's three pieces (k times the
// first two is exact), |r| <= pi/4; Taylor series to r^17 and r^18 (truncation below 1e-19).
EMBER_MATH_INLINE void sincos(double x, double& s, double& c) {
  const double kRound = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer kept in the low bits
  const double t = x * k2OverPi + kRound;
  const double k = t - kRound;
  const uint64_t q = std::bit_cast<uint64_t>(t);
  const double r =
      ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) - k * 2.02226624879595063154e-21;
  const double z = r * r;
  const double ps =
      -1.0 / 6 +
      z * (1.0 / 120 +
           z * (-1.0 / 5040 + z * (1.0 / 362880 + z * (-1.0 / 39916800 +
                                                       z * (1.0 / 6227020800 + z * (-1.0 / 1307674368000 +
                                                                                    z * (1.0 / 355687428096000)))))));
  const double pc =
      1.0 / 24 +
      z * (-1.0 / 720 +
           z * (1.0 / 40320 +
                z * (-1.0 / 3628800 +
                     z * (1.0 / 479001600 +
                          z * (-1.0 / 87178291200 + z * (1.0 / 20922789888000 + z * (-1.0 / 6402373705728000)))))));
  const double sr = r + r * z * ps, cr = 1.0 - 0.5 * z + z * z * pc;
  const double a = (q & 1) ? cr : sr, b = (q & 1) ? sr : cr;  // sin, cos of k (mod 2) pi/2 + r
  s = (q & 2) ? -a : a;
  c = ((q + 1) & 2) ? -b : b;
}

// The series parts, for a = |x| in the vector range.
template <bool F32>
EMBER_MATH_INLINE double i0e_v(double a) {
  const double small = SERIES(k_i0e_small, a * 0.25 - 1.0);
  const double large = SERIES(k_i0e_large, 16.0 / a - 1.0) / std::sqrt(a);
  return a <= 8.0 ? small : large;
}
template <bool F32>
EMBER_MATH_INLINE double i1e_v(double a) {
  const double small = SERIES(k_i1e_small, a * 0.25 - 1.0) * a;
  const double large = SERIES(k_i1e_large, 16.0 / a - 1.0) / std::sqrt(a);
  return a <= 8.0 ? small : large;
}
EMBER_MATH_INLINE double log_half(double x) { return math::log_normal_double(x) - kLn2; }  // log(x/2), x normal
// K_n on (0, 2] (the logarithmic part added back) and exp(x) K_n on (2, inf)
template <bool F32>
EMBER_MATH_INLINE double k0_small(double x) {
  return SERIES(k_k0_small, x * x * 0.5 - 1.0) - log_half(x) * (math::exp(x) * SERIES(k_i0e_small, x * 0.25 - 1.0));
}
template <bool F32>
EMBER_MATH_INLINE double k1_small(double x) {
  return SERIES(k_k1_small, x * x * 0.5 - 1.0) / x +
         log_half(x) * (math::exp(x) * (SERIES(k_i1e_small, x * 0.25 - 1.0) * x));
}
template <bool F32>
EMBER_MATH_INLINE double k0e_large(double x) {
  return SERIES(k_k0e_large, 4.0 / x - 1.0) / std::sqrt(x);
}
template <bool F32>
EMBER_MATH_INLINE double k1e_large(double x) {
  return SERIES(k_k1e_large, 4.0 / x - 1.0) / std::sqrt(x);
}
// J_n, Y_n pieces for a in (0, 5] ...
template <bool F32>
EMBER_MATH_INLINE double j0_small(double a) {
  return minus_zero_squared(a, kJ0Zeros[0]) * minus_zero_squared(a, kJ0Zeros[1]) *
         SERIES(k_j0_small, a * a * (2.0 / 25.0) - 1.0);
}
template <bool F32>
EMBER_MATH_INLINE double j1_small(double a) {
  return a * minus_zero_squared(a, kJ1Zero) * SERIES(k_j1_small, a * a * (2.0 / 25.0) - 1.0);
}
// ... and Hankel's form above 5: P, Q, sqrt(1/(pi a)), sin a, cos a.
struct Hankel {
  double p, q, amp, s, c;
};
template <bool F32, int n>
EMBER_MATH_INLINE Hankel hankel(double a) {
  const double t = 50.0 / (a * a) - 1.0;
  Hankel h;
  h.p = n == 0 ? SERIES(k_p0_large, t) : SERIES(k_p1_large, t);
  h.q = (n == 0 ? SERIES(k_q0_large, t) : SERIES(k_q1_large, t)) / a;
  h.amp = std::sqrt(kInvPi / a);
  sincos(a, h.s, h.c);
  return h;
}
template <bool F32>
EMBER_MATH_INLINE double j0_v(double a) {
  const Hankel h = hankel<F32, 0>(a);
  const double large = h.amp * (h.p * (h.c + h.s) - h.q * (h.s - h.c));
  return a <= 5.0 ? j0_small<F32>(a) : large;
}
template <bool F32>
EMBER_MATH_INLINE double j1_v(double a) {
  const Hankel h = hankel<F32, 1>(a);
  const double large = h.amp * (h.p * (h.s - h.c) + h.q * (h.s + h.c));
  return a <= 5.0 ? j1_small<F32>(a) : large;
}
template <bool F32>
EMBER_MATH_INLINE double y0_v(double x) {
  const Hankel h = hankel<F32, 0>(x);
  const double large = h.amp * (h.p * (h.s - h.c) + h.q * (h.s + h.c));
  const double small =
      SERIES(k_y0_small, x * x * (2.0 / 25.0) - 1.0) + k2OverPi * math::log_normal_double(x) * j0_small<F32>(x);
  return x <= 5.0 ? small : large;
}
template <bool F32>
EMBER_MATH_INLINE double y1_v(double x) {
  const Hankel h = hankel<F32, 1>(x);
  const double large = h.amp * (h.q * (h.s - h.c) - h.p * (h.s + h.c));
  const double small = x * SERIES(k_y1_small, x * x * (2.0 / 25.0) - 1.0) +
                       k2OverPi * (j1_small<F32>(x) * math::log_normal_double(x) - 1.0 / x);
  return x <= 5.0 ? small : large;
}

// The vector ranges: |x| (I, J) or x (K, Y) in [lo, hi); NaN is outside.
EMBER_MATH_INLINE bool outside(double v, double lo, double hi) { return !(v >= lo && v < hi); }
constexpr double kTiny = 0x1p-27;         // below, I and J are their first terms (the scalar forms)
constexpr double kExpLimit = 700.0;       // exp(x) stays finite
constexpr double kSmallestLog = 1e-300;   // log's argument normal, 1/x finite
constexpr double kTrigLimit = 1048576.0;  // 2^20: sincos's reduction exact

// Note [Float math loops]'s two passes, over double: f for the block (vectorized), then `scalar`
// for the elements outside the vector range.
template <typename F, typename O>
void run(const double* x, double* y, int64_t n, const F& f_ref, const O& out_ref, double (*scalar)(double)) {
  const F f = f_ref;  // Note [Loop closure copies]
  const O out_of_range = out_ref;
  constexpr int64_t kBlock = 256;
  for (int64_t k = 0; k < n; k += kBlock) {
    const int64_t len = std::min(kBlock, n - k);
    const double* xb = x + k;
    double* yb = y + k;
    int32_t slow = 0;  // (an int: GCC does not vectorize a bool reduction beside doubles)
    for (int64_t j = 0; j < len; ++j) {
      yb[j] = f(xb[j]);
      slow |= out_of_range(xb[j]) ? 1 : 0;
    }
    if (slow)
      for (int64_t j = 0; j < len; ++j)
        if (out_of_range(xb[j])) yb[j] = scalar(xb[j]);
  }
}

template <bool F32>
void bessel_all(int op, const double* x, double* y, int64_t n, double (*scalar)(double)) {
  auto i_range = [](double v) { return outside(std::fabs(v), kTiny, kExpLimit); };
  // (K and Y are NaN for x < 0: the vector pass gives it, so negative inputs skip the scalar pass)
  auto k_range = [](double v) { return !(v < 0.0) && outside(v, kSmallestLog, kExpLimit); };
  auto j_range = [](double v) { return outside(std::fabs(v), kTiny, kTrigLimit); };
  auto y_range = [](double v) { return !(v < 0.0) && outside(v, kSmallestLog, kTrigLimit); };
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  switch (op) {
    case 0:  // I0
      return run(
          x, y, n,
          [](double v) {
            const double a = std::fabs(v);
            return math::exp(a) * i0e_v<F32>(a);
          },
          i_range, scalar);
    case 1:  // I0e
      return run(
          x, y, n, [](double v) { return i0e_v<F32>(std::fabs(v)); }, i_range, scalar);
    case 2:  // I1
      return run(
          x, y, n,
          [](double v) {
            const double a = std::fabs(v), r = math::exp(a) * i1e_v<F32>(a);
            return v < 0 ? -r : r;
          },
          i_range, scalar);
    case 3:  // I1e
      return run(
          x, y, n,
          [](double v) {
            const double r = i1e_v<F32>(std::fabs(v));
            return v < 0 ? -r : r;
          },
          i_range, scalar);
    case 4:  // K0
      return run(
          x, y, n,
          [](double v) { return v < 0.0    ? kNaN
                                : v <= 2.0 ? k0_small<F32>(v)
                                           : math::exp(-v) * k0e_large<F32>(v); },
          k_range, scalar);
    case 5:  // K0e
      return run(
          x, y, n,
          [](double v) { return v < 0.0    ? kNaN
                                : v <= 2.0 ? k0_small<F32>(v) * math::exp(v)
                                           : k0e_large<F32>(v); },
          k_range, scalar);
    case 6:  // K1
      return run(
          x, y, n,
          [](double v) { return v < 0.0    ? kNaN
                                : v <= 2.0 ? k1_small<F32>(v)
                                           : math::exp(-v) * k1e_large<F32>(v); },
          k_range, scalar);
    case 7:  // K1e
      return run(
          x, y, n,
          [](double v) { return v < 0.0    ? kNaN
                                : v <= 2.0 ? k1_small<F32>(v) * math::exp(v)
                                           : k1e_large<F32>(v); },
          k_range, scalar);
    case 8:  // J0
      return run(
          x, y, n, [](double v) { return j0_v<F32>(std::fabs(v)); }, j_range, scalar);
    case 9:  // J1
      return run(
          x, y, n,
          [](double v) {
            const double r = j1_v<F32>(std::fabs(v));
            return v < 0 ? -r : r;
          },
          j_range, scalar);
    case 10:  // Y0
      return run(
          x, y, n, [](double v) { return v < 0.0 ? kNaN : y0_v<F32>(v); }, y_range, scalar);
    default:  // Y1
      return run(
          x, y, n, [](double v) { return v < 0.0 ? kNaN : y1_v<F32>(v); }, y_range, scalar);
  }
}

}  // namespace

void EMBER_ISA_KERNEL(bessel_kernel)(int op, bool float_result, const double* x, double* y, int64_t n,
                                     double (*scalar)(double)) {
  if (float_result)
    bessel_all<true>(op, x, y, n, scalar);
  else
    bessel_all<false>(op, x, y, n, scalar);
}

}  // namespace ember::cpu

#include "ember/cpu/isa_end.h"
