// The training benchmark of ../shared/bench/train_fashion_mnist.py in C++, written against
// libtorch's API so that the same source builds against libtorch and against Ember's
// <torch/torch.h> (benchmarks/cpp_frontend.sh builds and runs both beside the Python runs):
// a LeNet-style CNN, SGD (lr 0.01, momentum 0.9), batch 64, shuffled batches cut from the
// in-memory Fashion-MNIST training set; after warm-up steps, the median step time over chunks of
// 50 steps gives samples/s.
//   cpp_train_lenet DATA_DIR [STEPS] [WARMUP]    (DATA_DIR: uncompressed IDX files)
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

struct LeNetImpl : torch::nn::Module {
  LeNetImpl() : conv1(1, 32, 3), conv2(32, 64, 3), fc1(64 * 5 * 5, 128), fc2(128, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2(x)), 2);
    x = x.reshape({x.size(0), -1});
    return fc2(torch::relu(fc1(x)));
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(LeNet);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR [STEPS] [WARMUP]\n", argv[0]);
    return 2;
  }
  int64_t steps = argc > 2 ? std::stoll(argv[2]) : 300, warmup = argc > 3 ? std::stoll(argv[3]) : 20;
  const int64_t B = 64;
  torch::manual_seed(0);
  torch::data::datasets::MNIST train(argv[1]);
  auto images = train.images(), targets = train.targets();
  const int64_t n_batches = images.size(0) / B;
  LeNet model;
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  torch::Tensor perm = torch::randperm(images.size(0));
  int64_t next = 0;
  auto step = [&]() {
    if (next == n_batches) {
      perm = torch::randperm(images.size(0));
      next = 0;
    }
    auto idx = perm.slice(0, next * B, (next + 1) * B);
    ++next;
    auto x = images.index_select(0, idx), y = targets.index_select(0, idx);
    opt.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  };
  for (int64_t i = 0; i < warmup; ++i) step();
  std::vector<double> times;
  torch::Tensor loss;
  for (int64_t done = 0; done < steps;) {
    int64_t n = std::min<int64_t>(50, steps - done);
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i) loss = step();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n);
    done += n;
  }
  std::sort(times.begin(), times.end());
  double med = times[times.size() / 2];
  std::printf(
      "{\"bench\": \"cpp_train_lenet.train_samples_per_s\", \"value\": %.1f, \"unit\": \"samples/s\", "
      "\"median_step_ms\": %.3f, \"threads\": %d, \"final_loss\": %.4f}\n",
      B / med, med * 1e3, torch::get_num_threads(), loss.item<float>());
  return 0;
}
