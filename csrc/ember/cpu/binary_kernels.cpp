// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/binary_kernels.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "ember/core/checked_math.h"
#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/mkl_blas.h"
#include "ember/cpu/unary_math.h"

namespace ember::cpu {
namespace {

// floor(a / b) and Python's a % b for floats given mod = fmod(a, b), as torch computes them.
template <typename M>
M floor_div_given_mod(M a, M b, M mod) {
  if (b == 0) return a / b;
  M div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(M(0), a / b);
  M fl = std::floor(div);
  return (div - fl > M(0.5)) ? fl + 1 : fl;
}
template <typename M>
M python_mod_given_mod(M b, M r) {
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

template <typename M>
M floor_div(M a, M b) {
  if constexpr (std::is_integral_v<M>) {
    // Zero divisors raise before the kernel; one can still appear mid-loop when the divisor reads
    // memory the loop writes (an expanded alias, which the overlap check cannot rule out): no trap.
    if (b == 0) return 0;
    M q = int_div_wrap(a, b), r = int_mod_wrap(a, b);  // Note [Integer division without traps]
    return (r != 0 && ((a < 0) != (b < 0))) ? static_cast<M>(q - 1) : q;
  } else {
    return floor_div_given_mod(a, b, std::fmod(a, b));
  }
}
template <typename M>
M python_mod(M a, M b) {
  if constexpr (std::is_integral_v<M>) {
    if (b == 0) return 0;      // see floor_div
    M r = int_mod_wrap(a, b);  // Note [Integer division without traps]
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<M>(r + b) : r;
  } else {
    return python_mod_given_mod(b, std::fmod(a, b));
  }
}

template <typename M>
M int_pow(M base, M exp) {
  if constexpr (std::is_same_v<M, bool>) {
    return exp ? base : true;
  } else {
    if constexpr (std::is_signed_v<M>) {
      if (exp < 0) {  // only +-1 survive integer division; others truncate to 0 (as PyTorch)
        if (base == 1) return 1;
        if (base == -1) return (exp & 1) ? M(-1) : M(1);
        return 0;
      }
    }
    // Products wrap as torch's do, computed unsigned (a signed overflow is undefined behaviour) and
    // at least 32 bits wide (16-bit operands would be promoted to int, and overflow there).
    using W = std::conditional_t<(sizeof(M) <= 4), uint32_t, uint64_t>;
    W result = 1, b = static_cast<W>(base);
    while (exp > 0) {
      if (exp & 1) result *= b;
      exp >>= 1;
      b *= b;
    }
    return static_cast<M>(result);
  }
}

// Note [Float pow]: float x ** e for a broadcast finite exponent e (x ** 2.5, x ** -0.75) as
// exp(e log |x|) in double (unary_math.h's log and exp, within 1 ulp each; the product's error is far
// below a float ulp), rounded once: the correctly rounded power bar rare ties, in loops that
// vectorize (glibc's powf is a call per element: 1.3x torch's time). Negative x: that power, negated
// for an odd integer e, NaN (glibc's, sign set) for a non-integer one (both took libm's call: 4-8x
// torch's time on normal samples). Zeros, infinities and NaN take std::pow in a second pass over
// the block (its signs, zeros and infinities).
EMBER_MATH_INLINE bool pow_needs_libm(float x) {
  const float a = std::fabs(x);
  return !(a > 0.0f && a < std::numeric_limits<float>::infinity());
}
void pow_float_loop(const TensorIter& it, float e) {
  const bool e_integer = std::trunc(e) == e;
  // past 2^24 every float is an even integer
  const bool e_odd = e_integer && std::fabs(e) < 16777216.0f && (static_cast<int64_t>(e) & 1) != 0;
  // x ** e for x < 0 from |x| ** e, in integer operations (a float select does not vectorize under
  // -ftrapping-math): the sign flipped for an odd e, glibc's NaN (sign set) for a non-integer one
  const uint32_t odd_sign = e_odd ? 0x80000000u : 0u, nan_select = e_integer ? 0u : ~0u, nan_bits = 0xffc00000u;
  it.for_each([e, odd_sign, nan_select, nan_bits](char** d, const int64_t* s, int64_t n) {
    const double ed = e;
    constexpr int64_t kBlock = 256;
    float x[kBlock], y[kBlock];  // x: a copy, so an in-place op still sees its input in the second pass
    for (int64_t k = 0; k < n; k += kBlock) {
      const int64_t len = std::min(kBlock, n - k);
      if (s[1] == sizeof(float))
        std::copy_n(reinterpret_cast<const float*>(d[1]) + k, len, x);
      else
        for (int64_t j = 0; j < len; ++j) x[j] = *reinterpret_cast<const float*>(d[1] + (k + j) * s[1]);
      int32_t slow = 0;  // (an int: GCC does not vectorize a bool reduction beside doubles)
      for (int64_t j = 0; j < len; ++j) {
        // (a float's subnormals are normal doubles, so log_normal_double takes every |x| > 0)
        y[j] = static_cast<float>(math::exp(ed * math::log_normal_double(std::fabs(x[j]))));
        slow |= pow_needs_libm(x[j]) ? 1 : 0;
      }
      uint32_t xb[kBlock], yb[kBlock];
      std::memcpy(xb, x, len * sizeof(float));
      std::memcpy(yb, y, len * sizeof(float));
      for (int64_t j = 0; j < len; ++j) {
        const uint32_t nan = static_cast<uint32_t>(static_cast<int32_t>(xb[j]) >> 31) & nan_select;
        yb[j] = ((yb[j] ^ (xb[j] & odd_sign)) & ~nan) | (nan_bits & nan);
      }
      std::memcpy(y, yb, len * sizeof(float));
      if (slow)
        for (int64_t j = 0; j < len; ++j)
          if (pow_needs_libm(x[j])) y[j] = std::pow(x[j], e);
      if (s[0] == sizeof(float))
        std::copy_n(y, len, reinterpret_cast<float*>(d[0]) + k);
      else
        for (int64_t j = 0; j < len; ++j) *reinterpret_cast<float*>(d[0] + (k + j) * s[0]) = y[j];
    }
  });
}

// out = op(a, b) with a, b and out all of type T (comparisons: out is bool). A template, so
// `if constexpr` drops the branches that do not apply to T.
template <typename T>
void run_kernel_t(BinaryOp op, const TensorIter& it, Scalar alpha) {
  using M = opmath_t<T>;
  {
    switch (op) {
      case BinaryOp::Add:
      case BinaryOp::Sub: {
        if constexpr (std::is_same_v<T, bool>) {
          binary_loop<T, T>(it, [](M a, M b) { return a || b; });
        } else {
          M al = alpha.to<M>();
          if (op == BinaryOp::Sub) al = static_cast<M>(-al);
          if (al == M(1))
            binary_loop<T, T>(it, [](M a, M b) { return static_cast<M>(a + b); });
          else
            binary_loop<T, T>(it, [al](M a, M b) { return static_cast<M>(a + al * b); });
        }
        break;
      }
      case BinaryOp::Mul:
        if constexpr (std::is_same_v<T, bool>)
          binary_loop<T, T>(it, [](M a, M b) { return a && b; });
        else
          binary_loop<T, T>(it, [](M a, M b) { return static_cast<M>(a * b); });
        break;
      case BinaryOp::Div:
        if constexpr (!std::is_integral_v<M>) binary_loop<T, T>(it, [](M a, M b) { return a / b; });
        break;
      case BinaryOp::DivTrunc:
        if constexpr (std::is_same_v<T, bool>)
          binary_loop<T, T>(it, [](M a, M) { return a; });
        else if constexpr (std::is_integral_v<M>)
          binary_loop<T, T>(it, [](M a, M b) { return b == 0 ? M(0) : int_div_wrap(a, b); });  // see floor_div
        else
          binary_loop<T, T>(it, [](M a, M b) { return std::trunc(a / b); });
        break;
      case BinaryOp::DivFloor:
        if constexpr (std::is_same_v<T, bool>)
          binary_loop<T, T>(it, [](M a, M) { return a; });
        else if constexpr (std::is_same_v<M, float>)  // float, Half, BFloat16: Note [Exact float fmod]
          float_fmod_loop<T>(it, [](float a, float b, float mod) { return floor_div_given_mod(a, b, mod); });
        else
          binary_loop<T, T>(it, [](M a, M b) { return floor_div<M>(a, b); });
        break;
      case BinaryOp::Remainder:
        if constexpr (std::is_same_v<T, bool>)
          binary_loop<T, T>(it, [](M, M) { return false; });
        else if constexpr (std::is_same_v<M, float>)  // Note [Exact float fmod]
          float_fmod_loop<T>(it, [](float, float b, float mod) { return python_mod_given_mod(b, mod); });
        else
          binary_loop<T, T>(it, [](M a, M b) { return python_mod<M>(a, b); });
        break;
      case BinaryOp::Pow:
        if constexpr (std::is_integral_v<M>) {
          binary_loop<T, T>(it, [](M a, M b) { return int_pow<M>(a, b); });
        } else {
          // A broadcast exponent torch computes without pow (x ** 2 in a loss): the same formulas,
          // so the same values (sqrt keeps -0 and makes -inf NaN, 1/(x*x) overflows as torch's),
          // and vector code instead of a libm call per element (x ** 2: 15x torch's time before).
          // float16 keeps pow, as torch's.
          const char* e = std::is_same_v<T, Half> ? nullptr : it.broadcast_value(2);
          const M ex = e ? load_as<M>(reinterpret_cast<const T*>(e)) : M(0);
          if (e && ex == M(1))  // (the gradient of x ** 2: x ** 1 took 45x x ** 2's time through Note [Float pow])
            binary_loop<T, T>(it, [](M a, M) { return a; });
          else if (e && ex == M(2))
            binary_loop<T, T>(it, [](M a, M) { return a * a; });
          else if (e && ex == M(3))
            binary_loop<T, T>(it, [](M a, M) { return a * a * a; });
          else if (e && ex == M(0.5))
            binary_loop<T, T>(it, [](M a, M) { return std::sqrt(a); });
          else if (e && ex == M(-0.5))
            binary_loop<T, T>(it, [](M a, M) { return M(1) / std::sqrt(a); });
          else if (e && ex == M(-1))
            binary_loop<T, T>(it, [](M a, M) { return M(1) / a; });
          else if (e && ex == M(-2))
            binary_loop<T, T>(it, [](M a, M) { return M(1) / (a * a); });
          else if (std::is_same_v<T, float> && e && std::isfinite(ex))
            pow_float_loop(it, static_cast<float>(ex));  // Note [Float pow]: correctly rounded, kept over MKL's
          else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            if (!mkl_vml_binary_loop(VmlBinary::Pow, std::is_same_v<T, double>,
                                     it))  // MKL's, as torch's (Note [MKL VML])
              binary_loop<T, T>(it, [](M a, M b) { return std::pow(a, b); });
          } else {
            binary_loop<T, T>(it, [](M a, M b) { return std::pow(a, b); });
          }
        }
        break;
      case BinaryOp::Eq:
        binary_loop<bool, T>(it, [](M a, M b) { return a == b; });
        break;
      case BinaryOp::Ne:
        binary_loop<bool, T>(it, [](M a, M b) { return a != b; });
        break;
      case BinaryOp::Lt:
        binary_loop<bool, T>(it, [](M a, M b) { return a < b; });
        break;
      case BinaryOp::Le:
        binary_loop<bool, T>(it, [](M a, M b) { return a <= b; });
        break;
      case BinaryOp::Gt:
        binary_loop<bool, T>(it, [](M a, M b) { return a > b; });
        break;
      case BinaryOp::Ge:
        binary_loop<bool, T>(it, [](M a, M b) { return a >= b; });
        break;
    }
  }
}

}  // namespace

void EMBER_ISA_KERNEL(binary_kernel)(BinaryOp op, const TensorIter& it, ScalarType compute, Scalar alpha,
                                     const char* name) {
  EMBER_DISPATCH_ALL(compute, name, [&] { run_kernel_t<scalar_t>(op, it, alpha); });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
