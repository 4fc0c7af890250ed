// Kernels for complex64/complex128 inputs, kept apart from the real kernels so that only the
// ops that support complex pay for complex instantiations.
#pragma once
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember::cpu {

// Whether the unary family supports `op` on complex inputs (as PyTorch on CPU does).
bool complex_unary_supported(UnaryOp op);
// op(input) for a complex input of dtype `compute`; the output is complex, real (abs) or bool
// (predicates), as the iterator's output says.
void complex_unary_kernel(UnaryOp op, const TensorIter& it, ScalarType compute, const UnaryParams& p);
// Add/Sub/Mul/Div/Pow/Eq/Ne on complex operands of dtype `compute`.
void complex_binary_kernel(BinaryOp op, const TensorIter& it, ScalarType compute, Scalar alpha);
// angle(z) for complex z (real output).
void complex_angle_kernel(const TensorIter& it, ScalarType compute);
// real + i * imag: inputs of the real dtype, output complex.
void complex_from_parts_kernel(const TensorIter& it, ScalarType compute);
// conj(z).
void conj_kernel(const TensorIter& it, ScalarType compute);

}  // namespace ember::cpu
