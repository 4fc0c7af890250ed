// torch::save / torch::load in the C++ frontend: round trips of modules, tensors and lists
// through files and streams, and errors for mismatched or damaged checkpoints. (Files moving
// between C++ and Python/torch are checked by tests/python/test_cpp_frontend.py.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "ember/serialize/io.h"
#include "ember/serialize/zip_archive.h"

namespace {
struct SerNetImpl : torch::nn::Module {
  SerNetImpl() : conv(torch::nn::Conv2dOptions(1, 2, 3)), bn(2), fc(8, 3) {
    register_module("conv", conv);
    register_module("bn", bn);
    register_module("fc", fc);
  }
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
  torch::nn::Linear fc;
};
TORCH_MODULE(SerNet);

std::string temp_path(const char* name) { return ::testing::TempDir() + name; }
}  // namespace

TEST(FrontendSerialize, ModuleRoundTrip) {
  torch::manual_seed(1);
  SerNet a, b;
  {
    torch::NoGradGuard no_grad;
    a->bn->running_mean.fill_(0.25);
    a->bn->num_batches_tracked.fill_(9);
  }
  std::string path = temp_path("ember_fe_module.pt");
  torch::save(a, path);
  EXPECT_FALSE(torch::equal(a->fc->weight, b->fc->weight));
  auto before = b->fc->weight;  // the same tensor afterwards: loading copies into it
  torch::load(b, path);
  EXPECT_TRUE(before.is_same(b->fc->weight));
  for (const auto& [k, v] : torch::serialize::state_dict(*a)) {
    auto other = torch::serialize::state_dict(*b);
    bool found = false;
    for (const auto& [k2, v2] : other)
      if (k2 == k) {
        found = true;
        EXPECT_TRUE(torch::equal(v, v2)) << k;
      }
    EXPECT_TRUE(found) << k;
  }
  EXPECT_EQ(b->bn->num_batches_tracked.item<int64_t>(), 9);
  EXPECT_TRUE(b->fc->weight.requires_grad());
  // Through a stream, and the state_dict order of torch (parameters, buffers, then children).
  std::stringstream ss;
  torch::save(*a, ss);
  SerNet c;
  torch::load(*c, ss);
  EXPECT_TRUE(torch::equal(a->conv->weight, c->conv->weight));
  std::vector<std::string> keys;
  for (const auto& [k, v] : torch::serialize::state_dict(*a)) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean",
                                            "bn.running_var", "bn.num_batches_tracked", "fc.weight", "fc.bias"}));
  std::remove(path.c_str());
}

TEST(FrontendSerialize, TensorsAndLists) {
  std::string path = temp_path("ember_fe_tensor.pt");
  auto t = torch::arange(12, torch::kDouble).view({3, 4}).t();  // non-contiguous: saved contiguous
  torch::save(t, path);
  torch::Tensor u;
  torch::load(u, path);
  EXPECT_TRUE(torch::equal(t, u));
  EXPECT_EQ(u.scalar_type(), torch::kDouble);
  auto w = torch::ones({2}, torch::requires_grad());
  torch::save(w, path);
  torch::load(u, path);
  EXPECT_TRUE(u.requires_grad());
  std::vector<torch::Tensor> list{torch::tensor({1, 2, 3}), torch::tensor({true}), torch::zeros({0, 2})};
  torch::save(list, path);
  std::vector<torch::Tensor> back;
  torch::load(back, path);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(torch::equal(back[0], list[0]));
  EXPECT_EQ(back[1].scalar_type(), torch::kBool);
  EXPECT_EQ(back[2].sizes(), torch::IntArrayRef({0, 2}));
  EXPECT_THROW(torch::load(u, path), c10::Error);  // a list is not a tensor
  std::remove(path.c_str());
}

TEST(FrontendSerialize, Errors) {
  std::string path = temp_path("ember_fe_bad.pt");
  torch::nn::Linear small(2, 3), big(4, 3);
  torch::save(small, path);
  try {
    torch::load(big, path);
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("size mismatch for weight: copying a param with shape [3, 2] from "
                                         "checkpoint, the shape in current model is [3, 4]"),
              std::string::npos)
        << e.what();
  }
  SerNet net;
  try {
    torch::load(net, path);
    FAIL();
  } catch (const c10::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("Unexpected key(s) in state_dict: \"weight\", \"bias\""), std::string::npos) << m;
    EXPECT_NE(m.find("Missing key(s) in state_dict: \"conv.weight\""), std::string::npos) << m;
  }
  {
    std::ofstream f(path, std::ios::binary);
    f << "not a checkpoint";
  }
  EXPECT_THROW(torch::load(net, path), c10::Error);
  EXPECT_THROW(torch::load(net, temp_path("ember_fe_missing_file.pt")), c10::Error);
  torch::optim::SGD opt(net->parameters(), 0.1);
  EXPECT_THROW(torch::save(opt, path), c10::NotImplementedError);
  std::remove(path.c_str());
}

// Damaged pickles (random byte flips, truncations, insertions of a valid checkpoint's data.pkl)
// must raise c10::Error or load, never crash or read outside a storage.
TEST(FrontendSerialize, MutatedPicklesRaiseOrLoad) {
  SerNet net;
  std::stringstream ss;
  torch::save(*net, ss);
  std::string good = ss.str();
  ember::serialize::ZipReader reader(ember::serialize::memory_source(good.data(), good.size()));
  std::string pkl = reader.read("archive/data.pkl");
  std::vector<std::pair<std::string, std::string>> storages;
  for (const auto& name : reader.names())
    if (name.rfind("archive/data/", 0) == 0) storages.emplace_back(name, reader.read(name));
  std::mt19937 rng(12345);
  int loaded = 0, raised = 0;
  for (int iter = 0; iter < 400; ++iter) {
    std::string bad = pkl;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % bad.size();
      switch (rng() % 3) {
        case 0:
          bad[pos] = static_cast<char>(rng());
          break;
        case 1:
          bad.resize(pos);
          break;
        default:
          bad.insert(pos, 1, static_cast<char>(rng()));
      }
      if (bad.empty()) bad = "\x80";
    }
    std::string bytes;
    ember::serialize::ZipWriter w(ember::serialize::vector_sink(&bytes));
    w.write_record("archive/data.pkl", bad.data(), bad.size());
    for (const auto& [name, data] : storages) w.write_record(name, data.data(), data.size());
    w.finish();
    std::stringstream in(bytes);
    try {
      torch::Tensor t;
      torch::serialize::InputArchive archive;
      archive.load_from(in);
      ++loaded;
    } catch (const c10::Error&) {
      ++raised;
    }
  }
  EXPECT_EQ(loaded + raised, 400);
  EXPECT_GT(raised, 300);
}
