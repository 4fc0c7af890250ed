// A few training steps with the C++ frontend, for tests/python/test_cpp_frontend.py, which runs
// the same steps with ember's Python API and with torch from the same initial weights and data.
//   frontend_steps DIR OPTIMIZER   (DIR/params.bin: float64 parameters in named_parameters()
//                                   order; DIR/x.bin: float64 (N, 1, 6, 6); DIR/y.bin: int64 (N))
// Prints the loss of each step, then every parameter and BatchNorm buffer value.
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {
std::vector<char> read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  TORCH_CHECK(f, "cannot open ", path);
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

struct ModelImpl : torch::nn::Module {
  ModelImpl() : conv(torch::nn::Conv2dOptions(1, 4, 3).padding(1).bias(false)), bn(4), fc(36, 3) {
    register_module("conv", conv);
    register_module("bn", bn);
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(bn(conv(x))), 2);
    return fc(x.flatten(1));
  }
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
  torch::nn::Linear fc;
};
TORCH_MODULE(Model);
}  // namespace

int main(int argc, char** argv) {
  TORCH_CHECK(argc == 3, "usage: frontend_steps DIR OPTIMIZER");
  std::string dir = argv[1], name = argv[2];
  Model model;
  model->to(torch::kDouble);
  std::vector<char> params = read(dir + "/params.bin");
  size_t offset = 0;
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) {
      size_t bytes = static_cast<size_t>(p.numel()) * sizeof(double);
      TORCH_CHECK(offset + bytes <= params.size(), "params.bin is too short");
      p.copy_(torch::from_blob(params.data() + offset, p.sizes(), torch::kDouble));
      offset += bytes;
    }
  }
  std::vector<char> xb = read(dir + "/x.bin"), yb = read(dir + "/y.bin");
  int64_t n = static_cast<int64_t>(yb.size() / sizeof(int64_t));
  auto x = torch::from_blob(xb.data(), {n, 1, 6, 6}, torch::kDouble).clone();
  auto y = torch::from_blob(yb.data(), {n}, torch::kLong).clone();

  std::unique_ptr<torch::optim::Optimizer> opt;
  auto ps = model->parameters();
  if (name == "sgd")
    opt = std::make_unique<torch::optim::SGD>(
        ps, torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(1e-2));
  else if (name == "adam")
    opt = std::make_unique<torch::optim::Adam>(ps, torch::optim::AdamOptions(0.01).amsgrad(true).weight_decay(1e-3));
  else if (name == "adamw")
    opt = std::make_unique<torch::optim::AdamW>(ps, torch::optim::AdamWOptions(0.01).weight_decay(0.1));
  else if (name == "rmsprop")
    opt = std::make_unique<torch::optim::RMSprop>(ps, torch::optim::RMSpropOptions(0.01).momentum(0.5).centered(true));
  else if (name == "adagrad")
    opt = std::make_unique<torch::optim::Adagrad>(ps, torch::optim::AdagradOptions(0.1).lr_decay(0.01));
  TORCH_CHECK(opt != nullptr, "unknown optimizer ", name);

  for (int step = 0; step < 3; ++step) {
    opt->zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt->step();
    std::printf("loss %.17g\n", loss.item<double>());
  }
  for (const auto& p : model->named_parameters()) {
    auto flat = p.value().flatten();
    for (int64_t i = 0; i < flat.numel(); ++i) std::printf("%s %.17g\n", p.key().c_str(), flat[i].item<double>());
  }
  for (const auto& b : model->named_buffers()) {
    if (b.value().scalar_type() != torch::kDouble) continue;
    for (int64_t i = 0; i < b.value().numel(); ++i)
      std::printf("%s %.17g\n", b.key().c_str(), b.value()[i].item<double>());
  }
  return 0;
}
