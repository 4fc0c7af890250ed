// C++ operator overloads so C++ code reads like Python: a + b, a * 2.0, -a.
#pragma once
#include "ember/ops/ops.h"

namespace ember {

inline Tensor wrap_scalar(Scalar s) { return scalar_tensor(s, std::nullopt, /*wrapped=*/true); }

#define EMBER_BINARY_OPERATOR(sym, fn)                                                    \
  inline Tensor operator sym(const Tensor& a, const Tensor& b) { return fn(a, b); }       \
  inline Tensor operator sym(const Tensor& a, Scalar b) { return fn(a, wrap_scalar(b)); } \
  inline Tensor operator sym(Scalar a, const Tensor& b) { return fn(wrap_scalar(a), b); }
EMBER_BINARY_OPERATOR(+, add)
EMBER_BINARY_OPERATOR(-, sub)
EMBER_BINARY_OPERATOR(*, mul)
EMBER_BINARY_OPERATOR(/, div)
EMBER_BINARY_OPERATOR(%, remainder)
EMBER_BINARY_OPERATOR(==, eq)
EMBER_BINARY_OPERATOR(!=, ne)
EMBER_BINARY_OPERATOR(<, lt)
EMBER_BINARY_OPERATOR(<=, le)
EMBER_BINARY_OPERATOR(>, gt)
EMBER_BINARY_OPERATOR(>=, ge)
#undef EMBER_BINARY_OPERATOR
inline Tensor operator-(const Tensor& a) { return neg(a); }

#define EMBER_INPLACE_OPERATOR(sym, op)                     \
  inline Tensor& operator sym(Tensor& a, const Tensor& b) { \
    binary_op(BinaryOp::op, a, b, a, /*inplace=*/true);     \
    return a;                                               \
  }                                                         \
  inline Tensor& operator sym(Tensor& a, Scalar b) { return a sym wrap_scalar(b); }
EMBER_INPLACE_OPERATOR(+=, Add)
EMBER_INPLACE_OPERATOR(-=, Sub)
EMBER_INPLACE_OPERATOR(*=, Mul)
EMBER_INPLACE_OPERATOR(/=, Div)
#undef EMBER_INPLACE_OPERATOR

}  // namespace ember
