// Softmax and log-softmax over the (outer, R, inner) layout of Note [Reduction layout]
// (ops/reduce_utils.h), for ops/softmax.cpp.
#pragma once
#include "ember/core/tensor.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// y = softmax(x) (log_softmax when `log`) over R for each (outer, inner) position; x and y are
// contiguous of one floating dtype. `name` names the kernel in the error for another dtype.
EMBER_DECLARE_ISA_KERNEL(void, softmax_kernel,
                         (const Tensor& x, Tensor& y, int64_t outer, int64_t R, int64_t inner, bool log,
                          const char* name))
inline void softmax_kernel(const Tensor& x, Tensor& y, int64_t outer, int64_t R, int64_t inner, bool log,
                           const char* name) {
  EMBER_ISA_SELECT(softmax_kernel)(x, y, outer, R, inner, log, name);
}

// The gradient of softmax (log_softmax when `log`) along contiguous rows of R (inner == 1), from
// the output y and its gradient g: gx = y (g - sum(g y)), or g - exp(y) sum(g). All three are
// contiguous of one float or double dtype.
EMBER_DECLARE_ISA_KERNEL(void, softmax_backward_kernel,
                         (const Tensor& g, const Tensor& y, Tensor& gx, int64_t rows, int64_t R, bool log))
inline void softmax_backward_kernel(const Tensor& g, const Tensor& y, Tensor& gx, int64_t rows, int64_t R, bool log) {
  EMBER_ISA_SELECT(softmax_backward_kernel)(g, y, gx, rows, R, log);
}

}  // namespace ember::cpu
