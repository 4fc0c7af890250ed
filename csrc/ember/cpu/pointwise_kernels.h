// Kernels of the binary pointwise family (ops/pointwise.cpp: maximum, fmod, bitwise ops, ...).
#pragma once
#include "ember/cpu/isa.h"
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember::cpu {

// out = op(a, b) over the iterator in dtype `compute` (bool out for the logical ops); `name`
// names the op in the error for an unsupported dtype; p0, p1, p2: the parametrized ops' parameters.
EMBER_DECLARE_ISA_KERNEL(void, pointwise_binary_kernel,
                         (PointwiseOp op, const TensorIter& it, ScalarType compute, const char* name, double p0,
                          double p1, double p2))
inline void pointwise_binary_kernel(PointwiseOp op, const TensorIter& it, ScalarType compute, const char* name,
                                    double p0 = 0.0, double p1 = 0.0, double p2 = 0.0) {
  EMBER_ISA_SELECT(pointwise_binary_kernel)(op, it, compute, name, p0, p1, p2);
}

// out = cond ? x : y over the iterator (out, cond, x, y); out, x and y of dtype `dt`, cond bool.
EMBER_DECLARE_ISA_KERNEL(void, where_kernel, (const TensorIter& it, ScalarType dt))
inline void where_kernel(const TensorIter& it, ScalarType dt) { EMBER_ISA_SELECT(where_kernel)(it, dt); }

// The ternary ops of ops/pointwise.cpp: out = lerp(x, y, w) (float and complex), x + value * y * z,
// x + value * y / z (numeric and complex), clamp(x, lo, hi) (all real dtypes); every operand of
// dtype `dt`.
enum class TernaryOp { Lerp, Addcmul, Addcdiv, Clamp };
EMBER_DECLARE_ISA_KERNEL(void, ternary_kernel, (TernaryOp op, const TensorIter& it, ScalarType dt, Scalar value))
inline void ternary_kernel(TernaryOp op, const TensorIter& it, ScalarType dt, Scalar value) {
  EMBER_ISA_SELECT(ternary_kernel)(op, it, dt, value);
}

}  // namespace ember::cpu
