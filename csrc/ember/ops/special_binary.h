// Binary special functions with kernels of their own: logaddexp, logaddexp2 and torch.special.zeta
// (ops/special_binary.cpp; as Python compositions of whole-tensor ops they took 1.4-2.6x torch's
// time). Not part of ember.h: include this header where they are used.
#pragma once
#include <cstdint>

#include "ember/core/tensor.h"

namespace ember {

enum class SpecialBinaryOp : uint8_t {
  LogAddExp,   // log(e^a + e^b)
  LogAddExp2,  // log2(2^a + 2^b)
  Zeta,        // the Hurwitz zeta function sum_k (b + k)^-a
};

// op(a, b) with broadcasting and type promotion, into `out` when given (torch's out= rules).
// logaddexp/logaddexp2 take floating types only (NotImplementedError as torch's "logaddexp_cpu"
// otherwise; complex is left to the Python layer); zeta computes integers in the default dtype.
// Differentiable as torch: logaddexp(2) in both inputs, zeta in b only (a gradient for a raises
// NotImplementedError when backward reaches it).
Tensor special_binary(SpecialBinaryOp op, const Tensor& a, const Tensor& b, Tensor out = Tensor());

}  // namespace ember
