// A small DCGAN in the style of libtorch's dcgan example: a generator of transposed
// convolutions and a discriminator of strided convolutions trained against each other on
// (Fashion-)MNIST images with Adam, label smoothing, and a checkpoint-free loop.
//
//   dcgan DATA_DIR [--epochs N] [--batches N] [--batch-size N]
// DATA_DIR holds the uncompressed MNIST-format IDX files (see fashion_mnist.cpp).
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
constexpr int64_t kNoiseSize = 64;

struct DCGANGeneratorImpl : torch::nn::Module {
  explicit DCGANGeneratorImpl(int64_t noise_size)
      : conv1(torch::nn::ConvTranspose2dOptions(noise_size, 128, 4).bias(false)),
        batch_norm1(128),
        conv2(torch::nn::ConvTranspose2dOptions(128, 64, 3).stride(2).padding(1).bias(false)),
        batch_norm2(64),
        conv3(torch::nn::ConvTranspose2dOptions(64, 32, 4).stride(2).padding(1).bias(false)),
        batch_norm3(32),
        conv4(torch::nn::ConvTranspose2dOptions(32, 1, 4).stride(2).padding(1).bias(false)) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv3", conv3);
    register_module("conv4", conv4);
    register_module("batch_norm1", batch_norm1);
    register_module("batch_norm2", batch_norm2);
    register_module("batch_norm3", batch_norm3);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(batch_norm1(conv1(x)));  // 4x4
    x = torch::relu(batch_norm2(conv2(x)));  // 7x7
    x = torch::relu(batch_norm3(conv3(x)));  // 14x14
    return torch::tanh(conv4(x));            // 28x28
  }
  torch::nn::ConvTranspose2d conv1, conv2, conv3, conv4;
  torch::nn::BatchNorm2d batch_norm1, batch_norm2, batch_norm3;
};
TORCH_MODULE(DCGANGenerator);

torch::nn::Sequential make_discriminator() {
  return torch::nn::Sequential(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 4).stride(2).padding(1).bias(false)),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(64), torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 1, 7).stride(1).padding(0).bias(false)), torch::nn::Sigmoid());
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR [--epochs N] [--batches N] [--batch-size N]\n", argv[0]);
    return 2;
  }
  std::string root = argv[1];
  int64_t epochs = 1, max_batches = 0, batch_size = 64;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    int64_t v = std::stoll(argv[i + 1]);
    if (a == "--epochs")
      epochs = v;
    else if (a == "--batches")
      max_batches = v;
    else if (a == "--batch-size")
      batch_size = v;
  }
  torch::manual_seed(1);
  DCGANGenerator generator(kNoiseSize);
  torch::nn::Sequential discriminator = make_discriminator();

  auto dataset = torch::data::datasets::MNIST(root, torch::data::datasets::MNIST::Mode::kTest)
                     .map(torch::data::transforms::Normalize<>(0.5, 0.5))
                     .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader(std::move(dataset),
                                              torch::data::DataLoaderOptions().batch_size(batch_size).workers(2));
  torch::optim::Adam g_opt(generator->parameters(), torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));
  torch::optim::Adam d_opt(discriminator->parameters(),
                           torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.5)));

  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    int64_t batch_index = 0;
    for (auto& batch : *loader) {
      if (max_batches > 0 && batch_index >= max_batches) break;
      // Discriminator: real images labeled 0.8-1.0, generated ones 0.
      discriminator->zero_grad();
      auto real_images = batch.data;
      auto real_labels = torch::empty(batch.data.size(0)).uniform_(0.8, 1.0);
      auto real_output = discriminator->forward(real_images).view({-1});
      auto d_loss_real = torch::binary_cross_entropy(real_output, real_labels);
      d_loss_real.backward();
      auto noise = torch::randn({batch.data.size(0), kNoiseSize, 1, 1});
      auto fake_images = generator->forward(noise);
      auto fake_labels = torch::zeros(batch.data.size(0));
      auto fake_output = discriminator->forward(fake_images.detach()).view({-1});
      auto d_loss_fake = torch::binary_cross_entropy(fake_output, fake_labels);
      d_loss_fake.backward();
      auto d_loss = d_loss_real + d_loss_fake;
      d_opt.step();
      // Generator: make the discriminator call its images real.
      generator->zero_grad();
      fake_labels.fill_(1);
      fake_output = discriminator->forward(fake_images).view({-1});
      auto g_loss = torch::binary_cross_entropy(fake_output, fake_labels);
      g_loss.backward();
      g_opt.step();
      ++batch_index;
      if (batch_index % 20 == 0 || batch_index == max_batches)
        std::printf("[%2lld/%2lld][%3lld] D_loss: %.4f | G_loss: %.4f\n", static_cast<long long>(epoch),
                    static_cast<long long>(epochs), static_cast<long long>(batch_index), d_loss.item<float>(),
                    g_loss.item<float>());
    }
  }
  torch::NoGradGuard no_grad;
  generator->eval();
  auto samples = generator->forward(torch::randn({8, kNoiseSize, 1, 1}));
  std::printf("generated %lld samples of %lldx%lld, values in [%.3f, %.3f]\n", static_cast<long long>(samples.size(0)),
              static_cast<long long>(samples.size(2)), static_cast<long long>(samples.size(3)),
              samples.min().item<float>(), samples.max().item<float>());
  return 0;
}
