// The sum reduction over the (outer, R, inner) layout of Note [Reduction layout]
// (ops/reduce_utils.h), for ops/reduce.cpp.
#pragma once
#include "ember/core/tensor.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// dst (contiguous (outer, inner), its own dtype) = sum over R of src (contiguous (outer, R, inner)).
EMBER_DECLARE_ISA_KERNEL(void, sum_kernel, (const Tensor& src, Tensor& dst, int64_t outer, int64_t R, int64_t inner))
inline void sum_kernel(const Tensor& src, Tensor& dst, int64_t outer, int64_t R, int64_t inner) {
  EMBER_ISA_SELECT(sum_kernel)(src, dst, outer, R, inner);
}

// y = cumsum (prod: cumprod) of x along R over the (outer, R, inner) layout, x and y contiguous
// float32 or float64 of one dtype, the running value in double (ops/scan.cpp; here so its loop
// runs at the vector ISA levels).
EMBER_DECLARE_ISA_KERNEL(void, scan_float_kernel,
                         (bool prod, const Tensor& x, Tensor& y, int64_t outer, int64_t R, int64_t inner))
inline void scan_float_kernel(bool prod, const Tensor& x, Tensor& y, int64_t outer, int64_t R, int64_t inner) {
  EMBER_ISA_SELECT(scan_float_kernel)(prod, x, y, outer, R, inner);
}

}  // namespace ember::cpu
