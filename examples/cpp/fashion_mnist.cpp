// Fashion-MNIST CNN trainer in the style of libtorch's C++ examples: the model of
// examples/fashion_mnist.py (three conv-BN-ReLU blocks, a dropout classifier) built from
// torch::nn modules with register_module and module holders, a data loader with worker threads,
// AdamW with a one-cycle learning rate, and test accuracy each epoch. Written against libtorch's
// API only, so it builds unchanged against libtorch or against Ember's <torch/torch.h>.
//
//   fashion_mnist DATA_DIR [--epochs N] [--batch-size N] [--workers N] [--threads N]
//                          [--limit-train N] [--limit-test N] [--lr X] [--no-augment]
//
// DATA_DIR holds the uncompressed IDX files (as torch::data::datasets::MNIST reads them), e.g.
//   mkdir -p data && for f in /usr/share/datasets/fashion-mnist/*.gz; do
//     gunzip -c "$f" > data/$(basename "$f" .gz); done
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr double kMean = 0.2860, kStd = 0.3530;  // Fashion-MNIST's pixel statistics (training set)

struct Options {
  std::string data;
  int64_t epochs = 10, batch_size = 128, workers = 2, threads = 0, limit_train = 0, limit_test = 0;
  double lr = 3e-3, weight_decay = 5e-4;
  bool augment = true;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value after %s\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--epochs")
      o.epochs = std::stoll(next());
    else if (a == "--batch-size")
      o.batch_size = std::stoll(next());
    else if (a == "--workers")
      o.workers = std::stoll(next());
    else if (a == "--threads")
      o.threads = std::stoll(next());
    else if (a == "--limit-train")
      o.limit_train = std::stoll(next());
    else if (a == "--limit-test")
      o.limit_test = std::stoll(next());
    else if (a == "--lr")
      o.lr = std::stod(next());
    else if (a == "--no-augment")
      o.augment = false;
    else if (o.data.empty() && a[0] != '-')
      o.data = a;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.data.empty()) {
    std::fprintf(stderr,
                 "usage: %s DATA_DIR [--epochs N] [--batch-size N] [--workers N] [--threads N] "
                 "[--limit-train N] [--limit-test N] [--lr X] [--no-augment]\n",
                 argv[0]);
    std::exit(2);
  }
  return o;
}

// Conv (no bias) -> BatchNorm -> ReLU.
void add_conv_block(torch::nn::Sequential& seq, int64_t in, int64_t out) {
  seq->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(false)));
  seq->push_back(torch::nn::BatchNorm2d(out));
  seq->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
}

struct NetImpl : torch::nn::Module {
  explicit NetImpl(int64_t width = 32) {
    torch::nn::Sequential f;
    add_conv_block(f, 1, width);
    f->push_back(torch::nn::MaxPool2d(2));  // 28 -> 14
    add_conv_block(f, width, 2 * width);
    f->push_back(torch::nn::MaxPool2d(2));  // 14 -> 7
    add_conv_block(f, 2 * width, 2 * width);
    features = register_module("features", f);
    fc1 = register_module("fc1", torch::nn::Linear(2 * width * 7 * 7, 128));
    fc2 = register_module("fc2", torch::nn::Linear(128, 10));
    drop = register_module("drop", torch::nn::Dropout(0.25));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = features->forward(x).flatten(1);
    x = torch::relu(fc1->forward(drop->forward(x)));
    return fc2->forward(drop->forward(x));
  }
  torch::nn::Sequential features{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::Dropout drop{nullptr};
};
TORCH_MODULE(Net);

// The first n examples of MNIST-format data, normalized (a dataset of our own, libtorch-style).
struct FashionMNIST : torch::data::datasets::Dataset<FashionMNIST> {
  FashionMNIST(const std::string& root, torch::data::datasets::MNIST::Mode mode, int64_t limit, bool augment)
      : augment(augment) {
    torch::data::datasets::MNIST mnist(root, mode);
    int64_t n = limit > 0 ? std::min<int64_t>(limit, mnist.images().size(0)) : mnist.images().size(0);
    images = (mnist.images().slice(0, 0, n) - kMean) / kStd;
    targets = mnist.targets().slice(0, 0, n);
  }
  torch::data::Example<> get(size_t index) override {
    torch::Tensor img = images[static_cast<int64_t>(index)];
    if (augment) {
      // Random horizontal flip and a random shift of up to 2 pixels (a 28x28 crop of the image
      // padded by 2 with the background value).
      if (torch::rand({1}).item<float>() < 0.5f) img = img.flip({2});
      auto shift = torch::randint(0, 5, {2});
      int64_t dy = shift[0].item<int64_t>(), dx = shift[1].item<int64_t>();
      img = torch::constant_pad_nd(img, {2, 2, 2, 2}, -kMean / kStd).slice(1, dy, dy + 28).slice(2, dx, dx + 28);
    }
    return {img, targets[static_cast<int64_t>(index)]};
  }
  std::optional<size_t> size() const override { return static_cast<size_t>(images.size(0)); }
  torch::Tensor images, targets;
  bool augment;
};

// The one-cycle schedule (torch.optim.lr_scheduler.OneCycleLR's defaults: 30% warm-up from
// max_lr/25, cosine annealing to max_lr/25e4).
double one_cycle_lr(double max_lr, int64_t step, int64_t total) {
  double initial = max_lr / 25, final_lr = initial / 1e4;
  double up = 0.3 * static_cast<double>(total) - 1;
  double s = static_cast<double>(step);
  auto cosine = [](double from, double to, double pct) { return to + (from - to) / 2.0 * (std::cos(M_PI * pct) + 1); };
  if (s <= up) return cosine(initial, max_lr, s / up);
  return cosine(max_lr, final_lr, (s - up) / (static_cast<double>(total) - 1 - up));
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  torch::manual_seed(0);
  if (o.threads > 0) torch::set_num_threads(static_cast<int>(o.threads));

  auto train_set = FashionMNIST(o.data, torch::data::datasets::MNIST::Mode::kTrain, o.limit_train, o.augment)
                       .map(torch::data::transforms::Stack<>());
  auto test_set = FashionMNIST(o.data, torch::data::datasets::MNIST::Mode::kTest, o.limit_test, false)
                      .map(torch::data::transforms::Stack<>());
  const int64_t train_size = static_cast<int64_t>(train_set.size().value());
  const int64_t test_size = static_cast<int64_t>(test_set.size().value());
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(train_set),
      torch::data::DataLoaderOptions().batch_size(o.batch_size).workers(o.workers).drop_last(true));
  auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(test_set), torch::data::DataLoaderOptions().batch_size(1000));
  const int64_t steps_per_epoch = train_size / o.batch_size;
  if (steps_per_epoch == 0) {
    std::fprintf(stderr, "fewer training images than one batch\n");
    return 2;
  }

  Net model;
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  int64_t n_params = 0;
  for (const auto& p : model->parameters()) n_params += p.numel();
  std::printf(
      "Fashion-MNIST: %lld training / %lld test images; model %lld parameters; batch %lld, %lld workers, %d "
      "threads\n",
      static_cast<long long>(train_size), static_cast<long long>(test_size), static_cast<long long>(n_params),
      static_cast<long long>(o.batch_size), static_cast<long long>(o.workers), torch::get_num_threads());

  int64_t step = 0, total_steps = o.epochs * steps_per_epoch;
  double test_acc = 0;
  for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    model->train();
    auto t0 = std::chrono::steady_clock::now();
    double running = 0;
    int64_t seen = 0;
    for (auto& batch : *train_loader) {
      for (auto& group : optimizer.param_groups()) group.options().set_lr(one_cycle_lr(o.lr, step, total_steps));
      auto loss = torch::nn::functional::cross_entropy(model->forward(batch.data), batch.target);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      ++step;
      running += loss.item<double>() * static_cast<double>(batch.target.size(0));
      seen += batch.target.size(0);
    }
    double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    torch::NoGradGuard no_grad;
    model->eval();
    double test_loss = 0;
    int64_t correct = 0;
    for (const auto& batch : *test_loader) {
      auto logits = model->forward(batch.data);
      test_loss += torch::nn::functional::cross_entropy(
                       logits, batch.target, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                       .item<double>();
      correct += logits.argmax(1).eq(batch.target).sum().item<int64_t>();
    }
    test_acc = static_cast<double>(correct) / static_cast<double>(test_size);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("epoch %2lld/%lld  train loss %.4f  test loss %.4f  test acc %.2f%%  %.1fs  (%.0f samples/s)\n",
                static_cast<long long>(epoch), static_cast<long long>(o.epochs), running / static_cast<double>(seen),
                test_loss / static_cast<double>(test_size), 100 * test_acc, seconds,
                static_cast<double>(seen) / train_seconds);
    std::fflush(stdout);
  }
  std::printf("final test accuracy %.2f%% after %lld epochs\n", 100 * test_acc, static_cast<long long>(o.epochs));
  return 0;
}
