// nn.functional.linear and bilinear: compositions of GEMM ops (their gradients come from the parts).
#pragma once
#include <optional>

#include "ember/core/tensor.h"

namespace ember {

// input (*, in) @ weight^T (weight (out, in) or (in,)) + bias (broadcast to the result).
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);
// out[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o].
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias = std::nullopt);

}  // namespace ember
