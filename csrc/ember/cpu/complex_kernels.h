// Kernels for complex64/complex128 inputs, kept apart from the real kernels so that only the
// ops that support complex pay for complex instantiations.
#pragma once
#include "ember/cpu/isa.h"
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember::cpu {

// Whether the unary family supports `op` on complex inputs (as PyTorch on CPU does).
bool complex_unary_supported(UnaryOp op);
// op(input) for a complex input of dtype `compute`; the output is complex, real (abs) or bool
// (predicates), as the iterator's output says.
EMBER_DECLARE_ISA_KERNEL(void, complex_unary_kernel,
                         (UnaryOp op, const TensorIter& it, ScalarType compute, const UnaryParams& p))
inline void complex_unary_kernel(UnaryOp op, const TensorIter& it, ScalarType compute, const UnaryParams& p) {
  EMBER_ISA_SELECT(complex_unary_kernel)(op, it, compute, p);
}
// Add/Sub/Mul/Div/Pow/Eq/Ne on complex operands of dtype `compute`.
EMBER_DECLARE_ISA_KERNEL(void, complex_binary_kernel,
                         (BinaryOp op, const TensorIter& it, ScalarType compute, Scalar alpha))
inline void complex_binary_kernel(BinaryOp op, const TensorIter& it, ScalarType compute, Scalar alpha) {
  EMBER_ISA_SELECT(complex_binary_kernel)(op, it, compute, alpha);
}
// angle(z) for complex z (real output).
EMBER_DECLARE_ISA_KERNEL(void, complex_angle_kernel, (const TensorIter& it, ScalarType compute))
inline void complex_angle_kernel(const TensorIter& it, ScalarType compute) {
  EMBER_ISA_SELECT(complex_angle_kernel)(it, compute);
}
// real + i * imag: inputs of the real dtype, output complex.
EMBER_DECLARE_ISA_KERNEL(void, complex_from_parts_kernel, (const TensorIter& it, ScalarType compute))
inline void complex_from_parts_kernel(const TensorIter& it, ScalarType compute) {
  EMBER_ISA_SELECT(complex_from_parts_kernel)(it, compute);
}
// conj(z).
EMBER_DECLARE_ISA_KERNEL(void, conj_kernel, (const TensorIter& it, ScalarType compute))
inline void conj_kernel(const TensorIter& it, ScalarType compute) { EMBER_ISA_SELECT(conj_kernel)(it, compute); }

}  // namespace ember::cpu
