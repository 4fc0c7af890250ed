// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/unary_kernels.h"

#include <bit>
#include <cmath>
#include <limits>

#include "ember/cpu/mkl_blas.h"

// Kernel code from here on (Note [Multi-ISA kernels] in cpu/isa.h).
#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math_of.h"
#include "ember/cpu/unary_math.h"

namespace ember::cpu {
namespace {

// A double op parameter as the compute type. Integer parameters go through int64 (a -1 bound for
// uint8 wraps as torch's does, without the undefined double -> uint8 cast UBSan finds).
template <typename M>
M param_as(double v) {
  if constexpr (std::is_integral_v<M>)
    return static_cast<M>(v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? static_cast<int64_t>(v)
                                                                                   : INT64_MIN);
  else
    return static_cast<M>(v);
}

// Float runs the vectorizable versions (Note [Vectorizable float math], [Float log]), double those
// of Note [Double math]; exp2 and erf keep libm's for double.
#define EMBER_FAST_FLOAT(name)              \
  template <typename M>                     \
  EMBER_MATH_INLINE M fast_##name(M x) {    \
    if constexpr (std::is_same_v<M, float>) \
      return math::name(x);                 \
    else                                    \
      return std::name(x);                  \
  }
EMBER_FAST_FLOAT(exp2)
EMBER_FAST_FLOAT(erf)
#undef EMBER_FAST_FLOAT
template <typename M>
EMBER_MATH_INLINE M fast_log1p(M x) {
  return math::log1p(x);
}
template <typename M>
EMBER_MATH_INLINE M fast_expm1(M x) {
  return math::expm1(x);
}
template <typename M>
EMBER_MATH_INLINE M fast_tanh(M x) {
  return math::tanh(x);
}
template <typename M>
EMBER_MATH_INLINE M fast_log(M x) {
  return math::log(x);
}
template <typename M>
EMBER_MATH_INLINE M fast_exp(M x) {
  return math::exp(x);  // float and double (Note [Double exp])
}
template <typename M>
EMBER_MATH_INLINE M fast_gelu(M x) {
  if constexpr (std::is_same_v<M, float>)
    return math::gelu(x);
  else
    return x * M(0.5) * std::erfc(-x * M(0.70710678118654752440));
}

// min(max(x, 0), 6) as selects (std::fmin/fmax are calls that block vectorization); NaN stays NaN.
template <typename M>
EMBER_MATH_INLINE M relu6(M x) {
  return x < M(0) ? M(0) : (x > M(6) ? M(6) : x);
}

// Largest finite value of T (16-bit floats included), for nan_to_num's defaults.
template <typename T>
double max_of() {
  if constexpr (std::is_same_v<T, Half>)
    return 65504.0;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return 3.38953139e38;
  else
    return static_cast<double>(std::numeric_limits<T>::max());
}

// std::signbit, written so GCC 12 does not crash vectorizing it (an ICE on 16-bit float loops).
template <typename M>
EMBER_MATH_INLINE bool sign_bit(M x) {
  using U = std::conditional_t<sizeof(M) == 4, uint32_t, uint64_t>;
  return static_cast<int64_t>(std::bit_cast<U>(x) >> (sizeof(M) * 8 - 1)) != 0;
}

// Note [Float math loops]: log/log2/log10, sin/cos/tan, atan/asin/acos, erfinv and sinh/cosh over float and
// 16-bit floats (in float) run the vectorizable kernels of Note [Float log], [Float
// trigonometry], [Float inverse trigonometry] and [Float erfinv]. Contiguous runs go in blocks
// through f, then g (libm) for the rare elements f cannot take (needs_g: trigonometry's
// |x| >= 2^20); strided runs element by element, choosing the same way. The loops are compute-bound, so at the AVX-512
// level they use 512-bit vectors (the file's default is 256-bit): sin 1.9 -> 1.3 ms per 1M floats on one thread.
#ifdef EMBER_AVX512_LANES
#define EMBER_WIDE_VECTORS __attribute__((target("prefer-vector-width=512")))
#else
#define EMBER_WIDE_VECTORS
#endif
template <typename T, typename F, typename N, typename G>
void float_math_loop(const TensorIter& it, const F& f_ref, const N& needs_g_ref, const G& g) {
  it.for_each([&f_ref, &needs_g_ref, &g](char** d, const int64_t* s, int64_t n) EMBER_WIDE_VECTORS {
    const F f = f_ref;  // Note [Loop closure copies]
    const N needs_g = needs_g_ref;
    if (s[0] != sizeof(T) || s[1] != sizeof(T)) {
      for (int64_t k = 0; k < n; ++k) {
        const float x = static_cast<float>(*reinterpret_cast<const T*>(d[1] + k * s[1]));
        *reinterpret_cast<T*>(d[0] + k * s[0]) = static_cast<T>(needs_g(x) ? g(x) : f(x));
      }
      return;
    }
    auto* o = reinterpret_cast<T*>(d[0]);
    auto* a = reinterpret_cast<const T*>(d[1]);
    constexpr int64_t kBlock = 256;
    float x[kBlock], y[kBlock];  // x: a copy, so an in-place op still sees its input in the second pass
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      row_to_float(a + k, x, len);
      int32_t slow = 0;  // (an int: GCC does not vectorize a bool reduction beside doubles)
      for (int64_t j = 0; j < len; ++j) {
        y[j] = f(x[j]);
        slow |= needs_g(x[j]) ? 1 : 0;
      }
      if (slow)
        for (int64_t j = 0; j < len; ++j)
          if (needs_g(x[j])) y[j] = g(x[j]);
      row_from_float(y, o + k, len);
    }
  });
}

// Note [Float lgamma] over float and 16-bit floats: as float_math_loop, but both passes vectorized and
// sharing lgamma(|x|) (in double, kept for the second pass: the reflection subtracts it).
template <typename T>
void lgamma_float_loop(const TensorIter& it) {
  it.for_each([](char** d, const int64_t* s, int64_t n) EMBER_WIDE_VECTORS {
    if (s[0] != sizeof(T) || s[1] != sizeof(T)) {
      for (int64_t k = 0; k < n; ++k) {
        const float x = static_cast<float>(*reinterpret_cast<const T*>(d[1] + k * s[1]));
        const double lg = math::lgamma_of_abs(x);
        *reinterpret_cast<T*>(d[0] + k * s[0]) =
            static_cast<T>(math::not_positive_finite(x) ? math::lgamma_reflected(x, lg) : math::lgamma_positive(x, lg));
      }
      return;
    }
    auto* o = reinterpret_cast<T*>(d[0]);
    auto* a = reinterpret_cast<const T*>(d[1]);
    constexpr int64_t kBlock = 256;
    float x[kBlock], y[kBlock];
    double lg[kBlock];
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      row_to_float(a + k, x, len);
      int32_t other = 0;
      for (int64_t j = 0; j < len; ++j) {
        lg[j] = math::lgamma_of_abs(x[j]);
        y[j] = math::lgamma_positive(x[j], lg[j]);
        other |= math::not_positive_finite(x[j]) ? 1 : 0;
      }
      if (other)
        for (int64_t j = 0; j < len; ++j) {
          const float r = math::lgamma_reflected(x[j], lg[j]);
          y[j] = math::not_positive_finite(x[j]) ? r : y[j];
        }
      row_from_float(y, o + k, len);
    }
  });
}
// Note [Float erfinv] over float and 16-bit floats: blocks of 64 through the central polynomial, the
// outer one only in a block holding some w >= 5 (|y| > 0.9966) or NaN (both on every element took 2x
// torch's time).
template <typename T>
void erfinv_float_loop(const TensorIter& it) {
  it.for_each([](char** d, const int64_t* s, int64_t n) EMBER_WIDE_VECTORS {
    if (s[0] != sizeof(T) || s[1] != sizeof(T)) {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<T*>(d[0] + k * s[0]) =
            static_cast<T>(math::erfinv(static_cast<float>(*reinterpret_cast<const T*>(d[1] + k * s[1]))));
      return;
    }
    auto* o = reinterpret_cast<T*>(d[0]);
    auto* a = reinterpret_cast<const T*>(d[1]);
    constexpr int64_t kBlock = 64;
    float x[kBlock], y[kBlock];
    double w[kBlock];
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      row_to_float(a + k, x, len);
      int32_t outer = 0;  // (an int: GCC does not vectorize a bool reduction beside doubles)
      for (int64_t j = 0; j < len; ++j) {
        w[j] = math::erfinv_float_w(x[j]);
        y[j] = math::erfinv_float_finish(x[j], math::erfinv_float_central(w[j]));
        outer |= math::erfinv_float_is_central(w[j]) ? 0 : 1;
      }
      if (outer)
        for (int64_t j = 0; j < len; ++j) {
          const float r = math::erfinv_float_finish(x[j], math::erfinv_float_outer(w[j]));
          y[j] = math::erfinv_float_is_central(w[j]) ? y[j] : r;
        }
      row_from_float(y, o + k, len);
    }
  });
}
// Note [Double erfinv] over float64: blocks of 64 through the central polynomial, then, in a block
// holding some |y| past it (or NaN), the outer form from the same w selected there (all three
// polynomials on every element took 1.15x torch's time; uniform samples leave 1 block in 16 for the
// second pass).
void erfinv_double_loop(const TensorIter& it) {
  it.for_each([](char** d, const int64_t* s, int64_t n) EMBER_WIDE_VECTORS {
    if (s[0] != sizeof(double) || s[1] != sizeof(double)) {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<double*>(d[0] + k * s[0]) = math::erfinv(*reinterpret_cast<const double*>(d[1] + k * s[1]));
      return;
    }
    auto* o = reinterpret_cast<double*>(d[0]);
    auto* a = reinterpret_cast<const double*>(d[1]);
    constexpr int64_t kBlock = 64;
    double x[kBlock], w[kBlock], y[kBlock];  // x: a copy, so an in-place op still sees its input
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      std::copy(a + k, a + k + len, x);
      int32_t outer = 0;  // (an int: GCC does not vectorize a bool reduction beside doubles)
      for (int64_t j = 0; j < len; ++j) {
        w[j] = math::erfinv_w(x[j]);
        y[j] = math::erfinv_central(x[j], w[j]);
        outer |= math::erfinv_is_central(x[j]) ? 0 : 1;
      }
      if (outer)
        for (int64_t j = 0; j < len; ++j) {
          const double r = math::erfinv_outer(x[j], w[j]);
          y[j] = math::erfinv_is_central(x[j]) ? y[j] : r;
        }
      std::copy(y, y + len, o + k);
    }
  });
}
// Note [Double math] over float64, as float_math_loop: contiguous runs in blocks through f, then g
// (libm) for the elements needs_g picks (trigonometry's |x| >= 2^20, inf, NaN); 512-bit vectors at
// the AVX-512 level.
template <typename F, typename N, typename G>
void double_math_loop(const TensorIter& it, const F& f_ref, const N& needs_g_ref, const G& g) {
  it.for_each([&f_ref, &needs_g_ref, &g](char** d, const int64_t* s, int64_t n) EMBER_WIDE_VECTORS {
    const F f = f_ref;  // Note [Loop closure copies]
    const N needs_g = needs_g_ref;
    if (s[0] != sizeof(double) || s[1] != sizeof(double)) {
      for (int64_t k = 0; k < n; ++k) {
        const double x = *reinterpret_cast<const double*>(d[1] + k * s[1]);
        *reinterpret_cast<double*>(d[0] + k * s[0]) = needs_g(x) ? g(x) : f(x);
      }
      return;
    }
    auto* o = reinterpret_cast<double*>(d[0]);
    auto* a = reinterpret_cast<const double*>(d[1]);
    constexpr int64_t kBlock = 256;
    double y[kBlock];  // stored after both passes, so an in-place op still sees its input in the second
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      int32_t slow = 0;  // (an int: GCC does not vectorize a bool reduction beside doubles)
      for (int64_t j = 0; j < len; ++j) {
        y[j] = f(a[k + j]);
        slow |= needs_g(a[k + j]) ? 1 : 0;
      }
      if (slow)
        for (int64_t j = 0; j < len; ++j)
          if (needs_g(a[k + j])) y[j] = g(a[k + j]);
      std::copy(y, y + len, o + k);
    }
  });
}
// An op on MKL's vector math (Note [MKL VML]) in compute type C (float or double) over T (C, or a 16-bit
// float read as float): contiguous runs of C whole, others through blocks.
template <typename T, typename C>
void vml_loop(const TensorIter& it, void (*f)(int64_t, const C*, C*)) {
  it.for_each([f](char** d, const int64_t* s, int64_t n) {
    if constexpr (std::is_same_v<T, C>)
      if (s[0] == sizeof(C) && s[1] == sizeof(C))
        return f(n, reinterpret_cast<const C*>(d[1]), reinterpret_cast<C*>(d[0]));
    constexpr int64_t kBlock = 2048;  // (a call costs about 256 floats' work)
    C x[kBlock];
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      for (int64_t j = 0; j < len; ++j) x[j] = static_cast<C>(*reinterpret_cast<const T*>(d[1] + (k + j) * s[1]));
      f(len, x, x);
      for (int64_t j = 0; j < len; ++j) *reinterpret_cast<T*>(d[0] + (k + j) * s[0]) = static_cast<T>(x[j]);
    }
  });
}
// The MKL function for op (Note [MKL VML]): for float64 every one MKL has, for float blocks (float32
// and 16-bit floats) those where ember's float kernels were slower than MKL's. false: none.
bool vml_function_of(UnaryOp op, bool is_double, VmlFunction& f) {
  using V = VmlFunction;
  struct Entry {
    UnaryOp op;
    V f;
    bool for_float, for_double;  // float64 asin, acos and erfinv: ember's are faster (Notes [Double asin
  };                             // and acos], [Double erfinv])
  static constexpr Entry kTable[] = {
      {UnaryOp::Exp, V::Exp, false, true},       {UnaryOp::Log, V::Ln, true, true},
      {UnaryOp::Log2, V::Log2, true, true},      {UnaryOp::Log10, V::Log10, true, true},
      {UnaryOp::Log1p, V::Log1p, false, true},   {UnaryOp::Expm1, V::Expm1, false, true},
      {UnaryOp::Sin, V::Sin, true, true},        {UnaryOp::Cos, V::Cos, true, true},
      {UnaryOp::Tan, V::Tan, true, true},        {UnaryOp::Tanh, V::Tanh, false, true},
      {UnaryOp::Erf, V::Erf, false, true},       {UnaryOp::Erfc, V::Erfc, false, true},
      {UnaryOp::Atan, V::Atan, true, true},      {UnaryOp::Sinh, V::Sinh, false, true},
      {UnaryOp::Cosh, V::Cosh, false, true},     {UnaryOp::Exp2, V::Exp2, false, true},
      {UnaryOp::Asin, V::Asin, true, false},     {UnaryOp::Acos, V::Acos, true, false},
      {UnaryOp::Erfinv, V::ErfInv, true, false},
  };
  for (const Entry& e : kTable)
    if (e.op == op) {
      f = e.f;
      return is_double ? e.for_double : e.for_float;
    }
  return false;
}
VmlDoubleFn vml_double_function_of(UnaryOp op) {
  VmlFunction f;
  return vml_function_of(op, true, f) ? mkl_vml_double(f) : nullptr;
}
VmlFloatFn vml_float_function_of(UnaryOp op) {
  VmlFunction f;
  return vml_function_of(op, false, f) ? mkl_vml_float(f) : nullptr;
}
// float64 gelu x erfc(-x / sqrt 2) / 2 with MKL's erfc (Note [MKL VML]; libm's per element took 4x
// torch's time), through blocks.
void gelu_double_vml_loop(const TensorIter& it, VmlDoubleFn erfc) {
  it.for_each([erfc](char** d, const int64_t* s, int64_t n) {
    constexpr int64_t kBlock = 256;
    double x[kBlock], t[kBlock];
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      for (int64_t j = 0; j < len; ++j) {
        x[j] = *reinterpret_cast<const double*>(d[1] + (k + j) * s[1]);
        t[j] = x[j] * -0.70710678118654752440;
      }
      erfc(len, t, t);
      for (int64_t j = 0; j < len; ++j) *reinterpret_cast<double*>(d[0] + (k + j) * s[0]) = x[j] * 0.5 * t[j];
    }
  });
}
// An op of Note [Double math] without a libm pass.
template <typename F>
void double_math_loop(const TensorIter& it, const F& f) {
  double_math_loop(
      it, f, [](double) { return false; }, [](double x) { return x; });
}
#undef EMBER_WIDE_VECTORS

template <typename T>
void kernel_t(UnaryOp op, const TensorIter& it, const UnaryParams& p) {
  using M = opmath_t<T>;
  constexpr bool kFloat = !std::is_integral_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  constexpr bool kSigned = std::is_signed_v<M>;
  const double p0 = p.p0, p1 = p.p1;
  (void)p0, (void)p1;

// Op defined for floating types (the driver casts or rejects the others).
#define FLOAT_OP(E, ...)                                                    \
  case UnaryOp::E:                                                          \
    if constexpr (kFloat)                                                   \
      unary_loop<T, T>(                                                     \
          it, [=](M x) __attribute__((always_inline))->M { __VA_ARGS__; }); \
    break;
// Op defined for integer and floating types (not bool).
#define NUMERIC_OP(E, ...)                                                  \
  case UnaryOp::E:                                                          \
    if constexpr (!kBool)                                                   \
      unary_loop<T, T>(                                                     \
          it, [=](M x) __attribute__((always_inline))->M { __VA_ARGS__; }); \
    break;
// Any type in, bool out.
#define PREDICATE_OP(E, ...)                   \
  case UnaryOp::E:                             \
    unary_loop<bool, T>(it, [=](M x) -> bool { \
      (void)x;                                 \
      __VA_ARGS__;                             \
    });                                        \
    break;

#ifdef EMBER_AVX512_LANES
  // float32 and the 16-bit ops with a 16-lane form giving the same floats (Note [16-lane float math])
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>) {
    switch (op) {
      case UnaryOp::Exp:
        return unary_loop16<T>(
            it, [](__m512 x) { return math::exp16(x); }, [](float x) { return math::exp(x); });
      case UnaryOp::Sigmoid:
        return unary_loop16<T>(
            it, [](__m512 x) { return math::sigmoid16(x); }, [](float x) { return math::sigmoid(x); });
      case UnaryOp::Silu:
        return unary_loop16<T>(
            it, [](__m512 x) { return _mm512_mul_ps(x, math::sigmoid16(x)); },
            [](float x) { return x * math::sigmoid(x); });
      case UnaryOp::Tanh:
        return unary_loop16<T>(
            it, [](__m512 x) { return math::tanh16(x); }, [](float x) { return math::tanh(x); });
      case UnaryOp::Erf:
        return unary_loop16<T>(
            it, [](__m512 x) { return math::erf16(x); }, [](float x) { return math::erf(x); });
      case UnaryOp::Gelu:
        if (p0 == 0)
          return unary_loop16<T>(
              it, [](__m512 x) { return math::gelu16(x); }, [](float x) { return math::gelu(x); });
        break;
      default:
        break;
    }
  }
#endif
  // float64: MKL's vector math where it has the function (Note [MKL VML]); else the functions of Note
  // [Double math] and exp at 8 lanes on AVX-512 (FLOAT_OP's loop uses 4)
  if constexpr (std::is_same_v<T, double>) {
    if (const VmlDoubleFn f = vml_double_function_of(op)) return vml_loop<double>(it, f);
    switch (op) {
      case UnaryOp::Exp:
        return double_math_loop(
            it, [](double x) __attribute__((always_inline)) { return math::exp(x); });
      case UnaryOp::Expm1:
        return double_math_loop(
            it, [](double x) __attribute__((always_inline)) { return math::expm1(x); });
      case UnaryOp::Log1p:
        return double_math_loop(
            it, [](double x) __attribute__((always_inline)) { return math::log1p(x); });
      case UnaryOp::Tanh:
        return double_math_loop(
            it, [](double x) __attribute__((always_inline)) { return math::tanh(x); });
      case UnaryOp::Sigmoid:
        return double_math_loop(
            it, [](double x) __attribute__((always_inline)) { return math::sigmoid_of(x); });
      case UnaryOp::Silu:
        return double_math_loop(
            it, [](double x) __attribute__((always_inline)) { return x * math::sigmoid_of(x); });
      default:
        break;
    }
  }
  switch (op) {
    FLOAT_OP(Exp, return fast_exp(x))
    FLOAT_OP(Exp2, return fast_exp2(x))  // Note [Float exp2, erfc and inverse hyperbolics]
    FLOAT_OP(Expm1, return fast_expm1(x))
// Float-valued op on float and 16-bit floats through Note [Float math loops] (fast: the vectorized
// function, slow: libm's, for the float elements for which needs_slow, an expression in x, holds);
// double takes slow, or (MATH_OP_D) the same three with the double overloads (Note [Double math]).
#define MATH_OP_FLOAT(fast, slow, needs_slow)                                                                  \
  if constexpr (std::is_same_v<M, float>) {                                                                    \
    if (const VmlFloatFn v = vml_float_function_of(op))                                                        \
      vml_loop<T>(it, v);                                                                                      \
    else                                                                                                       \
      float_math_loop<T>(                                                                                      \
          it, [](float x) __attribute__((always_inline)) { return fast(x); },                                  \
          [](float x) __attribute__((always_inline)) { return needs_slow; }, [](float x) { return slow(x); }); \
  }
#define MATH_OP(E, fast, slow, needs_slow)                                                        \
  case UnaryOp::E:                                                                                \
    MATH_OP_FLOAT(fast, slow, needs_slow)                                                         \
    else if constexpr (kFloat) unary_loop<T, T>(it, [](M x) { return static_cast<M>(slow(x)); }); \
    break;
#define MATH_OP_D(E, fast, slow, needs_slow)                                                                   \
  case UnaryOp::E:                                                                                             \
    MATH_OP_FLOAT(fast, slow, needs_slow)                                                                      \
    else if constexpr (std::is_same_v<T, double>) double_math_loop(                                            \
        it, [](double x) __attribute__((always_inline)) { return fast(x); },                                   \
        [](double x) __attribute__((always_inline)) { return needs_slow; }, [](double x) { return slow(x); }); \
    break;
    MATH_OP_D(Log, math::log, std::log, (void(x), false))
    MATH_OP_D(Log2, math::log2, std::log2, (void(x), false))
    MATH_OP_D(Log10, math::log10, std::log10, (void(x), false))
    MATH_OP_D(Sin, math::sin, std::sin, math::trig_needs_libm(x))
    MATH_OP_D(Cos, math::cos, std::cos, math::trig_needs_libm(x))
    MATH_OP_D(Tan, math::tan, std::tan, math::trig_needs_libm(x))
    MATH_OP(Asin, math::asin, math::asin, (void(x), false))  // Note [Double asin and acos]
    MATH_OP(Acos, math::acos, math::acos, (void(x), false))  // Note [Double asin and acos]
    MATH_OP(Atan, math::atan, std::atan, (void(x), false))
    case UnaryOp::Erfinv:  // Note [Float erfinv] and Note [Double erfinv], or MKL's (Note [MKL VML])
      if constexpr (std::is_same_v<M, float>) {
        if (const VmlFloatFn v = vml_float_function_of(op))
          vml_loop<T>(it, v);
        else
          erfinv_float_loop<T>(it);
      } else if constexpr (std::is_same_v<T, double>)
        erfinv_double_loop(it);
      break;
      MATH_OP(Sinh, math::sinh, std::sinh, math::hyperbolic_needs_libm(x))  // Note [Float sinh and cosh]
      MATH_OP(Cosh, math::cosh, std::cosh, math::hyperbolic_needs_libm(x))
      // Note [Float exp2, erfc and inverse hyperbolics]
      MATH_OP(Erfc, math::erfc, std::erfc, (void(x), false))
      MATH_OP(Asinh, math::asinh, std::asinh, (void(x), false))
      MATH_OP(Acosh, math::acosh, std::acosh, (void(x), false))
      MATH_OP(Atanh, math::atanh, std::atanh, (void(x), false))
      MATH_OP(Digamma, math::digamma_positive, math::digamma, math::not_positive_finite(x))
#undef MATH_OP
#undef MATH_OP_D
#undef MATH_OP_FLOAT
      FLOAT_OP(Log1p, return fast_log1p(x))
      FLOAT_OP(Sqrt, return std::sqrt(x))
      FLOAT_OP(Rsqrt, return M(1) / std::sqrt(x))
      FLOAT_OP(Tanh, return fast_tanh(x))
      FLOAT_OP(Sigmoid, return math::sigmoid_of(x))
      FLOAT_OP(Erf, return fast_erf(x))
      FLOAT_OP(Polygamma, return static_cast<M>(math::polygamma(static_cast<int>(p0), x)))
      FLOAT_OP(Frac, return x - std::trunc(x))
      FLOAT_OP(Reciprocal, return M(1) / x)
      FLOAT_OP(Logit, {
        const M lo = static_cast<M>(p0), hi = M(1) - lo;
        const M z = p0 < 0 ? x : (x < lo ? lo : (x > hi ? hi : x));
        return fast_log(z / (M(1) - z));
      })
      FLOAT_OP(Selu, {
        constexpr M alpha = M(1.6732632423543772848170429916717), scale = M(1.0507009873554804934193349852946);
        return x > 0 ? scale * x : scale * alpha * fast_expm1(x);
      })
      FLOAT_OP(Silu, return x * math::sigmoid_of(x))
      FLOAT_OP(Mish, return x * fast_tanh(fast_log1p(fast_exp(x))))
      FLOAT_OP(Hardsigmoid, return relu6(x + M(3)) / M(6))
      FLOAT_OP(Hardswish, return x * relu6(x + M(3)) / M(6))
      FLOAT_OP(Logsigmoid, return (x < M(0) ? x : M(0)) - fast_log1p(fast_exp(-std::fabs(x))))
      FLOAT_OP(LeakyRelu, return x > 0 ? x : x * static_cast<M>(p0))
      FLOAT_OP(Elu, {
        const M alpha = static_cast<M>(p0), scale = static_cast<M>(p1), in_scale = static_cast<M>(p.p2);
        return x > 0 ? x * scale : fast_expm1(x * in_scale) * alpha * scale;
      })
    case UnaryOp::Lgamma:  // Note [Float lgamma]: x > 0 in the first loop, the rest reflected in a second
      if constexpr (std::is_same_v<M, float>)
        lgamma_float_loop<T>(it);
      else if constexpr (kFloat)
        unary_loop<T, T>(it, [](M x) { return static_cast<M>(std::lgamma(x)); });
      break;
    case UnaryOp::Gelu:  // two loops, so neither has a branch that blocks vectorization
      if constexpr (std::is_same_v<T, double>) {
        if (p0 == 0)
          if (const VmlDoubleFn erfc = mkl_vml_double(VmlFunction::Erfc)) return gelu_double_vml_loop(it, erfc);
      }
      if constexpr (kFloat) {
        if (p0 == 0) {
          unary_loop<T, T>(
              it, [](M x) __attribute__((always_inline))->M { return fast_gelu(x); });
        } else {
          unary_loop<T, T>(
              it, [](M x) __attribute__((always_inline))->M {
                const M inner = M(0.79788456080286535588) * (x + M(0.044715) * x * x * x);
                return M(0.5) * x * (M(1) + fast_tanh(inner));
              });
        }
      }
      break;
    case UnaryOp::Softplus:
      if constexpr (kFloat) {
        const M beta = static_cast<M>(p0), th = static_cast<M>(p1);
        if (beta == M(1))  // the default: no product and no division (both exact by 1): 1.22 -> 1.15x torch
          unary_loop<T, T>(
              it, [th](M x) __attribute__((always_inline))->M { return x > th ? x : fast_log1p(fast_exp(x)); });
        else
          unary_loop<T, T>(
              it, [ beta, th ](M x) __attribute__((always_inline))->M {
                return x * beta > th ? x : fast_log1p(fast_exp(x * beta)) / beta;
              });
      }
      break;

    case UnaryOp::Abs:
      if constexpr (kFloat)
        unary_loop<T, T>(it, [](M x) -> M { return std::fabs(x); });
      else if constexpr (!kBool)
        unary_loop<T, T>(it, [](M x) -> M { return x < 0 ? static_cast<M>(-x) : x; });
      break;
    case UnaryOp::Sign:
    case UnaryOp::Sgn:
      if constexpr (kBool)
        unary_loop<T, T>(it, [](M x) -> M { return x; });
      else
        unary_loop<T, T>(it, [](M x) -> M { return static_cast<M>((M(0) < x) - (x < M(0))); });
      break;
      NUMERIC_OP(Neg, return static_cast<M>(-x))
      NUMERIC_OP(Square, return static_cast<M>(x * x))
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Trunc:
    case UnaryOp::Round:
      if constexpr (kFloat) {
        if (op == UnaryOp::Floor) unary_loop<T, T>(it, [](M x) -> M { return std::floor(x); });
        if (op == UnaryOp::Ceil) unary_loop<T, T>(it, [](M x) -> M { return std::ceil(x); });
        if (op == UnaryOp::Trunc) unary_loop<T, T>(it, [](M x) -> M { return std::trunc(x); });
        if (op == UnaryOp::Round) {
          const auto decimals = static_cast<int64_t>(p0);
          const M ten = static_cast<M>(std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals)));
          if (decimals == 0)
            unary_loop<T, T>(it, [](M x) -> M { return std::nearbyint(x); });
          else if (decimals > 0)
            unary_loop<T, T>(it, [ten](M x) -> M { return std::nearbyint(x * ten) / ten; });
          else
            unary_loop<T, T>(it, [ten](M x) -> M { return std::nearbyint(x / ten) * ten; });
        }
      } else if constexpr (!kBool) {
        unary_loop<T, T>(it, [](M x) -> M { return x; });
      }
      break;
      NUMERIC_OP(Relu, return x < M(0) ? M(0) : x)  // NaN and -0.0 pass through, as clamp_min
    case UnaryOp::Relu6:
    case UnaryOp::Hardtanh:
    case UnaryOp::Clamp:
      if constexpr (!kBool) {
        // Absent bounds (clamp) become the type's extremes; nan stays nan, and a NaN bound makes
        // every element NaN (torch's clamp propagates NaN from its bounds too).
        constexpr M lowest = kFloat ? -std::numeric_limits<M>::infinity() : std::numeric_limits<M>::lowest();
        constexpr M highest = kFloat ? std::numeric_limits<M>::infinity() : std::numeric_limits<M>::max();
        const auto bound = param_as<M>;
        M lo = op == UnaryOp::Relu6 ? M(0) : (p.has_p0 ? bound(p0) : lowest);
        M hi = op == UnaryOp::Relu6 ? M(6) : (p.has_p1 ? bound(p1) : highest);
        if (lo != lo || hi != hi)
          unary_loop<T, T>(it, [nan = lo != lo ? lo : hi](M) -> M { return nan; });
        else
          // NaN passes both compares unchanged (each keeps its left operand when the test fails):
          // two max/min instructions, no NaN test
          unary_loop<T, T>(it, [lo, hi](M x) -> M {
            const M r = x < lo ? lo : x;
            return r > hi ? hi : r;
          });
      }
      break;
    case UnaryOp::Threshold:
      if constexpr (!kBool) {
        const M th = param_as<M>(p0), value = param_as<M>(p1);
        unary_loop<T, T>(it, [th, value](M x) -> M { return x <= th ? value : x; });
      }
      break;
    case UnaryOp::NanToNum:
      if constexpr (kFloat) {
        const M nan = static_cast<M>(p0);
        const M pos = static_cast<M>(p.has_p1 ? p1 : max_of<T>());
        const M neg = static_cast<M>(p.has_p2 ? p.p2 : -max_of<T>());
        unary_loop<T, T>(it, [=](M x) -> M {
          const M inf = std::numeric_limits<M>::infinity();
          return x != x ? nan : (x == inf ? pos : (x == -inf ? neg : x));
        });
      } else {
        unary_loop<T, T>(it, [](M x) -> M { return x; });
      }
      break;
    case UnaryOp::BitwiseNot:
      if constexpr (kBool)
        unary_loop<T, T>(it, [](M x) -> M { return !x; });
      else if constexpr (!kFloat)
        unary_loop<T, T>(it, [](M x) -> M { return static_cast<M>(~x); });
      break;

      PREDICATE_OP(Isnan, if constexpr (kFloat) return x != x; else return false)
      PREDICATE_OP(Isinf, if constexpr (kFloat) return std::fabs(x) == std::numeric_limits<M>::infinity();
                   else return false)
      PREDICATE_OP(Isfinite, if constexpr (kFloat) return std::fabs(x) < std::numeric_limits<M>::infinity();
                   else return true)
      PREDICATE_OP(Isposinf, if constexpr (kFloat) return x == std::numeric_limits<M>::infinity(); else return false)
      PREDICATE_OP(Isneginf, if constexpr (kFloat) return x == -std::numeric_limits<M>::infinity(); else return false)
      PREDICATE_OP(Signbit, if constexpr (kFloat) return sign_bit(x); else if constexpr (kSigned) return x < 0;
                   else return false)
      PREDICATE_OP(LogicalNot, return !static_cast<bool>(x))
  }
#undef FLOAT_OP
#undef NUMERIC_OP
#undef PREDICATE_OP
}

}  // namespace

void EMBER_ISA_KERNEL(unary_kernel)(UnaryOp op, const TensorIter& it, ScalarType compute, const UnaryParams& p) {
  EMBER_DISPATCH_ALL(compute, unary_op_name(op), [&] { kernel_t<scalar_t>(op, it, p); });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
