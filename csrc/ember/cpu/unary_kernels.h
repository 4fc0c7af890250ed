// Kernels of the unary family (ops/unary.cpp): one functor per op over a TensorIter whose
// input already has the compute dtype.
#pragma once
#include "ember/cpu/isa.h"
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember::cpu {

// Writes op(input) to the iterator's output: dtype `compute`, or bool for predicates.
EMBER_DECLARE_ISA_KERNEL(void, unary_kernel,
                         (UnaryOp op, const TensorIter& it, ScalarType compute, const UnaryParams& p))
inline void unary_kernel(UnaryOp op, const TensorIter& it, ScalarType compute, const UnaryParams& p) {
  EMBER_ISA_SELECT(unary_kernel)(op, it, compute, p);
}

}  // namespace ember::cpu
