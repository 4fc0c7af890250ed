// The 2-d and 3-d grid_sample forward and backward (Note [Vectorized grid_sample taps] in
// cpu/grid_sample_kernels.cpp), compiled per ISA level.
#pragma once
#include <cstdint>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// Input x (N, C, H, W), grid (N, Ho, Wo, 2) and output (N, C, Ho, Wo), Q = Ho * Wo (dims 2, D = 1); or
// x (N, C, D, H, W), grid (N, Do, Ho, Wo, 3) and output (N, C, Do, Ho, Wo), Q = Do * Ho * Wo (dims 3); all
// contiguous, float32 or float64.
struct GridSampleGeometry {
  int dims;
  int64_t N, C, D, H, W, Q;
  bool nearest;  // else bilinear
  int padding;   // 0 zeros, 1 border, 2 reflection
  bool align_corners;
};

EMBER_DECLARE_ISA_KERNEL(void, grid_sample_forward,
                         (ScalarType dt, const GridSampleGeometry& g, const void* x, const void* grid, void* out))
inline void grid_sample_forward(ScalarType dt, const GridSampleGeometry& g, const void* x, const void* grid,
                                void* out) {
  EMBER_ISA_SELECT(grid_sample_forward)(dt, g, x, grid, out);
}

// gin (x's shape, zero-filled by the caller) += the output gradient gout scattered through the taps;
// ggrid (the grid's shape) = the grid gradient (bilinear only: nearest's is zero, left to the
// caller). Either may be null.
EMBER_DECLARE_ISA_KERNEL(void, grid_sample_backward,
                         (ScalarType dt, const GridSampleGeometry& g, const void* x, const void* grid, const void* gout,
                          void* gin, void* ggrid))
inline void grid_sample_backward(ScalarType dt, const GridSampleGeometry& g, const void* x, const void* grid,
                                 const void* gout, void* gin, void* ggrid) {
  EMBER_ISA_SELECT(grid_sample_backward)(dt, g, x, grid, gout, gin, ggrid);
}

}  // namespace ember::cpu
