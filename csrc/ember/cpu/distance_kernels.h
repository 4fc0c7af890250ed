// The pdist kernels (Note [pdist] in ops/distance.cpp), compiled per ISA level.
#pragma once
#include <cstdint>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// out[k] = ||x_i - x_j||_p for the n (n - 1) / 2 pairs i < j of x's n rows of m (contiguous), in
// row-major order; float32 or float64.
EMBER_DECLARE_ISA_KERNEL(void, pdist_forward,
                         (ScalarType dtype, const void* x, void* out, int64_t n, int64_t m, double p))
inline void pdist_forward(ScalarType dtype, const void* x, void* out, int64_t n, int64_t m, double p) {
  EMBER_ISA_SELECT(pdist_forward)(dtype, x, out, n, m, p);
}
// gx (n x m, overwritten) = the gradient of sum_k g[k] dist[k] with respect to x.
EMBER_DECLARE_ISA_KERNEL(void, pdist_backward,
                         (ScalarType dtype, const void* g, const void* x, const void* dist, void* gx, int64_t n,
                          int64_t m, double p))
inline void pdist_backward(ScalarType dtype, const void* g, const void* x, const void* dist, void* gx, int64_t n,
                           int64_t m, double p) {
  EMBER_ISA_SELECT(pdist_backward)(dtype, g, x, dist, gx, n, m, p);
}

}  // namespace ember::cpu
