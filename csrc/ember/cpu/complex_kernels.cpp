// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/complex_kernels.h"

#include <cmath>
#include <complex>
#include <numbers>

#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"

namespace ember::cpu {
namespace {

// Products and quotients written out: std::complex's operators check for NaN results and call
// libgcc's Annex G routines (__mulsc3), which blocks vectorization. The results are those of
// PyTorch's kernels: the plain product, and a quotient scaled by the larger part of the divisor.
template <typename C>
inline C cmul(C a, C b) {
  return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}
template <typename C>
inline C cdiv(C a, C b) {
  using R = typename C::value_type;
  R ar = std::abs(b.real()), ai = std::abs(b.imag());
  R scale = ar >= ai ? ar : ai;
  if (scale == R(0)) return C(a.real() / ar, a.imag() / ai);  // as PyTorch: inf/nan parts
  R a1 = a.real() / scale, b1 = a.imag() / scale, c1 = b.real() / scale, d1 = b.imag() / scale;
  R den = c1 * c1 + d1 * d1;
  return C((a1 * c1 + b1 * d1) / den, (b1 * c1 - a1 * d1) / den);
}

// log(1 + z) accurate near z = 0: |1 + z| = sqrt(1 + x (x + 2) + y^2).
template <typename C>
C clog1p(C z) {
  using R = typename C::value_type;
  R x = z.real(), y = z.imag();
  R theta = std::atan2(y, x + R(1));
  if (std::abs(z) < R(0.5)) {
    R r = x * (R(2) + x) + y * y;
    if (r == R(0)) return C(x, theta);
    return C(R(0.5) * std::log1p(r), theta);
  }
  return C(std::log(std::hypot(x + R(1), y)), theta);
}
// exp(z) - 1 accurate near z = 0: e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y / 2).
template <typename C>
C cexpm1(C z) {
  using R = typename C::value_type;
  R x = z.real(), y = z.imag();
  R s = std::sin(y / R(2));
  return C(std::expm1(x) * std::cos(y) - R(2) * s * s, std::exp(x) * std::sin(y));
}

template <typename C>
void unary_t(UnaryOp op, const TensorIter& it, const UnaryParams& p) {
  using R = typename C::value_type;
  auto run = [&](auto f) { unary_loop<C, C>(it, f); };
  switch (op) {
    case UnaryOp::Abs:
      unary_loop<R, C>(it, [](C z) { return std::abs(z); });
      break;
    case UnaryOp::Sgn:
      run([](C z) {
        R a = std::abs(z);
        return a == R(0) ? C(0) : C(z.real() / a, z.imag() / a);
      });
      break;
    case UnaryOp::Neg:
      run([](C z) { return -z; });
      break;
    case UnaryOp::Exp:
      run([](C z) { return std::exp(z); });
      break;
    case UnaryOp::Exp2:
      run([](C z) { return std::exp(z * R(std::numbers::ln2)); });
      break;
    case UnaryOp::Expm1:
      run([](C z) { return cexpm1(z); });
      break;
    case UnaryOp::Log:
      run([](C z) { return std::log(z); });
      break;
    case UnaryOp::Log2:
      run([](C z) { return std::log(z) / R(std::numbers::ln2); });
      break;
    case UnaryOp::Log10:
      run([](C z) { return std::log10(z); });
      break;
    case UnaryOp::Log1p:
      run([](C z) { return clog1p(z); });
      break;
    case UnaryOp::Sqrt:
      run([](C z) { return std::sqrt(z); });
      break;
    case UnaryOp::Rsqrt:
      run([](C z) { return cdiv(C(1), std::sqrt(z)); });
      break;
    case UnaryOp::Square:
      run([](C z) { return cmul(z, z); });
      break;
    case UnaryOp::Reciprocal:
      run([](C z) { return cdiv(C(1), z); });
      break;
    case UnaryOp::Sin:
      run([](C z) { return std::sin(z); });
      break;
    case UnaryOp::Cos:
      run([](C z) { return std::cos(z); });
      break;
    case UnaryOp::Tan:
      run([](C z) { return std::tan(z); });
      break;
    case UnaryOp::Asin:
      run([](C z) { return std::asin(z); });
      break;
    case UnaryOp::Acos:
      run([](C z) { return std::acos(z); });
      break;
    case UnaryOp::Atan:
      run([](C z) { return std::atan(z); });
      break;
    case UnaryOp::Sinh:
      run([](C z) { return std::sinh(z); });
      break;
    case UnaryOp::Cosh:
      run([](C z) { return std::cosh(z); });
      break;
    case UnaryOp::Tanh:
      run([](C z) { return std::tanh(z); });
      break;
    case UnaryOp::Asinh:
      run([](C z) { return std::asinh(z); });
      break;
    case UnaryOp::Acosh:
      run([](C z) { return std::acosh(z); });
      break;
    case UnaryOp::Atanh:
      run([](C z) { return std::atanh(z); });
      break;
    case UnaryOp::Sigmoid:
      run([](C z) { return cdiv(C(1), C(1) + std::exp(-z)); });
      break;
    case UnaryOp::Silu:
      run([](C z) { return cdiv(z, C(1) + std::exp(-z)); });
      break;
    case UnaryOp::Isnan:
      unary_loop<bool, C>(it, [](C z) { return std::isnan(z.real()) || std::isnan(z.imag()); });
      break;
    case UnaryOp::Isinf:
      unary_loop<bool, C>(it, [](C z) { return std::isinf(z.real()) || std::isinf(z.imag()); });
      break;
    case UnaryOp::Isfinite:
      unary_loop<bool, C>(it, [](C z) { return std::isfinite(z.real()) && std::isfinite(z.imag()); });
      break;
    case UnaryOp::LogicalNot:
      unary_loop<bool, C>(it, [](C z) { return z == C(0); });
      break;
    case UnaryOp::NanToNum: {  // each part on its own, with the real type's defaults
      const R big = std::numeric_limits<R>::max();
      const R nan = static_cast<R>(p.p0), pos = p.has_p1 ? static_cast<R>(p.p1) : big;
      const R neg = p.has_p2 ? static_cast<R>(p.p2) : -big;
      auto fix = [=](R x) { return std::isnan(x) ? nan : (std::isinf(x) ? (x > 0 ? pos : neg) : x); };
      run([=](C z) { return C(fix(z.real()), fix(z.imag())); });
      break;
    }
    default:
      EMBER_NOT_IMPLEMENTED("\"", unary_op_name(op), "\" not implemented for '", dtype_name(CppTypeToScalar<C>::value),
                            "'");
  }
}

template <typename C>
void binary_t(BinaryOp op, const TensorIter& it, Scalar alpha) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      C al = alpha.to<C>();
      if (op == BinaryOp::Sub) al = -al;
      if (al == C(1))
        binary_loop<C, C>(it, [](C a, C b) { return C(a.real() + b.real(), a.imag() + b.imag()); });
      else
        binary_loop<C, C>(it, [al](C a, C b) { return a + cmul(al, b); });
      break;
    }
    case BinaryOp::Mul:
      binary_loop<C, C>(it, [](C a, C b) { return cmul(a, b); });
      break;
    case BinaryOp::Div:
      binary_loop<C, C>(it, [](C a, C b) { return cdiv(a, b); });
      break;
    case BinaryOp::Pow:
      binary_loop<C, C>(it, [](C a, C b) {
        if (b == C(0)) return C(1);
        if (b == C(2)) return cmul(a, a);
        return std::pow(a, b);
      });
      break;
    case BinaryOp::Eq:
      binary_loop<bool, C>(it, [](C a, C b) { return a == b; });
      break;
    case BinaryOp::Ne:
      binary_loop<bool, C>(it, [](C a, C b) { return a != b; });
      break;
    default:
      EMBER_NOT_IMPLEMENTED("binary op not implemented for '", dtype_name(CppTypeToScalar<C>::value), "'");
  }
}

}  // namespace

#if EMBER_ISA_LEVEL == 0  // not a kernel: defined once
bool complex_unary_supported(UnaryOp op) {
  switch (op) {
    case UnaryOp::Silu:
    case UnaryOp::Abs:
    case UnaryOp::Sgn:
    case UnaryOp::Neg:
    case UnaryOp::Exp:
    case UnaryOp::Exp2:
    case UnaryOp::Expm1:
    case UnaryOp::Log:
    case UnaryOp::Log2:
    case UnaryOp::Log10:
    case UnaryOp::Log1p:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Square:
    case UnaryOp::Reciprocal:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Tan:
    case UnaryOp::Asin:
    case UnaryOp::Acos:
    case UnaryOp::Atan:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Tanh:
    case UnaryOp::Asinh:
    case UnaryOp::Acosh:
    case UnaryOp::Atanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Isnan:
    case UnaryOp::Isinf:
    case UnaryOp::Isfinite:
    case UnaryOp::LogicalNot:
    case UnaryOp::NanToNum:
      return true;
    default:
      return false;
  }
}
#endif

void EMBER_ISA_KERNEL(complex_unary_kernel)(UnaryOp op, const TensorIter& it, ScalarType compute,
                                            const UnaryParams& p) {
  EMBER_DISPATCH_COMPLEX(compute, unary_op_name(op), [&] { unary_t<scalar_t>(op, it, p); });
}

void EMBER_ISA_KERNEL(complex_binary_kernel)(BinaryOp op, const TensorIter& it, ScalarType compute, Scalar alpha) {
  EMBER_DISPATCH_COMPLEX(compute, "binary", [&] { binary_t<scalar_t>(op, it, alpha); });
}

void EMBER_ISA_KERNEL(complex_angle_kernel)(const TensorIter& it, ScalarType compute) {
  EMBER_DISPATCH_COMPLEX(compute, "angle", [&] {
    using R = typename scalar_t::value_type;
    unary_loop<R, scalar_t>(it, [](scalar_t z) { return std::atan2(z.imag(), z.real()); });
  });
}

void EMBER_ISA_KERNEL(complex_from_parts_kernel)(const TensorIter& it, ScalarType compute) {
  EMBER_DISPATCH_COMPLEX(compute, "complex", [&] {
    using R = typename scalar_t::value_type;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      for (int64_t k = 0; k < n; ++k)
        *reinterpret_cast<scalar_t*>(d[0] + k * s[0]) =
            scalar_t(*reinterpret_cast<const R*>(d[1] + k * s[1]), *reinterpret_cast<const R*>(d[2] + k * s[2]));
    });
  });
}

void EMBER_ISA_KERNEL(conj_kernel)(const TensorIter& it, ScalarType compute) {
  EMBER_DISPATCH_COMPLEX(compute, "conj", [&] {
    unary_loop<scalar_t, scalar_t>(it, [](scalar_t z) { return scalar_t(z.real(), -z.imag()); });
  });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
