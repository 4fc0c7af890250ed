// torch::nn::init: in-place initializers for parameters (run without recording history).
#pragma once
#include <tuple>
#include <variant>

#include "ember/frontend/nn_options.h"

namespace torch::nn::init {

using at::Tensor;
using NonlinearityType =
    std::variant<enumtype::kLinear, enumtype::kConv1D, enumtype::kConv2D, enumtype::kConv3D, enumtype::kConvTranspose1D,
                 enumtype::kConvTranspose2D, enumtype::kConvTranspose3D, enumtype::kSigmoid, enumtype::kTanh,
                 enumtype::kReLU, enumtype::kLeakyReLU>;
using FanModeType = std::variant<enumtype::kFanIn, enumtype::kFanOut>;

double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);
Tensor constant_(Tensor tensor, at::Scalar value);
Tensor dirac_(Tensor tensor);
Tensor eye_(Tensor matrix);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
Tensor ones_(Tensor tensor);
Tensor orthogonal_(Tensor tensor, double gain = 1.0);
Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanModeType mode = torch::kFanIn,
                       NonlinearityType nonlinearity = torch::kLeakyReLU);
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanModeType mode = torch::kFanIn,
                        NonlinearityType nonlinearity = torch::kLeakyReLU);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor zeros_(Tensor tensor);
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2);
std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);

}  // namespace torch::nn::init
