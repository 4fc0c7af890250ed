// Convolution kernels (CPU): im2col/vol2col + BLAS GEMM. The ops in ops/nn_conv.cpp decide
// shapes and record autograd; these only compute, on contiguous float/double buffers.
#pragma once
#include <cstdint>

#include "ember/core/dtype.h"

namespace ember::cpu {

// Note [Conv geometry]: every convolution is described as a 3-d one (1-d and 2-d ones pad the
// leading spatial dims with size 1, kernel 1, stride 1, padding 0, dilation 1). `in` is the
// convolution's input (for a transposed convolution: its output), `out` the convolution's output.
// pad is the padding before each dim; the padding after it is implied by `out` (so 'same'
// convolutions with odd total padding need no padded copy). Inputs are (N, c_in, in...), outputs
// (N, c_out, out...), weights (c_out, c_in / groups, k...), all contiguous.
struct ConvGeometry {
  int64_t batch = 1, c_in = 1, c_out = 1, groups = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};
};

// y = conv(x, w) + b (b may be null).
void conv_forward(ScalarType dtype, const void* x, const void* w, const void* b, void* y, const ConvGeometry& g);
// gx = conv's input gradient for gy (= the transposed convolution of gy by w), plus b per
// channel of gx when b is not null (the bias of a transposed convolution).
void conv_backward_input(ScalarType dtype, const void* gy, const void* w, const void* b, void* gx,
                         const ConvGeometry& g);
// gw = conv's weight gradient: sum over the batch of gy correlated with x.
void conv_backward_weight(ScalarType dtype, const void* x, const void* gy, void* gw, const ConvGeometry& g);

// F.unfold / F.fold: col (N, c_in * K, L) <- x (N, c_in, in...) and its adjoint (x overwritten
// with the sum of the blocks). Only batch, c_in, in, out, k, stride, pad, dil are read.
void im2col(ScalarType dtype, const void* x, void* col, const ConvGeometry& g);
void col2im(ScalarType dtype, const void* col, void* x, const ConvGeometry& g);

}  // namespace ember::cpu
