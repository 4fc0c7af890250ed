// torch::nn in the C++ frontend: Module bookkeeping, holders, options, layers, containers,
// functional forms, init and printing. Printed forms are libtorch 2.13's for the same modules.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

namespace F = torch::nn::functional;

namespace {
template <typename T>
std::string str(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
bool close(const torch::Tensor& a, const torch::Tensor& b, double tol = 1e-5) {
  return a.sizes() == b.sizes() && torch::allclose(a.to(torch::kDouble), b.to(torch::kDouble), tol, tol);
}
}  // namespace

// Outside the anonymous namespace, so that its printed name is plain "NnTestNet".
struct NnTestNet : torch::nn::Module {
  NnTestNet() {
    fc = register_module("fc", torch::nn::Linear(4, 3));
    c = register_module("c", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 2, 3).stride(2).bias(false)));
    bn = register_module("bn", torch::nn::BatchNorm2d(2));
    seq = register_module("seq",
                          torch::nn::Sequential(torch::nn::ReLU(), torch::nn::Dropout(0.3), torch::nn::Linear(3, 1)));
    scale = register_parameter("scale", torch::ones({1}));
    register_buffer("buf", torch::zeros({2}));
  }
  torch::Tensor forward(torch::Tensor x) { return seq->forward(fc->forward(x)) * scale; }
  torch::nn::Linear fc{nullptr};
  torch::nn::Conv2d c{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::Sequential seq{nullptr};
  torch::Tensor scale;
};

TEST(FrontendNN, ModuleBookkeeping) {
  auto net = std::make_shared<NnTestNet>();
  std::vector<std::string> names;
  for (const auto& p : net->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"scale", "fc.weight", "fc.bias", "c.weight", "bn.weight", "bn.bias",
                                             "seq.2.weight", "seq.2.bias"}));
  std::vector<std::string> buffers;
  for (const auto& b : net->named_buffers()) buffers.push_back(b.key());
  EXPECT_EQ(buffers, (std::vector<std::string>{"buf", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}));
  EXPECT_EQ(net->parameters().size(), 8u);
  EXPECT_EQ(net->parameters(/*recurse=*/false).size(), 1u);
  EXPECT_EQ(net->children().size(), 4u);
  std::vector<std::string> mods;
  for (const auto& m : net->named_modules()) mods.push_back(m.key() + "=" + m.value()->name());
  EXPECT_EQ(mods.front(), "=NnTestNet");
  EXPECT_EQ(mods[1], "fc=torch::nn::LinearImpl");
  EXPECT_EQ(mods.back(), "seq.2=torch::nn::LinearImpl");
  EXPECT_EQ(net->name(), "NnTestNet");
  // train/eval reach every submodule.
  net->eval();
  EXPECT_FALSE(net->is_training());
  EXPECT_FALSE(net->seq[1]->is_training());
  net->train();
  EXPECT_TRUE(net->bn->is_training());
  EXPECT_THROW(net->register_parameter("scale", torch::ones({1})), c10::Error);
  EXPECT_THROW(net->register_parameter("a.b", torch::ones({1})), c10::Error);
  // A module on the stack cannot hand out a shared_ptr to itself.
  NnTestNet stack_net;
  EXPECT_THROW(stack_net.named_modules(), c10::Error);
  EXPECT_EQ(stack_net.named_modules("", false).size(), 7u);  // fc, c, bn, seq and seq's three
}

TEST(FrontendNN, HoldersAndAs) {
  torch::nn::Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_THROW(empty->forward(torch::ones({1})), c10::Error);
  torch::nn::Linear fc(2, 3);
  EXPECT_FALSE(fc.is_empty());
  auto x = torch::ones({5, 2});
  EXPECT_TRUE(close(fc(x), fc->forward(x)));
  std::shared_ptr<torch::nn::Module> base = fc.ptr();
  EXPECT_NE(base->as<torch::nn::Linear>(), nullptr);
  EXPECT_EQ(base->as<torch::nn::Conv2d>(), nullptr);
  EXPECT_EQ(fc->options.in_features(), 2);
}

TEST(FrontendNN, ToDtypeKeepsHandles) {
  auto net = std::make_shared<NnTestNet>();
  torch::Tensor w = net->fc->weight;
  net->to(torch::kDouble);
  EXPECT_EQ(w.scalar_type(), torch::kDouble);  // the same tensor, converted in place
  EXPECT_EQ(net->fc->weight.scalar_type(), torch::kDouble);
  EXPECT_EQ(net->bn->num_batches_tracked.scalar_type(), torch::kLong);  // integer buffers stay
  EXPECT_TRUE(w.requires_grad());
  auto y = net->forward(torch::ones({2, 4}, torch::kDouble));
  EXPECT_EQ(y.scalar_type(), torch::kDouble);
  y.sum().backward();
  EXPECT_TRUE(net->fc->weight.grad().defined());
  net->zero_grad();
  EXPECT_FALSE(net->fc->weight.grad().defined());
}

TEST(FrontendNN, Clone) {
  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::ReLU(), torch::nn::Linear(4, 1));
  auto copy = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(seq->clone());
  ASSERT_NE(copy, nullptr);
  auto x = torch::randn({2, 3});
  EXPECT_TRUE(close(seq->forward(x), copy->forward(x)));
  // Deep: changing the copy leaves the original alone.
  {
    torch::NoGradGuard no_grad;
    copy->parameters()[0].add_(1);
  }
  EXPECT_FALSE(close(seq->parameters()[0], copy->parameters()[0]));
  torch::nn::Linear fc(2, 2);
  auto fc2 = std::dynamic_pointer_cast<torch::nn::LinearImpl>(fc->clone());
  EXPECT_TRUE(close(fc->weight, fc2->weight));
  EXPECT_NE(fc->weight.data_ptr(), fc2->weight.data_ptr());
  EXPECT_THROW(NnTestNet().clone(), c10::Error);  // plain Modules are not Cloneable
}

TEST(FrontendNN, PrintsAsLibtorch) {
  auto net = std::make_shared<NnTestNet>();
  EXPECT_EQ(str(*net),
            "NnTestNet(\n"
            "  (fc): torch::nn::Linear(in_features=4, out_features=3, bias=true)\n"
            "  (c): torch::nn::Conv2d(1, 2, kernel_size=[3, 3], stride=[2, 2], bias=false)\n"
            "  (bn): torch::nn::BatchNorm2d(2, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)\n"
            "  (seq): torch::nn::Sequential(\n"
            "    (0): torch::nn::ReLU()\n"
            "    (1): torch::nn::Dropout(p=0.3, inplace=false)\n"
            "    (2): torch::nn::Linear(in_features=3, out_features=1, bias=true)\n"
            "  )\n"
            ")");
  EXPECT_EQ(str(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 2, {3, 4}).padding(1))),
            "torch::nn::Conv2d(1, 2, kernel_size=[3, 4], stride=[1, 1], padding=[1, 1])");
  EXPECT_EQ(str(torch::nn::Conv1d(torch::nn::Conv1dOptions(2, 4, 3).padding(torch::kSame))),
            "torch::nn::Conv1d(2, 4, kernel_size=3, stride=1, padding='same')");
  EXPECT_EQ(str(torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(2, 4, 3).stride(2).output_padding(1))),
            "torch::nn::ConvTranspose2d(2, 4, kernel_size=[3, 3], stride=[2, 2], output_padding=[1, 1])");
  EXPECT_EQ(str(torch::nn::Embedding(10, 3)), "torch::nn::Embedding(num_embeddings=10, embedding_dim=3)");
  EXPECT_EQ(str(torch::nn::LayerNorm(torch::nn::LayerNormOptions({4}))),
            "torch::nn::LayerNorm([4], eps=1e-05, elementwise_affine=true)");
  EXPECT_EQ(str(torch::nn::GroupNorm(2, 4)), "torch::nn::GroupNorm(2, 4, eps=1e-05, affine=true)");
  EXPECT_EQ(str(torch::nn::MaxPool2d(2)),
            "torch::nn::MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], "
            "ceil_mode=false)");
  EXPECT_EQ(str(torch::nn::AdaptiveAvgPool2d(torch::nn::AdaptiveAvgPool2dOptions({1, 1}))),
            "torch::nn::AdaptiveAvgPool2d(output_size=[1, 1])");
  EXPECT_EQ(str(torch::nn::LSTM(3, 4)),
            "torch::nn::LSTM(input_size=3, hidden_size=4, num_layers=1, bias=true, batch_first=false, dropout=0, "
            "bidirectional=false)");
  EXPECT_EQ(str(torch::nn::MultiheadAttention(4, 2)),
            "torch::nn::MultiheadAttention(\n"
            "  (out_proj): torch::nn::Linear(in_features=4, out_features=4, bias=true)\n"
            ")");
  EXPECT_EQ(str(torch::nn::CrossEntropyLoss()) + str(torch::nn::LeakyReLU()) + str(torch::nn::Functional(torch::relu)),
            "torch::nn::CrossEntropyLoss()torch::nn::LeakyReLU(negative_slope=0.01)torch::nn::Functional()");
  EXPECT_EQ(str(torch::nn::ModuleList(torch::nn::Linear(1, 1), torch::nn::ReLU())),
            "torch::nn::ModuleList(\n"
            "  (0): torch::nn::Linear(in_features=1, out_features=1, bias=true)\n"
            "  (1): torch::nn::ReLU()\n"
            ")");
}

TEST(FrontendNN, LayersAgainstTheirDefinitions) {
  torch::manual_seed(0);
  auto x = torch::randn({4, 3});
  torch::nn::Linear fc(3, 2);
  EXPECT_TRUE(close(fc(x), torch::matmul(x, fc->weight.t()) + fc->bias));
  torch::nn::Linear nobias(torch::nn::LinearOptions(3, 2).bias(false));
  EXPECT_FALSE(nobias->bias.defined());
  EXPECT_EQ(nobias->parameters().size(), 1u);
  // Default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  double bound = 1 / std::sqrt(3.0);
  EXPECT_LE(fc->weight.abs().max().item<double>(), bound);

  auto img = torch::randn({2, 1, 8, 8});
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 4, 3).stride(2).padding(1));
  EXPECT_EQ(conv(img).sizes(), torch::IntArrayRef({2, 4, 4, 4}));
  EXPECT_TRUE(close(conv(img), torch::conv2d(img, conv->weight, conv->bias, 2, 1)));
  torch::nn::Conv2d reflect(torch::nn::Conv2dOptions(1, 1, 3).padding(1).padding_mode(torch::kReflect));
  EXPECT_TRUE(close(reflect(img), F::conv2d(F::pad(img, F::PadFuncOptions({1, 1, 1, 1}).mode(torch::kReflect)),
                                            reflect->weight, F::Conv2dFuncOptions().bias(reflect->bias))));
  torch::nn::ConvTranspose2d up(torch::nn::ConvTranspose2dOptions(4, 2, 4).stride(2).padding(1));
  EXPECT_EQ(up(conv(img)).sizes(), torch::IntArrayRef({2, 2, 8, 8}));

  torch::nn::BatchNorm1d bn(3);
  auto b = torch::randn({16, 3}) * 2 + 1;
  auto y = bn(b);
  EXPECT_TRUE(close(y.mean(0), torch::zeros({3}), 1e-5));
  EXPECT_TRUE(close(bn->running_mean, 0.1 * b.mean(0)));
  EXPECT_TRUE(close(bn->running_var, 0.9 + 0.1 * b.var(0, /*unbiased=*/true)));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  bn->eval();
  EXPECT_TRUE(close(bn(b), (b - bn->running_mean) / torch::sqrt(bn->running_var + 1e-5)));
  EXPECT_THROW(torch::nn::BatchNorm2d(3)(b), c10::Error);

  torch::nn::Dropout drop(0.5);
  drop->eval();
  EXPECT_TRUE(close(drop(b), b));
  drop->train();
  auto d = drop(torch::ones({1000}));
  EXPECT_TRUE(((d == 0) | (d == 2)).all().item<bool>());

  torch::nn::Embedding emb(torch::nn::EmbeddingOptions(5, 2).padding_idx(0));
  EXPECT_EQ(emb->weight.index({0}).abs().sum().item<float>(), 0.0f);
  auto idx = torch::tensor({{0, 3}, {4, 4}});
  EXPECT_TRUE(close(emb(idx), emb->weight.index({idx})));
  auto pre = torch::nn::Embedding::from_pretrained(torch::eye(3));
  EXPECT_FALSE(pre->weight.requires_grad());

  torch::nn::LayerNorm ln(torch::nn::LayerNormOptions({3}));
  auto l = ln(b);
  EXPECT_TRUE(close(l.mean(1), torch::zeros({16}), 1e-5));
  torch::nn::GroupNorm gn(1, 3);
  EXPECT_TRUE(close(gn(b.unsqueeze(2)).squeeze(2), l, 1e-4));
}

TEST(FrontendNN, ActivationsAndLosses) {
  auto x = torch::tensor({-2.0, -0.5, 0.0, 1.5});
  EXPECT_TRUE(close(torch::nn::ReLU()(x), torch::tensor({0.0, 0.0, 0.0, 1.5})));
  EXPECT_TRUE(close(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.1))(x),
                    torch::tensor({-0.2, -0.05, 0.0, 1.5})));
  EXPECT_TRUE(close(torch::nn::Sigmoid()(x), 1 / (1 + torch::exp(-x))));
  EXPECT_TRUE(close(torch::nn::Tanh()(x), torch::tanh(x)));
  EXPECT_TRUE(close(torch::nn::Softmax(0)(x).sum(), torch::tensor(1.0)));
  EXPECT_TRUE(close(torch::nn::LogSoftmax(0)(x), torch::log_softmax(x, 0)));
  EXPECT_TRUE(close(torch::nn::Hardtanh()(x), x.clamp(-1, 1)));
  EXPECT_TRUE(close(torch::nn::Flatten()(torch::ones({2, 3, 4})), torch::ones({2, 12})));
  auto target = torch::tensor({0.5, 0.5, 0.0, 1.0});
  auto d = x - target;
  EXPECT_TRUE(close(torch::nn::MSELoss()(x, target), (d * d).mean()));
  EXPECT_TRUE(close(torch::nn::MSELoss(torch::nn::MSELossOptions(torch::kSum))(x, target), (d * d).sum()));
  EXPECT_TRUE(close(torch::nn::L1Loss()(x, target), d.abs().mean()));
  auto p = torch::sigmoid(x);
  EXPECT_TRUE(
      close(torch::nn::BCELoss()(p, target), -(target * torch::log(p) + (1 - target) * torch::log(1 - p)).mean()));
  EXPECT_TRUE(close(torch::nn::BCEWithLogitsLoss()(x, target), torch::nn::BCELoss()(p, target)));
  auto logits = torch::tensor({{1.0, 2.0, 0.5}, {0.1, 0.2, 3.0}});
  auto cls = torch::tensor({1, 2});
  auto ce = torch::nn::CrossEntropyLoss()(logits, cls);
  auto lsm = torch::log_softmax(logits, 1);
  EXPECT_TRUE(close(ce, -(lsm.index({0, 1}) + lsm.index({1, 2})) / 2));
  EXPECT_TRUE(close(torch::nn::NLLLoss()(lsm, cls), ce));
  EXPECT_TRUE(close(torch::nll_loss(lsm, cls, {}, torch::Reduction::Sum), ce * 2));
  EXPECT_TRUE(close(F::cross_entropy(logits, cls, F::CrossEntropyFuncOptions().ignore_index(2)), -lsm.index({0, 1})));
  EXPECT_THROW(torch::nn::CrossEntropyLoss()(logits, torch::tensor({1})), c10::Error);
  EXPECT_TRUE(close(torch::nn::SmoothL1Loss()(x, target), torch::nn::HuberLoss()(x, target)));
}

TEST(FrontendNN, Functional) {
  auto img = torch::randn({1, 2, 6, 6});
  EXPECT_EQ(F::max_pool2d(img, F::MaxPool2dFuncOptions(2)).sizes(), torch::IntArrayRef({1, 2, 3, 3}));
  EXPECT_TRUE(close(F::max_pool2d(img, F::MaxPool2dFuncOptions(2)), torch::max_pool2d(img, 2)));
  EXPECT_TRUE(close(F::avg_pool2d(img, F::AvgPool2dFuncOptions(3)), torch::avg_pool2d(img, 3)));
  EXPECT_EQ(F::adaptive_avg_pool2d(img, F::AdaptiveAvgPool2dFuncOptions({1, std::nullopt})).sizes(),
            torch::IntArrayRef({1, 2, 1, 6}));
  EXPECT_TRUE(close(F::dropout(img, F::DropoutFuncOptions().p(0.5).training(false)), img));
  EXPECT_TRUE(close(F::relu(img), torch::relu(img)));
  EXPECT_TRUE(close(F::log_softmax(img, 1), torch::log_softmax(img, 1)));
  EXPECT_TRUE(
      close(F::normalize(torch::tensor({{3.0, 4.0}}), F::NormalizeFuncOptions().dim(1)), torch::tensor({{0.6, 0.8}})));
  EXPECT_EQ(F::interpolate(img, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2})).sizes(),
            torch::IntArrayRef({1, 2, 12, 12}));
  EXPECT_TRUE(close(F::pad(torch::tensor({{1.0, 2.0}}), F::PadFuncOptions({1, 2}).value(9)),
                    torch::tensor({{9.0, 1.0, 2.0, 9.0, 9.0}})));
  EXPECT_TRUE(close(F::pad(torch::tensor({{1.0, 2.0, 3.0}}), F::PadFuncOptions({2, 1}).mode(torch::kReflect)),
                    torch::tensor({{3.0, 2.0, 1.0, 2.0, 3.0, 2.0}})));
  EXPECT_TRUE(close(F::one_hot(torch::tensor({0, 2}), 3), torch::tensor({{1, 0, 0}, {0, 0, 1}})));
  auto w = torch::randn({4, 2, 3, 3});
  EXPECT_TRUE(close(F::conv2d(img, w, F::Conv2dFuncOptions().padding(torch::kSame)), torch::conv2d(img, w, {}, 1, 1)));
}

TEST(FrontendNN, Containers) {
  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::Functional(torch::relu), torch::nn::Linear(4, 2));
  auto x = torch::randn({5, 3});
  auto ref = seq[2]->as<torch::nn::Linear>()->forward(torch::relu(seq->at<torch::nn::LinearImpl>(0).forward(x)));
  EXPECT_TRUE(close(seq->forward(x), ref));
  EXPECT_EQ(seq->size(), 3u);
  torch::nn::Sequential named({{"fc", torch::nn::Linear(3, 2)}, {"act", torch::nn::Tanh()}});
  EXPECT_TRUE(named->named_children().contains("fc"));
  EXPECT_EQ(named->forward(x).sizes(), torch::IntArrayRef({5, 2}));
  torch::nn::Sequential empty;
  EXPECT_THROW(empty->forward(x), c10::Error);
  seq->push_back(torch::nn::Sequential(torch::nn::Sigmoid()));  // nested
  EXPECT_GE(seq->forward(x).min().item<float>(), 0.0f);

  torch::nn::ModuleList list(torch::nn::Linear(3, 3), torch::nn::Linear(3, 3));
  list->push_back(torch::nn::ReLU());
  EXPECT_EQ(list->size(), 3u);
  EXPECT_EQ(list->parameters().size(), 4u);
  torch::Tensor h = x;
  for (const auto& m : *list)
    if (auto* l = m->as<torch::nn::Linear>()) h = l->forward(h);
  EXPECT_EQ(h.sizes(), x.sizes());

  torch::nn::ModuleDict dict(torch::OrderedDict<std::string, std::shared_ptr<torch::nn::Module>>{
      {"a", torch::nn::Linear(1, 1).ptr()}, {"b", torch::nn::ReLU().ptr()}});
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(dict->contains("a"));
  dict->pop("a");
  EXPECT_FALSE(dict->contains("a"));
  EXPECT_EQ(dict->parameters().size(), 0u);

  torch::nn::Functional scaled(torch::leaky_relu, 0.5);
  EXPECT_TRUE(close(scaled(torch::tensor({-2.0})), torch::tensor({-1.0})));
}

TEST(FrontendNN, InitFunctions) {
  auto w = torch::empty({30, 40});
  torch::nn::init::xavier_uniform_(w);
  double bound = std::sqrt(6.0 / 70);
  EXPECT_LE(w.abs().max().item<double>(), bound);
  EXPECT_GT(w.abs().max().item<double>(), 0.5 * bound);
  torch::nn::init::constant_(w, 0.25);
  EXPECT_EQ(w.sum().item<float>(), 300.0f);
  torch::nn::init::eye_(w);
  EXPECT_EQ(w.sum().item<float>(), 30.0f);
  torch::nn::init::kaiming_normal_(w, 0, torch::kFanIn, torch::kReLU);
  EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / 40), 0.02);
  EXPECT_NEAR(torch::nn::init::calculate_gain(torch::kTanh), 5.0 / 3, 1e-12);
  auto q = torch::empty({4, 6});
  torch::nn::init::orthogonal_(q);
  EXPECT_TRUE(close(torch::matmul(q, q.t()), torch::eye(4), 1e-5));
}

TEST(FrontendNN, Recurrent) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true).batch_first(true));
  std::vector<std::string> names;
  for (const auto& p : lstm->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names.size(), 16u);
  EXPECT_EQ(names[0], "weight_ih_l0");
  EXPECT_EQ(names[4], "weight_ih_l0_reverse");
  EXPECT_EQ(lstm->named_parameters()["weight_ih_l1"].sizes(), torch::IntArrayRef({20, 10}));
  auto x = torch::randn({2, 7, 3});
  auto [out, state] = lstm->forward(x);
  EXPECT_EQ(out.sizes(), torch::IntArrayRef({2, 7, 10}));
  EXPECT_EQ(std::get<0>(state).sizes(), torch::IntArrayRef({4, 2, 5}));
  // One layer, one direction: the loop over LSTMCell gives the same outputs.
  torch::nn::LSTM one(3, 4);
  torch::nn::LSTMCell cell(3, 4);
  {
    torch::NoGradGuard no_grad;
    cell->weight_ih.copy_(one->named_parameters()["weight_ih_l0"]);
    cell->weight_hh.copy_(one->named_parameters()["weight_hh_l0"]);
    cell->bias_ih.copy_(one->named_parameters()["bias_ih_l0"]);
    cell->bias_hh.copy_(one->named_parameters()["bias_hh_l0"]);
  }
  auto seq = torch::randn({6, 2, 3});
  auto [o1, s1] = one->forward(seq);
  std::tuple<torch::Tensor, torch::Tensor> hc = {torch::zeros({2, 4}), torch::zeros({2, 4})};
  for (int64_t t = 0; t < 6; ++t) hc = cell->forward(seq[t], hc);
  EXPECT_TRUE(close(o1[5], std::get<0>(hc)));
  EXPECT_TRUE(close(std::get<1>(s1)[0], std::get<1>(hc)));
  torch::nn::GRU gru(torch::nn::GRUOptions(3, 4).num_layers(2));
  auto [go, gh] = gru->forward(seq);
  EXPECT_EQ(go.sizes(), torch::IntArrayRef({6, 2, 4}));
  EXPECT_EQ(gh.sizes(), torch::IntArrayRef({2, 2, 4}));
  go.sum().backward();
  EXPECT_TRUE(gru->parameters()[0].grad().defined());
  // The fused GRU layer against the loop over GRUCell, as for the LSTM above.
  torch::nn::GRU one_gru(3, 4);
  torch::nn::GRUCell gcell(3, 4);
  {
    torch::NoGradGuard no_grad;
    gcell->weight_ih.copy_(one_gru->named_parameters()["weight_ih_l0"]);
    gcell->weight_hh.copy_(one_gru->named_parameters()["weight_hh_l0"]);
    gcell->bias_ih.copy_(one_gru->named_parameters()["bias_ih_l0"]);
    gcell->bias_hh.copy_(one_gru->named_parameters()["bias_hh_l0"]);
  }
  auto [g1, gs1] = one_gru->forward(seq);
  torch::Tensor gh_loop = torch::zeros({2, 4});
  for (int64_t t = 0; t < 6; ++t) gh_loop = gcell->forward(seq[t], gh_loop);
  EXPECT_TRUE(close(g1[5], gh_loop));
  EXPECT_TRUE(close(gs1[0], gh_loop));
  torch::nn::MultiheadAttention mha(8, 2);
  auto q = torch::randn({5, 3, 8});
  auto [attn, weights] = mha->forward(q, q, q);
  EXPECT_EQ(attn.sizes(), torch::IntArrayRef({5, 3, 8}));
  EXPECT_EQ(weights.sizes(), torch::IntArrayRef({3, 5, 5}));
  EXPECT_TRUE(close(weights.sum(-1), torch::ones({3, 5})));
}
