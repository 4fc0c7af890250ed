// Padding (ops/nn_pad.cpp): F.pad's four modes; pad_gather (ops/nn.h) is the reflect/replicate/circular core.
#pragma once
#include <string_view>

#include "ember/core/scalar.h"
#include "ember/core/tensor.h"

namespace ember {

// F.pad / torch::nn::functional::pad: pad holds (left, right) pairs for the last pad.size() / 2
// dims, last dim first. mode "constant" (value; negative pads crop), "reflect" (pads smaller than
// the dim), "replicate" or "circular" (negative pads crop first; wraps around at most once).
// torch's checks and messages; differentiable to every order.
Tensor pad(const Tensor& input, IntArrayRef pad, std::string_view mode = "constant", const Scalar& value = 0);

// torch.constant_pad_nd: pad holds (left, right) pairs for the last pad.size() / 2 dims, last dim
// first; negative amounts crop. New positions hold value cast to input's dtype. Any dtype, CPU;
// differentiable to every order (the gradient is the same op with the pads negated: it crops back).
Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value = 0);

}  // namespace ember
