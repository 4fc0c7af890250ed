// Checkpoints between the C++ frontend and Python, for tests/python/test_cpp_frontend.py.
//   frontend_checkpoint save DIR   writes DIR/model.pt (a state_dict), DIR/tensor.pt, DIR/list.pt
//   frontend_checkpoint load FILE  loads a state_dict into the same model and prints its values
#include <torch/torch.h>

#include <cstdio>
#include <string>

namespace {
struct ModelImpl : torch::nn::Module {
  ModelImpl() : conv(torch::nn::Conv2dOptions(1, 2, 3)), bn(2), fc(8, 3) {
    register_module("conv", conv);
    register_module("bn", bn);
    register_module("fc", fc);
  }
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
  torch::nn::Linear fc;
};
TORCH_MODULE(Model);
}  // namespace

int run(int argc, char** argv) {
  TORCH_CHECK(argc == 3, "usage: frontend_checkpoint save DIR | load FILE");
  std::string mode = argv[1], path = argv[2];
  Model model;
  if (mode == "save") {
    {
      torch::NoGradGuard no_grad;
      int64_t k = 0;
      for (auto& t : model->parameters()) t.copy_(torch::arange(k, k + t.numel(), torch::kFloat).view_as(t) / 10);
      model->bn->running_mean.fill_(0.5);
      model->bn->running_var.fill_(2.0);
      model->bn->num_batches_tracked.fill_(7);
    }
    torch::save(model, path + "/model.pt");
    torch::save(torch::arange(6, torch::kDouble).view({2, 3}), path + "/tensor.pt");
    torch::save(std::vector<torch::Tensor>{torch::ones({2}, torch::kLong), torch::tensor({true, false})},
                path + "/list.pt");
    return 0;
  }
  torch::load(model, path);
  for (const auto& p : model->named_parameters()) {
    auto flat = p.value().flatten().to(torch::kDouble);
    for (int64_t i = 0; i < flat.numel(); ++i) std::printf("%s %.9g\n", p.key().c_str(), flat[i].item<double>());
  }
  for (const auto& b : model->named_buffers()) {
    auto flat = b.value().flatten().to(torch::kDouble);
    for (int64_t i = 0; i < flat.numel(); ++i) std::printf("%s %.9g\n", b.key().c_str(), flat[i].item<double>());
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
