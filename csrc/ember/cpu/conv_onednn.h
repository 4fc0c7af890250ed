// float32 convolution through oneDNN (Note [oneDNN convolution] in conv_onednn.cpp). Each
// function returns false, having done nothing, when oneDNN is switched off or measured slower
// than im2col for the geometry (few input channels); the caller then uses the im2col kernels.
#pragma once
#include "ember/cpu/conv_kernels.h"

namespace ember::cpu {

bool onednn_conv_forward(const float* x, const float* w, const float* b, float* y, const ConvGeometry& g);
bool onednn_conv_backward_input(const float* gy, const float* w, const float* b, float* gx, const ConvGeometry& g);
bool onednn_conv_backward_weight(const float* x, const float* gy, float* gw, const ConvGeometry& g);

// ember.backends.mkldnn.enabled (as torch.backends.mkldnn): on by default.
void set_onednn_enabled(bool enabled);
bool onednn_enabled();

}  // namespace ember::cpu
