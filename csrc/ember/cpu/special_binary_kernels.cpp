// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/special_binary_kernels.h"

#include <cmath>

#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/unary_math.h"

namespace ember::cpu {
namespace {

constexpr double kLn2 = 0.69314718055994530942, kInvLn2 = 1.44269504088896340736;

// Note [logaddexp]: log(e^a + e^b) = max(a, b) + log1p(e^-|a - b|), branch-free so the loops
// vectorize (math::exp and log1p; the double log1p of a value in [0, 1] as log(u) + (e - (u - 1)) / u,
// u = 1 + e, the correction restoring what forming u lost). a == b takes a + ln 2 exactly: this
// also gives the infinities themselves, where a - b is NaN. Any NaN operand gives NaN through a - b.
// logaddexp2 is the same in base 2 (2^-d as e^(-d ln 2) for double: the rounding of d ln 2 moves
// the result by under an ulp, as the term it perturbs is at most 1).
template <bool kBase2>
EMBER_MATH_INLINE float log_add_exp(float a, float b) {
  const float m = a > b ? a : b, d = -std::fabs(a - b);
  const float r = kBase2 ? m + math::log1p(math::exp2(d)) * static_cast<float>(kInvLn2) : m + math::log1p(math::exp(d));
  return a == b ? a + static_cast<float>(kBase2 ? 1.0 : kLn2) : r;
}
template <bool kBase2>
EMBER_MATH_INLINE double log_add_exp(double a, double b) {
  const double m = a > b ? a : b, d = -std::fabs(a - b);
  const double e = math::exp(kBase2 ? d * kLn2 : d), u = 1.0 + e;
  const double l = math::log_normal_double(u) + (e - (u - 1.0)) / u;
  const double r = kBase2 ? m + l * kInvLn2 : m + l;
  return a == b ? a + (kBase2 ? 1.0 : kLn2) : r;
}

template <typename T>
void special_binary_t(SpecialBinaryOp op, const TensorIter& it) {
  using M = opmath_t<T>;
  switch (op) {
    case SpecialBinaryOp::LogAddExp:
      binary_loop<T, T>(it, [](M a, M b) -> M { return log_add_exp<false>(a, b); });
      break;
    case SpecialBinaryOp::LogAddExp2:
      binary_loop<T, T>(it, [](M a, M b) -> M { return log_add_exp<true>(a, b); });
      break;
    case SpecialBinaryOp::Zeta:
      // Cephes' series in double per element (math::zeta): ~1 us each, so threads from 256 elements
      it.for_each(
          [](char** d, const int64_t* s, int64_t n) {
            for (int64_t k = 0; k < n; ++k)
              *reinterpret_cast<T*>(d[0] + k * s[0]) =
                  static_cast<T>(math::zeta(static_cast<double>(*reinterpret_cast<const T*>(d[1] + k * s[1])),
                                            static_cast<double>(*reinterpret_cast<const T*>(d[2] + k * s[2]))));
          },
          256);
      break;
  }
}

}  // namespace

void EMBER_ISA_KERNEL(special_binary_kernel)(SpecialBinaryOp op, const TensorIter& it, ScalarType dt) {
  EMBER_DISPATCH_FLOAT(dt, "special_binary", [&] { special_binary_t<scalar_t>(op, it); });
}

}  // namespace ember::cpu

#include "ember/cpu/isa_end.h"
