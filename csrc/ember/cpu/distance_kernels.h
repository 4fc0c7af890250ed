// The pdist and cdist kernels (Note [pdist] in ops/distance.cpp), compiled per ISA level.
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

// cdist: out (B, P, R) = ||x1[b, i] - x2[b, j]||_p for x1 (B, P, M) and x2 (B, R, M), contiguous.
EMBER_DECLARE_ISA_KERNEL(void, cdist_forward,
                         (ScalarType dtype, const void* x1, const void* x2, void* out, int64_t B, int64_t P, int64_t R,
                          int64_t M, double p))
inline void cdist_forward(ScalarType dtype, const void* x1, const void* x2, void* out, int64_t B, int64_t P, int64_t R,
                          int64_t M, double p) {
  EMBER_ISA_SELECT(cdist_forward)(dtype, x1, x2, out, B, P, R, M, p);
}
// gx1 (B, P, M) and gx2 (B, R, M), each overwritten unless null: the gradients of sum g * dist with respect
// to x1 and x2, g and dist (B, P, R), all contiguous.
EMBER_DECLARE_ISA_KERNEL(void, cdist_backward,
                         (ScalarType dtype, const void* g, const void* x1, const void* x2, const void* dist, void* gx1,
                          void* gx2, int64_t B, int64_t P, int64_t R, int64_t M, double p))
inline void cdist_backward(ScalarType dtype, const void* g, const void* x1, const void* x2, const void* dist, void* gx1,
                           void* gx2, int64_t B, int64_t P, int64_t R, int64_t M, double p) {
  EMBER_ISA_SELECT(cdist_backward)(dtype, g, x1, x2, dist, gx1, gx2, B, P, R, M, p);
}

}  // namespace ember::cpu
