// Neural-network functional ops (torch.nn.functional's C++ side): convolution, pooling.
// Each records its backward formula, written with ember ops, so double backward works.
#pragma once
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// ---- convolution (ops/nn_conv.cpp; kernels in cpu/conv_kernels.cpp) ----
// torch.convolution: input (N, C, *) or unbatched (C, *), weight (C_out, C_in / groups, k...) or,
// transposed, (C_in, C_out / groups, k...); bias undefined for none. stride/padding/dilation/
// output_padding hold one value or one per spatial dim.
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
// padding "same" (output as large as the input; stride 1 only) or "valid" (no padding).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});

}  // namespace ember

namespace ember {

// ---- pooling (ops/nn_pool.cpp; kernels in cpu/pool_kernels.cpp) ----
// nd = number of spatial dims (1-3); input (N, C, *) or unbatched (C, *). kernel_size, stride
// (empty: the kernel size), padding and dilation hold one value or nd values. Indices are flat
// positions within each (n, c) plane, as torch's.
std::tuple<Tensor, Tensor> max_pool_with_indices(const Tensor& input, int64_t nd, IntArrayRef kernel_size,
                                                 IntArrayRef stride = {}, IntArrayRef padding = {0},
                                                 IntArrayRef dilation = {1}, bool ceil_mode = false);
Tensor avg_pool(const Tensor& input, int64_t nd, IntArrayRef kernel_size, IntArrayRef stride = {},
                IntArrayRef padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool(const Tensor& input, int64_t nd, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool(const Tensor& input, int64_t nd, IntArrayRef output_size);
// Scatters input into zeros of spatial size output_size (nd = its length) at indices.
Tensor max_unpool(const Tensor& input, const Tensor& indices, IntArrayRef output_size);
// F.unfold (sliding 2-d blocks to columns) and F.fold (its adjoint: columns summed into an image).
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride);
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);

// ---- interpolation (ops/nn_upsample.cpp) ----
// F.interpolate's core: input (N, C, *spatial) resized to output_size (one per spatial dim) with
// mode nearest, nearest-exact, linear/bilinear/trilinear, bicubic or area. scales (empty, or one
// optional per dim) are the user's scale factors, which torch uses for the coordinate mapping.
Tensor upsample(const Tensor& input, std::string_view mode, IntArrayRef output_size,
                const std::vector<std::optional<double>>& scales = {}, bool align_corners = false);

}  // namespace ember
