// Kernels of the arithmetic and comparison family (ops/binary.cpp) for real and bool dtypes;
// complex ones are in complex_kernels.h.
#pragma once
#include "ember/cpu/isa.h"
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember::cpu {

// out = op(a, b) over the iterator, computed in `compute` (comparisons write bool). `name`
// names the op in the error for an unsupported dtype.
EMBER_DECLARE_ISA_KERNEL(void, binary_kernel,
                         (BinaryOp op, const TensorIter& it, ScalarType compute, Scalar alpha, const char* name))
inline void binary_kernel(BinaryOp op, const TensorIter& it, ScalarType compute, Scalar alpha, const char* name) {
  EMBER_ISA_SELECT(binary_kernel)(op, it, compute, alpha, name);
}

}  // namespace ember::cpu
