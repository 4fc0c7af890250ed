// Polynomial regression in the style of libtorch's and PyTorch's regression examples: learn
// y = w . (x, x^2, x^3, x^4) + b with a torch::nn::Linear and plain SGD. Data and initial weights
// are deterministic, so the printed fit is the same against libtorch and against Ember.
#include <torch/torch.h>

#include <cstdio>

namespace {
constexpr int64_t kDegree = 4;
// (x, x^2, ..., x^kDegree) as the columns of a matrix.
torch::Tensor make_features(const torch::Tensor& x) {
  std::vector<torch::Tensor> cols;
  for (int64_t i = 1; i <= kDegree; ++i) cols.push_back(x.pow(i));
  return torch::stack(cols, 1);
}
}  // namespace

int main() {
  auto w_target = torch::tensor({0.5, -1.25, 0.75, 2.0}, torch::kDouble).unsqueeze(1);
  auto b_target = torch::tensor({-0.3}, torch::kDouble);
  auto f = [&](const torch::Tensor& x) { return make_features(x).mm(w_target) + b_target; };

  torch::nn::Linear fc(torch::nn::LinearOptions(kDegree, 1));
  fc->to(torch::kDouble);
  torch::nn::init::zeros_(fc->weight);
  torch::nn::init::zeros_(fc->bias);
  torch::optim::SGD optimizer(fc->parameters(), torch::optim::SGDOptions(0.2).momentum(0.9));

  auto x = torch::linspace(-1, 1, 32, torch::kDouble);
  auto features = make_features(x);
  auto y = f(x);
  double loss_value = 0;
  int64_t step = 0;
  for (; step < 3000; ++step) {
    optimizer.zero_grad();
    auto loss = torch::smooth_l1_loss(fc(features), y);
    loss_value = loss.item<double>();
    loss.backward();
    optimizer.step();
    if (step % 500 == 0) std::printf("step %4lld  loss %.6f\n", static_cast<long long>(step), loss_value);
    if (loss_value < 1e-9) break;
  }
  std::printf("loss %.6e after %lld steps\n", loss_value, static_cast<long long>(step));
  auto w = fc->weight.view({-1});
  std::printf("learned:  y = %+.4f x %+.4f x^2 %+.4f x^3 %+.4f x^4 %+.4f\n", w[0].item<double>(), w[1].item<double>(),
              w[2].item<double>(), w[3].item<double>(), fc->bias[0].item<double>());
  std::printf("target:   y = %+.4f x %+.4f x^2 %+.4f x^3 %+.4f x^4 %+.4f\n", 0.5, -1.25, 0.75, 2.0, -0.3);
  return 0;
}
