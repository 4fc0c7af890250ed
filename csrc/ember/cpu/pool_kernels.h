// Pooling kernels (CPU) on contiguous (planes, spatial...) float/double buffers; the ops in
// ops/nn_pool.cpp check arguments, pick shapes and record autograd.
#pragma once
#include <cstdint>

#include "ember/core/dtype.h"

namespace ember::cpu {

// Note [Pool geometry]: as Note [Conv geometry], every pool is a 3-d one over `planes`
// independent (batch x channel) planes. Windows are either strided (start = o * stride - pad,
// k taps `dil` apart) or adaptive (floor(o * in / out) to ceil((o + 1) * in / out)).
struct PoolGeometry {
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
  bool adaptive = false;
};

// y = max over each window, idx = the flat spatial index of the (first) maximum; NaN wins.
// Whether max_pool takes bfloat16 as it is for this geometry (2x2 windows, stride 2: a max
// selects, so no float copy is needed); otherwise callers pass float32.
bool max_pool_takes_bf16(const PoolGeometry& g);
void max_pool(ScalarType dtype, const void* x, void* y, int64_t* idx, const PoolGeometry& g);
// The adjoint of max_pool: each plane of gx (in_l elements, overwritten) gets gy's out_l values
// added at their idx. Indices outside [0, in_l) throw.
void max_pool_backward(ScalarType dtype, const void* gy, const int64_t* idx, void* gx, int64_t planes, int64_t in_l,
                       int64_t out_l);
// y = the window's mean: divisor_override when nonzero, else the window's size counting padding
// (count_include_pad, windows clipped to the padded input) or only the input's elements.
// Adaptive windows always divide by their size.
void avg_pool(ScalarType dtype, const void* x, void* y, const PoolGeometry& g, bool count_include_pad,
              int64_t divisor_override);
// The adjoint of avg_pool: gx = each gy spread evenly over its window (gx is overwritten).
void avg_pool_backward(ScalarType dtype, const void* gy, void* gx, const PoolGeometry& g, bool count_include_pad,
                       int64_t divisor_override);

}  // namespace ember::cpu

namespace ember::cpu {

// One dim of separable resampling (F.interpolate): x viewed as (outer, in, inner), y as
// (outer, out, inner), y[:, o, :] = sum_j w[j * out + o] * x[:, idx[j * out + o], :] over ntaps
// taps; resample_backward is its adjoint (gx overwritten).
void resample(ScalarType dtype, const void* x, void* y, int64_t outer, int64_t in, int64_t out, int64_t inner,
              int ntaps, const int64_t* idx, const double* w);
void resample_backward(ScalarType dtype, const void* gy, void* gx, int64_t outer, int64_t in, int64_t out,
                       int64_t inner, int ntaps, const int64_t* idx, const double* w);

}  // namespace ember::cpu
