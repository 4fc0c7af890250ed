// The kernels of ops/special_binary.cpp (logaddexp, logaddexp2, zeta), compiled per ISA level.
#pragma once
#include "ember/cpu/isa.h"
#include "ember/cpu/iter.h"
#include "ember/ops/special_binary.h"

namespace ember::cpu {

// out = op(a, b) over the iterator (out, a, b), every operand of the floating dtype `dt`.
EMBER_DECLARE_ISA_KERNEL(void, special_binary_kernel, (SpecialBinaryOp op, const TensorIter& it, ScalarType dt))
inline void special_binary_kernel(SpecialBinaryOp op, const TensorIter& it, ScalarType dt) {
  EMBER_ISA_SELECT(special_binary_kernel)(op, it, dt);
}

}  // namespace ember::cpu
