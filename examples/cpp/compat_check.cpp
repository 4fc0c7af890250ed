// One libtorch-style program over much of the C++ API, with deterministic inputs and weights:
// scripts/cpp_compat_check.sh builds this same source against libtorch (the torch wheel's
// headers and libraries) and against Ember's <torch/torch.h>, and compares what they print.
#include <torch/torch.h>

#include <cstdio>
#include <iostream>

namespace F = torch::nn::functional;
using torch::indexing::None;
using torch::indexing::Slice;

// Every parameter gets evenly spaced values in [-0.5, 0.5] (no random initialization).
void fill_parameters(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  for (auto& p : m.parameters()) p.copy_(torch::linspace(-0.5, 0.5, p.numel(), p.options()).view_as(p));
}

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(torch::nn::Conv2dOptions(1, 4, 3).padding(1)),
        bn1(4),
        conv2(torch::nn::Conv2dOptions(4, 8, 3).stride(2)),
        fc1(8 * 2 * 2, 16),
        fc2(16, 3) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("drop", drop);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn1(conv1(x)));
    x = torch::max_pool2d(torch::relu(conv2(x)), 2, 1);
    x = x.view({x.size(0), -1});
    x = torch::relu(fc1(drop(x)));
    return torch::log_softmax(fc2(x), /*dim=*/1);
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::Linear fc1, fc2;
  torch::nn::Dropout drop{0.0};
};
TORCH_MODULE(Net);

struct Squares : torch::data::datasets::Dataset<Squares> {
  torch::data::Example<> get(size_t index) override {
    double i = static_cast<double>(index);
    return {torch::full({1, 2, 2}, i * i, torch::kDouble), torch::tensor(static_cast<int64_t>(index % 3))};
  }
  std::optional<size_t> size() const override { return 10; }
};

struct Cube : public torch::autograd::Function<Cube> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list g) {
    auto x = ctx->get_saved_variables()[0];
    return {3 * x * x * g[0]};
  }
};

int main() {
  std::cout << "== tensors" << std::endl;
  auto a = torch::arange(12, torch::kFloat).view({3, 4});
  std::cout << a << std::endl << a / 7 << std::endl << a.sum(1) << std::endl;
  std::cout << a.index({Slice(0, 2), 1}) << std::endl << a.index({"...", Slice(None, None, 2)}) << std::endl;
  std::cout << a.t().contiguous().view({2, 6}).argmax(1) << std::endl;
  auto b = torch::zeros({2, 3}, torch::kDouble);
  b.index_put_({0, Slice(1, None)}, 5);
  b.index_put_({b == 0}, -1.5);
  std::cout << b << std::endl << b.sizes() << " " << b.dtype() << " " << b.scalar_type() << std::endl;
  std::cout << torch::tensor({{1e-3, 2e-3}, {5e-4, 1e-4}}) << std::endl << torch::tensor(2.5) << std::endl;
  std::cout << torch::full({2, 2, 3}, 1.5) << std::endl << torch::tensor({true, false}) << std::endl;

  std::cout << "== autograd" << std::endl;
  auto x = torch::tensor({1.0, -2.0, 0.5}, torch::dtype(torch::kDouble).requires_grad(true));
  auto y = (x * x + 3).sum();
  std::cout << y.grad_fn()->name() << std::endl;
  y.backward();
  std::cout << x.grad() << std::endl;
  auto c = Cube::apply(x);
  auto g = torch::autograd::grad({c.sum()}, {x}, {}, true, true)[0];
  std::cout << g << std::endl << torch::autograd::grad({g.sum()}, {x})[0] << std::endl;
  {
    torch::NoGradGuard no_grad;
    std::cout << (x * 2).requires_grad() << std::endl;
  }
  auto s = torch::ones({2}, torch::requires_grad());
  for (const auto& t : {s + 2,   2 + s,          s * 3,    3 * s,         s - 1,          2 - s,
                        s / 2,   1 / s,          s + s,    s.pow(2),      s.pow(s),       torch::pow(2, s),
                        s.sum(), s.sum(0),       s.mean(), s.mean(0),     s.view({2, 1}), s.index({0}),
                        s.exp(), torch::relu(s), s.t(),    s.unsqueeze(0)})
    std::cout << t.grad_fn()->name() << " ";
  std::cout << std::endl;

  std::cout << "== modules" << std::endl;
  Net net;
  fill_parameters(*net);
  std::cout << *net << std::endl;
  for (const auto& p : net->named_parameters()) std::cout << p.key() << " " << p.value().sizes() << std::endl;
  for (const auto& p : net->named_buffers()) std::cout << p.key() << " " << p.value().sizes() << std::endl;
  auto images = torch::linspace(-1, 1, 2 * 1 * 8 * 8).view({2, 1, 8, 8});
  auto out = net->forward(images);
  std::cout << out << std::endl;
  net->eval();
  std::cout << net->forward(images) << std::endl << net->bn1->running_mean << std::endl;
  net->train();

  std::cout << "== training" << std::endl;
  net->to(torch::kDouble);
  auto input = torch::linspace(-1, 1, 4 * 64, torch::kDouble).view({4, 1, 8, 8});
  auto target = torch::tensor({0, 2, 1, 2});
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-3));
  for (int step = 0; step < 4; ++step) {
    sgd.zero_grad();
    auto loss = torch::nll_loss(net->forward(input), target);
    loss.backward();
    sgd.step();
    std::printf("sgd step %d loss %.6f\n", step, loss.item<double>());
  }
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(0.01).betas(std::make_tuple(0.8, 0.99)));
  for (int step = 0; step < 4; ++step) {
    adam.zero_grad();
    auto loss = F::nll_loss(net->forward(input), target);
    loss.backward();
    adam.step();
    std::printf("adam step %d loss %.6f\n", step, loss.item<double>());
  }
  torch::optim::StepLR sched(sgd, 2, 0.5);
  for (int i = 0; i < 5; ++i) {
    sched.step();
    std::printf("%g ", sgd.param_groups()[0].options().get_lr());
  }
  std::printf("\n");

  std::cout << "== functional" << std::endl;
  auto img = torch::arange(32, torch::kFloat).view({1, 2, 4, 4});
  std::cout << F::max_pool2d(img, F::MaxPool2dFuncOptions(2)) << std::endl;
  std::cout << F::avg_pool2d(img, F::AvgPool2dFuncOptions(3).stride(1)) << std::endl;
  std::cout
      << F::interpolate(
             img.slice(1, 0, 1),
             F::InterpolateFuncOptions().size(std::vector<int64_t>{2, 3}).mode(torch::kBilinear).align_corners(false))
      << std::endl;
  std::cout << F::pad(torch::arange(3.).view({1, 3}), F::PadFuncOptions({2, 1}).mode(torch::kReflect)) << std::endl;
  auto logits = torch::tensor({{1.0, 2.0, 0.5}, {0.1, -0.2, 2.5}}, torch::kDouble);
  // Scalars printed to 10 digits: a 0-d tensor prints every digit, and sums may differ in the last bit.
  std::printf("%.10f\n", F::cross_entropy(logits, torch::tensor({1, 2})).item<double>());
  std::printf("%.10f\n",
              F::mse_loss(logits, torch::zeros_like(logits), F::MSELossFuncOptions(torch::kSum)).item<double>());
  std::cout << torch::softmax(logits, 1) << std::endl << F::gelu(logits) << std::endl;

  std::cout << "== recurrent" << std::endl;
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4).num_layers(2));
  fill_parameters(*lstm);
  auto seq = torch::linspace(-1, 1, 5 * 2 * 3).view({5, 2, 3});
  auto lstm_out = lstm->forward(seq);
  std::cout << std::get<0>(lstm_out)[4] << std::endl << std::get<1>(std::get<1>(lstm_out)) << std::endl;

  std::cout << "== data" << std::endl;
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      Squares().map(torch::data::transforms::Normalize<>(10, 20)).map(torch::data::transforms::Stack<>()),
      torch::data::DataLoaderOptions().batch_size(4));
  for (auto& batch : *loader)
    std::printf("batch %lld: data sum %.4f targets %lld\n", static_cast<long long>(batch.data.size(0)),
                batch.data.sum().item<double>(), static_cast<long long>(batch.target.sum().item<int64_t>()));
  return 0;
}
