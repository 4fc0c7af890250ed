// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/pointwise_kernels.h"

#include <cmath>
#include <limits>

#include "ember/core/checked_math.h"
#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math_of.h"
#include "ember/cpu/mkl_blas.h"
#include "ember/cpu/unary_math.h"

namespace ember::cpu {
namespace {

template <typename M>
M nan_max(M a, M b) {
  if constexpr (std::is_integral_v<M>)
    return a > b ? a : b;
  else
    return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <typename M>
M nan_min(M a, M b) {
  if constexpr (std::is_integral_v<M>)
    return a < b ? a : b;
  else
    return a != a ? a : (b != b ? b : (a < b ? a : b));
}

// d/dx of x Phi(x) = Phi(x) + x phi(x); float goes through the vectorizable erf and exp.
template <typename M>
EMBER_MATH_INLINE M gelu_grad(M x) {
  constexpr M kInvSqrt2 = M(0.70710678118654752440), kInvSqrt2Pi = M(0.39894228040143267794);
  if constexpr (std::is_same_v<M, float>) {
    float e;  // exp(-x^2/2), shared by both terms
    const float cdf = math::normal_cdf(x, e);
    return cdf + x * kInvSqrt2Pi * e;  // contracted: fma(x * kInvSqrt2Pi, e, cdf), as gelu_grad16
  } else
    return M(0.5) * (M(1) + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(M(-0.5) * x * x);
}
#ifdef EMBER_AVX512_LANES
EMBER_MATH_INLINE __m512 gelu_grad16(__m512 x) {  // gelu_grad<float> (Note [16-lane float math])
  __m512 e;
  const __m512 cdf = math::normal_cdf16(x, e);
  return _mm512_fmadd_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.39894228040143267794f)), e, cdf);
}
#endif
// g * d/dx x sigmoid(x) = g s (1 + x (1 - s)), s = sigmoid(x); for float the sum is one fma, as the
// 16-lane form's (contracted or not by the compiler, the bits must not depend on it).
template <typename M>
EMBER_MATH_INLINE M silu_grad(M g, M x) {
  const M s = math::sigmoid_of(x);
  if constexpr (std::is_same_v<M, float>) {
#if (defined(EMBER_ISA_LEVEL) && EMBER_ISA_LEVEL >= 1) || defined(__FMA__)  // the AVX2 and AVX-512 levels
    return g * (s * std::fma(x, M(1) - s, M(1)));
#else
    return g * (s * (M(1) + x * (M(1) - s)));
#endif
  } else {
    return g * (s * (M(1) + x * (M(1) - s)));
  }
}
// The same for 0.5 x (1 + tanh(k (x + c x^3))).
template <typename M>
EMBER_MATH_INLINE M gelu_tanh_grad(M x) {
  constexpr M k = M(0.79788456080286535588), c = M(0.044715);
  const M x2 = x * x;
  M t;
  if constexpr (std::is_same_v<M, float>)
    t = math::tanh(k * (x + c * x2 * x));
  else
    t = std::tanh(k * (x + c * x2 * x));
  return M(0.5) * (M(1) + t) + M(0.5) * x * (M(1) - t * t) * k * (M(1) + M(3) * c * x2);
}

template <typename T>
void binary_kernel_t(PointwiseOp op, const TensorIter& it, double p0, double p1, double p2) {
  using M = opmath_t<T>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
#ifdef EMBER_AVX512_LANES
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) {
    if (op == PointwiseOp::GeluBackward)  // Note [16-lane float math]
      return binary_loop16<T>(
          it, [](__m512 g, __m512 x) { return _mm512_mul_ps(g, gelu_grad16(x)); },
          [](float g, float x) { return g * gelu_grad(x); });
    if (op == PointwiseOp::SiluBackward)  // the same: the element loop's sigmoid was not vectorized (1.1x torch's time)
      return binary_loop16<T>(
          it,
          [](__m512 g, __m512 x) {
            const __m512 s = math::sigmoid16(x), one = _mm512_set1_ps(1.0f);
            return _mm512_mul_ps(g, _mm512_mul_ps(s, _mm512_fmadd_ps(x, _mm512_sub_ps(one, s), one)));
          },
          [](float g, float x) { return silu_grad(g, x); });
  }
#endif
  switch (op) {
    case PointwiseOp::Atan2:
      if constexpr (std::is_same_v<M, float>) {
        if (!std::is_same_v<T, float> || !mkl_vml_binary_loop(VmlBinary::Atan2, false, it))  // Note [MKL VML]
          binary_loop<T, T>(it, [](M a, M b) -> M { return math::atan2(a, b); });  // Note [Float inverse trigonometry]
      } else if constexpr (std::is_same_v<T, double>) {
        if (!mkl_vml_binary_loop(VmlBinary::Atan2, true, it))  // Note [MKL VML]
          binary_loop<T, T>(it, [](M a, M b) -> M { return std::atan2(a, b); });
      } else if constexpr (kFloat) {
        binary_loop<T, T>(it, [](M a, M b) -> M { return std::atan2(a, b); });
      }
      break;
    case PointwiseOp::Hypot:
      if constexpr (std::is_same_v<M, float>)
        // glibc's hypotf inline (a call per element: 1.2-2x torch's time): the exact double squares
        // summed, one sqrt, rounded to float; an infinity beats a NaN, as C's hypot
        binary_loop<T, T>(it, [](M a, M b) -> M {
          const double s = std::sqrt(static_cast<double>(a) * a + static_cast<double>(b) * b);
          return std::isinf(a) | std::isinf(b) ? std::numeric_limits<float>::infinity() : static_cast<float>(s);
        });
      else if constexpr (kFloat)
        binary_loop<T, T>(it, [](M a, M b) -> M { return std::hypot(a, b); });
      break;
    case PointwiseOp::Copysign:
      if constexpr (kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return std::copysign(a, b); });
      break;
    case PointwiseOp::Maximum:
      binary_loop<T, T>(it, [](M a, M b) -> M { return nan_max(a, b); });
      break;
    case PointwiseOp::Minimum:
      binary_loop<T, T>(it, [](M a, M b) -> M { return nan_min(a, b); });
      break;
    case PointwiseOp::Fmax:
      if constexpr (kFloat)
        binary_loop<T, T>(it, [](M a, M b) -> M { return std::fmax(a, b); });
      else
        binary_loop<T, T>(it, [](M a, M b) -> M { return a > b ? a : b; });
      break;
    case PointwiseOp::Fmin:
      if constexpr (kFloat)
        binary_loop<T, T>(it, [](M a, M b) -> M { return std::fmin(a, b); });
      else
        binary_loop<T, T>(it, [](M a, M b) -> M { return a < b ? a : b; });
      break;
    case PointwiseOp::Fmod:
      if constexpr (std::is_same_v<M, float>)  // float, Half, BFloat16: Note [Exact float fmod] (loops.h)
        float_fmod_loop<T>(it, [](float, float, float mod) { return mod; });
      else if constexpr (kFloat)
        binary_loop<T, T>(it, [](M a, M b) -> M { return std::fmod(a, b); });
      else if constexpr (!kBool)
        // Note [Integer division without traps]; a zero divisor can still appear mid-loop through an alias.
        binary_loop<T, T>(it, [](M a, M b) -> M { return b == 0 ? M(0) : int_mod_wrap(a, b); });
      break;
    case PointwiseOp::LogicalAnd:
      binary_loop<bool, T>(it, [](M a, M b) -> bool { return static_cast<bool>(a) && static_cast<bool>(b); });
      break;
    case PointwiseOp::LogicalOr:
      binary_loop<bool, T>(it, [](M a, M b) -> bool { return static_cast<bool>(a) || static_cast<bool>(b); });
      break;
    case PointwiseOp::LogicalXor:
      binary_loop<bool, T>(it, [](M a, M b) -> bool { return static_cast<bool>(a) != static_cast<bool>(b); });
      break;
    case PointwiseOp::BitwiseAnd:
      if constexpr (!kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return static_cast<M>(a & b); });
      break;
    case PointwiseOp::BitwiseOr:
      if constexpr (!kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return static_cast<M>(a | b); });
      break;
    case PointwiseOp::BitwiseXor:
      if constexpr (!kFloat) binary_loop<T, T>(it, [](M a, M b) -> M { return static_cast<M>(a ^ b); });
      break;
    case PointwiseOp::LeftShift:  // shifting by the width or more (or by a negative count) gives 0
      if constexpr (!kFloat && !kBool) {
        using U = std::make_unsigned_t<M>;
        constexpr M bits = static_cast<M>(sizeof(M) * 8);
        binary_loop<T, T>(
            it, [](M a, M b) -> M { return (b < 0 || b >= bits) ? M(0) : static_cast<M>(static_cast<U>(a) << b); });
      }
      break;
    case PointwiseOp::RightShift:  // ... and the sign for right shifts
      if constexpr (!kFloat && !kBool) {
        constexpr M bits = static_cast<M>(sizeof(M) * 8);
        binary_loop<T, T>(it, [](M a, M b) -> M {
          return (b < 0 || b >= bits) ? static_cast<M>(a < 0 ? -1 : 0) : static_cast<M>(a >> b);
        });
      }
      break;
    case PointwiseOp::GeluBackward:
      if constexpr (kFloat)
        binary_loop<T, T>(
            it, [](M g, M x) __attribute__((always_inline))->M { return g * gelu_grad(x); });
      break;
    case PointwiseOp::GeluTanhBackward:
      if constexpr (kFloat)
        binary_loop<T, T>(
            it, [](M g, M x) __attribute__((always_inline))->M { return g * gelu_tanh_grad(x); });
      break;
    case PointwiseOp::ReluBackward:  // a select, so a NaN gradient where the unit was off gives 0, as torch
      if constexpr (!kBool) binary_loop<T, T>(it, [](M g, M y) -> M { return y <= M(0) ? M(0) : g; });
      break;
    case PointwiseOp::SigmoidBackward:
      if constexpr (kFloat) binary_loop<T, T>(it, [](M g, M y) -> M { return g * (M(1) - y) * y; });
      break;
    case PointwiseOp::TanhBackward:
      if constexpr (kFloat) binary_loop<T, T>(it, [](M g, M y) -> M { return g * (M(1) - y * y); });
      break;
    // Note [Fused activation backward] (ops/unary.cpp): selects and the vectorizable sigmoid.
    case PointwiseOp::LeakyReluBackward:
      if constexpr (kFloat) {
        const M slope = static_cast<M>(p0);
        binary_loop<T, T>(it, [slope](M g, M x) -> M { return x > M(0) ? g : g * slope; });
      }
      break;
    case PointwiseOp::HardtanhBackward:
      if constexpr (kFloat) {
        const M lo = static_cast<M>(p0), hi = static_cast<M>(p1);
        binary_loop<T, T>(it, [lo, hi](M g, M x) -> M { return x > lo && x < hi ? g : M(0); });
      }
      break;
    case PointwiseOp::SiluBackward:
      if constexpr (kFloat)
        binary_loop<T, T>(
            it, [](M g, M x) __attribute__((always_inline))->M { return silu_grad(g, x); });
      break;
    case PointwiseOp::HardswishBackward:
      if constexpr (kFloat)
        binary_loop<T, T>(it, [](M g, M x) -> M {
          // a NaN x gives NaN, as torch's vector kernel (its scalar one gives g)
          return x <= M(-3) ? M(0) : (x >= M(3) ? g : g * (x / M(3) + M(0.5)));
        });
      break;
    case PointwiseOp::SoftplusBackward:
      if constexpr (kFloat) {
        const M beta = static_cast<M>(p0), threshold = static_cast<M>(p1);
        binary_loop<T, T>(
            it, [ beta, threshold ](M g, M x) __attribute__((always_inline))->M {
              const M bx = x * beta, z = math::exp_of(bx);
              return bx > threshold ? g : g * z / (z + M(1));
            });
      }
      break;
    case PointwiseOp::EluBackward:  // torch's elu_backward from the input (a NaN input gives NaN, as its vector kernel)
      if constexpr (kFloat) {
        const M neg_coef = static_cast<M>(p0), in_scale = static_cast<M>(p1), scale = static_cast<M>(p2);
        binary_loop<T, T>(
            it, [ neg_coef, in_scale, scale ](M g, M x) __attribute__((always_inline))->M {
              const M z = math::exp_of(x * in_scale);
              return x > M(0) ? g * scale : g * (neg_coef * z);
            });
      }
      break;
    case PointwiseOp::LogsigmoidBackward:
      if constexpr (kFloat)
        binary_loop<T, T>(
            it, [](M g, M x) __attribute__((always_inline))->M {
              const M z = math::exp_of(-std::abs(x));
              const bool neg = x < M(0);
              return g * ((neg ? M(1) : M(0)) - (neg ? M(1) : M(-1)) * (z / (M(1) + z)));
            });
      break;
    // Note [Fused regression losses] (ops/nn_loss.cpp): torch's formulas, in the same order.
    case PointwiseOp::SmoothL1:
      if constexpr (kFloat) {
        const M beta = static_cast<M>(p0);
        binary_loop<T, T>(it, [beta](M a, M b) -> M {
          const M z = std::abs(a - b);
          return z < beta ? M(0.5) * z * z / beta : z - M(0.5) * beta;
        });
      }
      break;
    case PointwiseOp::Huber:
      if constexpr (kFloat) {
        const M delta = static_cast<M>(p0);
        binary_loop<T, T>(it, [delta](M a, M b) -> M {
          const M z = std::abs(a - b);
          return z < delta ? M(0.5) * z * z : delta * (z - M(0.5) * delta);
        });
      }
      break;
    case PointwiseOp::SmoothL1Backward:
      if constexpr (kFloat) {
        const M beta = static_cast<M>(p0), scale = static_cast<M>(p1);
        binary_loop<T, T>(it, [beta, scale](M a, M b) -> M {
          const M d = a - b;
          return d <= -beta ? -scale : (d >= beta ? scale : scale * d / beta);
        });
      }
      break;
    case PointwiseOp::HuberBackward:
      if constexpr (kFloat) {
        const M delta = static_cast<M>(p0), scale = static_cast<M>(p1);
        binary_loop<T, T>(it, [delta, scale](M a, M b) -> M {
          const M d = a - b;
          return d <= -delta ? -scale * delta : (d >= delta ? scale * delta : scale * d);
        });
      }
      break;
  }
}

// x + value * y (*|/) z (integer division: addcdiv rejects integer inputs before the kernel).
template <typename T>
void addc_loop(const TensorIter& it, bool is_div, Scalar value) {
  using M = opmath_t<T>;
  const M v = value.to<M>();
  if (is_div) {
    if constexpr (std::is_integral_v<M>)
      throw Error("addcdiv: integer inputs are not supported");
    else
      ternary_loop<T, T, T, T>(it, [v](T x, T y, T z) {
        return static_cast<T>(static_cast<M>(x) + v * (static_cast<M>(y) / static_cast<M>(z)));
      });
    return;
  }
  ternary_loop<T, T, T, T>(
      it, [v](T x, T y, T z) { return static_cast<T>(static_cast<M>(x) + v * static_cast<M>(y) * static_cast<M>(z)); });
}

}  // namespace

void EMBER_ISA_KERNEL(pointwise_binary_kernel)(PointwiseOp op, const TensorIter& it, ScalarType compute,
                                               const char* name, double p0, double p1, double p2) {
  EMBER_DISPATCH_ALL(compute, name, [&] { binary_kernel_t<scalar_t>(op, it, p0, p1, p2); });
}

// where here rather than in ops/pointwise.cpp: the select vectorizes only at this file's ISA
// levels (masked_fill of an attention mask ran 2.7x slower at the baseline level).
void EMBER_ISA_KERNEL(where_kernel)(const TensorIter& it, ScalarType dt) {
  EMBER_DISPATCH_ALL_AND_COMPLEX(dt, "where", [&] {
    using T = scalar_t;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      // the condition read as bytes (!= 0), as load_as does: any nonzero byte is true
      auto* o = reinterpret_cast<T*>(d[0]);
      const uint8_t* c = reinterpret_cast<const uint8_t*>(d[1]);
      const T* x = reinterpret_cast<const T*>(d[2]);
      const T* y = reinterpret_cast<const T*>(d[3]);
      constexpr int64_t e = sizeof(T);
      if (s[0] == e && s[1] == 1 && s[2] == e && s[3] == e) {
        for (int64_t k = 0; k < n; ++k) o[k] = c[k] != 0 ? x[k] : y[k];
      } else if (s[0] == e && s[1] == 1 && s[2] == 0 && s[3] == e) {  // masked_fill and its backward
        const T xv = *x;
        for (int64_t k = 0; k < n; ++k) o[k] = c[k] != 0 ? xv : y[k];
      } else if (s[0] == e && s[1] == 1 && s[2] == e && s[3] == 0) {
        const T yv = *y;
        for (int64_t k = 0; k < n; ++k) o[k] = c[k] != 0 ? x[k] : yv;
      } else {
        for (int64_t k = 0; k < n; ++k)
          *reinterpret_cast<T*>(d[0] + k * s[0]) = *reinterpret_cast<const uint8_t*>(d[1] + k * s[1]) != 0
                                                       ? *reinterpret_cast<const T*>(d[2] + k * s[2])
                                                       : *reinterpret_cast<const T*>(d[3] + k * s[3]);
      }
    });
  });
}

// The ternary ops here rather than in ops/pointwise.cpp: their loops vectorize only at this
// file's ISA levels (lerp and addcmul ran 1.3-1.4x torch's time at the baseline level).
void EMBER_ISA_KERNEL(ternary_kernel)(TernaryOp op, const TensorIter& it, ScalarType dt, Scalar value) {
  switch (op) {
    case TernaryOp::Lerp:
      EMBER_DISPATCH_FLOAT_AND_COMPLEX(dt, "lerp", [&] {
        using M = opmath_t<scalar_t>;
        ternary_loop<scalar_t, scalar_t, scalar_t, scalar_t>(it, [](scalar_t s, scalar_t e, scalar_t w_) {
          const M a = s, b = e, t = w_;
          using R = decltype(std::abs(t));  // |w| for complex weights, as PyTorch
          return static_cast<scalar_t>(std::abs(t) < R(0.5) ? a + t * (b - a) : b - (b - a) * (M(1) - t));
        });
      });
      break;
    case TernaryOp::Addcmul:
    case TernaryOp::Addcdiv: {
      const bool is_div = op == TernaryOp::Addcdiv;
      const auto body = [&](auto zero) { addc_loop<decltype(zero)>(it, is_div, value); };
      EMBER_DISPATCH_SWITCH(dt, is_div ? "addcdiv" : "addcmul",
                            EMBER_INT_CASES([&] { body(scalar_t{}); }) EMBER_FLOAT_CASES([&] { body(scalar_t{}); })
                                EMBER_COMPLEX_CASES([&] { body(scalar_t{}); }));
      break;
    }
    case TernaryOp::Clamp:
      EMBER_DISPATCH_ALL(dt, "clamp", [&] {
        using M = opmath_t<scalar_t>;
        ternary_loop<scalar_t, scalar_t, scalar_t, scalar_t>(it, [](scalar_t xs, scalar_t ls, scalar_t hs) {
          const M v = xs, l = ls, h = hs;
          // min(max(v, l), h) with NaN in any of them propagating, as torch.
          const M r = (v < l || l != l) ? l : v;
          return static_cast<scalar_t>(v != v ? v : ((r > h || h != h) ? h : r));
        });
      });
      break;
  }
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
