// float32 convolution through oneDNN (Note [oneDNN convolution] in conv_onednn.cpp). Each
// function returns false, having done nothing, when oneDNN is switched off or measured slower
// than im2col for the geometry (few input channels); the caller then uses the im2col kernels.
#pragma once
#include "ember/core/half.h"
#include "ember/cpu/conv_kernels.h"

namespace ember::cpu {

bool onednn_conv_forward(const float* x, const float* w, const float* b, float* y, const ConvGeometry& g);
bool onednn_conv_backward_input(const float* gy, const float* w, const float* b, float* gx, const ConvGeometry& g);
bool onednn_conv_backward_weight(const float* x, const float* gy, float* gw, const ConvGeometry& g);

// bfloat16 convolutions (Note [bfloat16 convolution]): available when oneDNN is on and has JIT
// kernels for bfloat16 on this CPU (AVX-512 and up); the caller converts to float32 otherwise.
bool onednn_bf16_available();
void onednn_conv_forward_bf16(const BFloat16* x, const BFloat16* w, const BFloat16* b, BFloat16* y,
                              const ConvGeometry& g);
void onednn_conv_backward_input_bf16(const BFloat16* gy, const BFloat16* w, const BFloat16* b, BFloat16* gx,
                                     const ConvGeometry& g);
void onednn_conv_backward_weight_bf16(const BFloat16* x, const BFloat16* gy, BFloat16* gw, const ConvGeometry& g);

// ember.backends.mkldnn.enabled (as torch.backends.mkldnn): on by default.
void set_onednn_enabled(bool enabled);
bool onednn_enabled();

}  // namespace ember::cpu
