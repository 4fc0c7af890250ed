#include "ember/frontend/nn_init.h"

#include <cmath>

namespace torch::nn::init {

double calculate_gain(NonlinearityType nonlinearity, double param) {
  if (std::holds_alternative<enumtype::kTanh>(nonlinearity)) return 5.0 / 3;
  if (std::holds_alternative<enumtype::kReLU>(nonlinearity)) return std::sqrt(2.0);
  if (std::holds_alternative<enumtype::kLeakyReLU>(nonlinearity)) return std::sqrt(2.0 / (1 + param * param));
  return 1.0;  // linear, conv, sigmoid
}

Tensor constant_(Tensor tensor, at::Scalar value) {
  NoGradGuard no_grad;
  return tensor.fill_(value);
}
Tensor ones_(Tensor tensor) { return constant_(tensor, 1); }
Tensor zeros_(Tensor tensor) { return constant_(tensor, 0); }

Tensor eye_(Tensor matrix) {
  NoGradGuard no_grad;
  EMBER_CHECK(matrix.dim() == 2, "Only tensors with 2 dimensions are supported");
  return matrix.copy_(at::eye(matrix.size(0), matrix.size(1), matrix.scalar_type()));
}

Tensor dirac_(Tensor tensor) {
  NoGradGuard no_grad;
  EMBER_CHECK(tensor.dim() >= 3 && tensor.dim() <= 5, "Only tensors with 3, 4, or 5 dimensions are supported");
  tensor.zero_();
  int64_t n = std::min(tensor.size(0), tensor.size(1));
  for (int64_t d = 0; d < n; ++d) {
    std::vector<at::indexing::TensorIndex> idx{d, d};
    for (int64_t k = 2; k < tensor.dim(); ++k) idx.emplace_back(tensor.size(k) / 2);
    tensor.index_put_(at::ArrayRef<at::indexing::TensorIndex>(idx), 1);
  }
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  NoGradGuard no_grad;
  return tensor.normal_(mean, std);
}

Tensor uniform_(Tensor tensor, double low, double high) {
  NoGradGuard no_grad;
  return tensor.uniform_(low, high);
}

std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  EMBER_CHECK_VALUE(tensor.dim() >= 2,
                    "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

namespace {
double kaiming_std(const Tensor& t, double a, const FanModeType& mode, const NonlinearityType& nl) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(t);
  double fan = static_cast<double>(std::holds_alternative<enumtype::kFanIn>(mode) ? fan_in : fan_out);
  return calculate_gain(nl, a) / std::sqrt(fan);
}
}  // namespace

Tensor kaiming_uniform_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity);
  return uniform_(tensor, -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  return normal_(tensor, 0, kaiming_std(tensor, a, mode, nonlinearity));
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(tensor, -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = _calculate_fan_in_and_fan_out(tensor);
  return normal_(tensor, 0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

Tensor orthogonal_(Tensor tensor, double gain) {
  EMBER_CHECK_VALUE(tensor.dim() >= 2, "Only tensors with 2 or more dimensions are supported");
  if (tensor.numel() == 0) return tensor;
  NoGradGuard no_grad;
  int64_t rows = tensor.size(0), cols = tensor.numel() / rows;
  Tensor flat = at::randn({rows, cols}, tensor.scalar_type());
  if (rows < cols) flat = flat.t();
  auto [q, r] = ember::linalg_qr(flat);
  Tensor qq = Tensor(q) * Tensor(ember::diagonal(r, 0)).sign();  // unique decomposition (uniform over O(n))
  if (rows < cols) qq = qq.t();
  tensor.view_as(qq).copy_(qq);
  return tensor.mul_(gain);
}

Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b) {
  NoGradGuard no_grad;
  auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  double lo = cdf((a - mean) / std), hi = cdf((b - mean) / std);
  tensor.uniform_(2 * lo - 1, 2 * hi - 1);
  tensor.erfinv_();
  tensor.mul_(std * std::sqrt(2.0));
  tensor.add_(mean);
  return tensor.clamp_(a, b);
}

}  // namespace torch::nn::init
