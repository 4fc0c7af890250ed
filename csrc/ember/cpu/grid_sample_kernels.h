// The vectorized bilinear grid_sample forward (Note [Vectorized grid_sample taps] in
// cpu/grid_sample_kernels.cpp), compiled per ISA level.
#pragma once
#include <cstdint>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// out (N, C, Ho, Wo) = bilinear samples of x (N, C, H, W) at grid (N, Ho, Wo, 2), Q = Ho * Wo, all
// contiguous float32 or float64 (dt); padding 0 (zeros) or 1 (border); H * W below 2^31.
EMBER_DECLARE_ISA_KERNEL(void, grid_sample_bilinear,
                         (ScalarType dt, const void* x, const void* grid, void* out, int64_t N, int64_t C, int64_t H,
                          int64_t W, int64_t Q, int padding, bool align_corners))
inline void grid_sample_bilinear(ScalarType dt, const void* x, const void* grid, void* out, int64_t N, int64_t C,
                                 int64_t H, int64_t W, int64_t Q, int padding, bool align_corners) {
  EMBER_ISA_SELECT(grid_sample_bilinear)(dt, x, grid, out, N, C, H, W, Q, padding, align_corners);
}

}  // namespace ember::cpu
