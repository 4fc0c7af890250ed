// oneDNN glue (onednn.cpp): float32 and bfloat16 convolutions (Note [oneDNN convolution]) and
// bfloat16 matrix products. float32 convolution through oneDNN: Each
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

// Note [bfloat16 matmul]: c (B, m, n, contiguous) = a (B, m, k) @ b (B, k, n) in bfloat16 with
// float32 accumulation, on oneDNN's matmul (AVX512_BF16 dot products where the CPU has them).
// Strides in elements; batch strides must not be 0 unless B is 1. Only when
// onednn_bf16_available().
// `bias`, when given, is n bfloat16 values added to every row in float before c is rounded.
void onednn_matmul_bf16(const BFloat16* a, const int64_t a_strides[3], const BFloat16* b, const int64_t b_strides[3],
                        BFloat16* c, int64_t B, int64_t m, int64_t n, int64_t k, const BFloat16* bias = nullptr);

// The same in float32 (Note [float32 matmul on oneDNN] in ops/linalg.cpp says when: only where
// onednn_matmul_f32_available(), AVX-512 and up); `bias`, when
// given, is n floats added to every row of c inside the product (addmm's fused path).
void onednn_matmul_f32(const float* a, const int64_t a_strides[3], const float* b, const int64_t b_strides[3], float* c,
                       int64_t B, int64_t m, int64_t n, int64_t k, const float* bias = nullptr);

bool onednn_matmul_f32_available();

// The same on this thread alone (a primitive made for one thread, so oneDNN splits no k), callable
// inside a parallel region: the pieces of Note [Deterministic GEMM threading]. c's rows are ldc
// apart (its batch stride m * ldc); no bias.
void onednn_matmul_f32_one_thread(const float* a, const int64_t a_strides[3], const float* b,
                                  const int64_t b_strides[3], float* c, int64_t B, int64_t m, int64_t n, int64_t k,
                                  int64_t ldc);

// ember.backends.mkldnn.enabled (as torch.backends.mkldnn): on by default.
void set_onednn_enabled(bool enabled);
bool onednn_enabled();

}  // namespace ember::cpu
