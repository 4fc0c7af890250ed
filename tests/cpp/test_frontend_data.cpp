// torch::data in the C++ frontend: datasets, transforms, samplers and the data loader (with and
// without worker threads), and the MNIST reader on a generated IDX file.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <set>

namespace {

// x_i = [i, i, i], y_i = i % 3.
struct Counting : torch::data::datasets::Dataset<Counting> {
  explicit Counting(size_t n) : n(n) {}
  torch::data::Example<> get(size_t index) override {
    auto i = static_cast<int64_t>(index);
    return {torch::full({3}, static_cast<double>(i)), torch::tensor(i % 3)};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n;
};

struct Failing : torch::data::datasets::Dataset<Failing> {
  torch::data::Example<> get(size_t index) override {
    TORCH_CHECK(index != 5, "bad example ", index);
    return {torch::zeros({1}), torch::zeros({})};
  }
  std::optional<size_t> size() const override { return 8; }
};

std::vector<int64_t> firsts(const torch::Tensor& data) {
  auto c = data.select(1, 0).to(torch::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

void write_be32(std::ofstream& f, uint32_t v) {
  unsigned char b[4] = {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
                        static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  f.write(reinterpret_cast<char*>(b), 4);
}

}  // namespace

TEST(FrontendData, MapNormalizeStackAndSequentialLoader) {
  auto ds = Counting(10).map(torch::data::transforms::Normalize<>(1.0, 2.0)).map(torch::data::transforms::Stack<>());
  EXPECT_EQ(ds.size().value(), 10u);
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(ds), 4);
  std::vector<int64_t> sizes;
  std::vector<double> seen;
  for (auto& batch : *loader) {
    sizes.push_back(batch.data.size(0));
    EXPECT_EQ(batch.target.scalar_type(), torch::kLong);
    // Normalize treats the data as (C, H, W) images: one channel here, so (1, 1, 3) per example.
    EXPECT_EQ(batch.data.sizes().slice(1), torch::IntArrayRef({1, 1, 3}));
    for (int64_t i = 0; i < batch.data.size(0); ++i) seen.push_back(batch.data[i].flatten()[0].item<double>());
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  ASSERT_EQ(seen.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(seen[i], (static_cast<double>(i) - 1.0) / 2.0);
  // A second epoch gives the same batches again.
  size_t batches = 0;
  for (auto it = loader->begin(); it != loader->end(); ++it) ++batches;
  EXPECT_EQ(batches, 3u);
}

TEST(FrontendData, RandomSamplerDropLastAndWorkers) {
  torch::manual_seed(7);
  auto make = [](size_t workers) {
    return torch::data::make_data_loader(
        Counting(50).map(torch::data::transforms::Stack<>()),
        torch::data::DataLoaderOptions().batch_size(8).workers(workers).drop_last(true));
  };
  auto loader = make(0);
  std::set<int64_t> all;
  size_t n = 0;
  for (auto& b : *loader) {
    EXPECT_EQ(b.data.size(0), 8);
    for (int64_t v : firsts(b.data)) all.insert(v);
    ++n;
  }
  EXPECT_EQ(n, 6u);            // 50 / 8, the last partial batch dropped
  EXPECT_EQ(all.size(), 48u);  // no repeats within an epoch
  // With worker threads and enforce_ordering the batches come in the sampler's order: the same
  // seed gives the same epoch as without workers.
  torch::manual_seed(11);
  auto serial = make(0);
  std::vector<int64_t> a;
  for (auto& b : *serial)
    for (int64_t v : firsts(b.data)) a.push_back(v);
  torch::manual_seed(11);
  auto threaded = make(2);
  std::vector<int64_t> c;
  for (auto& b : *threaded)
    for (int64_t v : firsts(b.data)) c.push_back(v);
  EXPECT_EQ(a, c);
  // Several epochs through the threaded loader, including one abandoned halfway.
  for (int epoch = 0; epoch < 3; ++epoch) {
    size_t k = 0;
    for (auto& b : *threaded) {
      (void)b;
      if (++k == 2 && epoch == 1) break;
    }
  }
}

TEST(FrontendData, WorkerErrorsPropagate) {
  for (size_t workers : {0, 2}) {
    auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        Failing().map(torch::data::transforms::Stack<>()), torch::data::DataLoaderOptions(2).workers(workers));
    try {
      for (auto& b : *loader) (void)b;
      FAIL() << "the dataset error must reach the caller";
    } catch (const c10::Error& e) {
      EXPECT_EQ(std::string(e.what()), "bad example 5");
    }
  }
}

TEST(FrontendData, UnstackedBatchesAndTensorDataset) {
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(Counting(5), 2);
  auto it = loader->begin();
  EXPECT_EQ(it->size(), 2u);  // a std::vector<Example<>> without a collation
  EXPECT_EQ((*it)[1].target.item<int64_t>(), 1);
  auto tds = torch::data::datasets::TensorDataset(torch::arange(12.).view({6, 2}))
                 .map(torch::data::transforms::Lambda<torch::data::TensorExample>(
                     [](torch::data::TensorExample e) { return torch::data::TensorExample(e.data * 10); }))
                 .map(torch::data::transforms::Stack<torch::data::TensorExample>());
  auto tl = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(tds), 4);
  auto first = *tl->begin();
  EXPECT_EQ(first.data.sizes(), torch::IntArrayRef({4, 2}));
  EXPECT_EQ(first.data[3][1].item<double>(), 70.0);
}

TEST(FrontendData, DistributedSamplers) {
  torch::data::samplers::DistributedSequentialSampler s0(10, 3, 0), s2(10, 3, 2);
  auto a = s0.next(100).value();
  auto b = s2.next(100).value();
  EXPECT_EQ(a, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(b, (std::vector<size_t>{8, 9, 0, 1}));  // padded by wrapping around
  EXPECT_FALSE(s0.next(1).has_value());
  torch::data::samplers::DistributedRandomSampler r0(9, 3, 0), r1(9, 3, 1), r2(9, 3, 2);
  std::set<size_t> all;
  for (auto* r : {&r0, &r1, &r2}) {
    std::vector<size_t> v = r->next(10).value();
    for (size_t i : v) all.insert(i);
  }
  EXPECT_EQ(all.size(), 9u);  // the replicas split one permutation
}

TEST(FrontendData, MNISTReader) {
  std::string root = ::testing::TempDir() + "ember_mnist_test";
  std::remove((root + "/t10k-images-idx3-ubyte").c_str());
  std::string mk = "mkdir -p " + root;
  ASSERT_EQ(std::system(mk.c_str()), 0);
  {
    std::ofstream img(root + "/t10k-images-idx3-ubyte", std::ios::binary);
    write_be32(img, 2051);
    write_be32(img, 10000);
    write_be32(img, 28);
    write_be32(img, 28);
    std::vector<char> px(10000 * 28 * 28);
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<char>(i % 256);
    img.write(px.data(), static_cast<std::streamsize>(px.size()));
    std::ofstream lab(root + "/t10k-labels-idx1-ubyte", std::ios::binary);
    write_be32(lab, 2049);
    write_be32(lab, 10000);
    std::vector<char> l(10000);
    for (size_t i = 0; i < l.size(); ++i) l[i] = static_cast<char>(i % 10);
    lab.write(l.data(), static_cast<std::streamsize>(l.size()));
  }
  torch::data::datasets::MNIST test(root, torch::data::datasets::MNIST::Mode::kTest);
  EXPECT_EQ(test.size().value(), 10000u);
  EXPECT_FALSE(test.is_train());
  EXPECT_EQ(test.images().sizes(), torch::IntArrayRef({10000, 1, 28, 28}));
  EXPECT_EQ(test.targets().scalar_type(), torch::kLong);
  auto e = test.get(3);
  EXPECT_EQ(e.target.item<int64_t>(), 3);
  EXPECT_FLOAT_EQ(e.data[0][0][1].item<float>(), static_cast<float>((3 * 784 + 1) % 256) / 255.0f);
  try {
    torch::data::datasets::MNIST train(root);
    FAIL();
  } catch (const c10::Error& err) {
    EXPECT_EQ(std::string(err.what()), "Error opening images file at " + root + "/train-images-idx3-ubyte");
  }
}
