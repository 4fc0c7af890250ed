// The reductions of ops/reduce_ops.cpp beyond sum (max/min, products, nansum, all/any,
// count_nonzero, vector norms, arg max/min, logsumexp) over the (outer, R, inner) layout of
// Note [Reduction layout] (ops/reduce_utils.h). Compiled once per ISA level (Note [Multi-ISA
// kernels] in isa.h): at the portable baseline their float loops were scalar compares and
// branches (amax of 4096x4096 rows: 18x torch's time).
#pragma once
#include "ember/core/tensor.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

enum class Reduction {
  Max,
  Min,
  NanSum,
  Prod,
  All,
  Any,
  CountNonzero,
  Norm0,
  Norm1,
  Norm2,
  NormInf,
  NormNegInf,
  NormP
};

// out (contiguous (outer, inner)) = the reduction over R of x (contiguous (outer, R, inner)).
// out's dtype: x's for Max/Min/NanSum/the norms; x's or (integral x) int64 for Prod (complex x
// too); bool for All/Any; int64 for CountNonzero. p: NormP's order. name: the op, for errors.
EMBER_DECLARE_ISA_KERNEL(void, reduce_kernel,
                         (Reduction r, const Tensor& x, Tensor& out, int64_t outer, int64_t R, int64_t inner, double p,
                          const char* name))
inline void reduce_kernel(Reduction r, const Tensor& x, Tensor& out, int64_t outer, int64_t R, int64_t inner, double p,
                          const char* name) {
  EMBER_ISA_SELECT(reduce_kernel)(r, x, out, outer, R, inner, p, name);
}

// indices (int64) and, unless undefined, values (x's dtype) of the max (or min) over R; the
// first index of the extreme value, a NaN winning.
EMBER_DECLARE_ISA_KERNEL(void, arg_reduce_kernel,
                         (bool max, const Tensor& x, Tensor& values, Tensor& indices, int64_t outer, int64_t R,
                          int64_t inner, const char* name))
inline void arg_reduce_kernel(bool max, const Tensor& x, Tensor& values, Tensor& indices, int64_t outer, int64_t R,
                              int64_t inner, const char* name) {
  EMBER_ISA_SELECT(arg_reduce_kernel)(max, x, values, indices, outer, R, inner, name);
}

// out = log(sum(exp(x))) over R, floating x (out of x's dtype).
EMBER_DECLARE_ISA_KERNEL(void, logsumexp_kernel,
                         (const Tensor& x, Tensor& out, int64_t outer, int64_t R, int64_t inner))
inline void logsumexp_kernel(const Tensor& x, Tensor& out, int64_t outer, int64_t R, int64_t inner) {
  EMBER_ISA_SELECT(logsumexp_kernel)(x, out, outer, R, inner);
}

}  // namespace ember::cpu
