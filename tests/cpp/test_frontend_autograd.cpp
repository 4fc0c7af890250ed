// The C++ frontend's autograd: backward/grad, grad modes, hooks and custom Functions with an
// AutogradContext. Gradients are checked against their closed forms.
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {
std::vector<double> values(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}
}  // namespace

TEST(FrontendAutograd, BackwardAndGradFn) {
  auto x = torch::tensor({1.0, 2.0, 3.0}, torch::requires_grad());
  auto y = (x * x + 1).sum();
  EXPECT_EQ(y.grad_fn()->name(), "SumBackward0");
  EXPECT_EQ((x * x).grad_fn()->name(), "MulBackward0");
  EXPECT_EQ(x.view({3}).grad_fn()->name(), "ViewBackward0");
  EXPECT_EQ(x.sum(0).grad_fn()->name(), "SumBackward1");
  // libtorch's overload names: Tensor op Scalar records the Scalar overload's node.
  EXPECT_EQ((x + 2).grad_fn()->name(), "AddBackward1");
  EXPECT_EQ((2 * x).grad_fn()->name(), "MulBackward1");
  EXPECT_EQ((x / 2).grad_fn()->name(), "DivBackward1");
  EXPECT_EQ((2 - x).grad_fn()->name(), "SubBackward0");  // filled tensor minus x, in place
  EXPECT_EQ(x.pow(2).grad_fn()->name(), "PowBackward0");
  EXPECT_EQ(x.pow(x).grad_fn()->name(), "PowBackward1");
  EXPECT_EQ(torch::pow(2, x).grad_fn()->name(), "PowBackward2");
  EXPECT_EQ(x.mean().grad_fn()->name(), "MeanBackward0");
  EXPECT_EQ(x.mean(0).grad_fn()->name(), "MeanBackward1");
  EXPECT_EQ(x.grad_fn(), nullptr);
  y.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 4, 6}));
  // Gradients accumulate until zeroed.
  (x * 3).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{5, 7, 9}));
  x.grad().zero_();
  (x * x).backward(torch::ones({3}));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 4, 6}));
  try {
    (x * 2).backward();
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_EQ(e.msg(), "grad can be implicitly created only for scalar outputs");
  }
}

TEST(FrontendAutograd, GradAndHigherOrder) {
  auto x = torch::tensor({0.5, 2.0}, torch::dtype(torch::kDouble).requires_grad(true));
  auto y = (x * x * x).sum();
  auto g = torch::autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_EQ(values(g), (std::vector<double>{0.75, 12.0}));  // 3x^2
  auto gg = torch::autograd::grad({g.sum()}, {x})[0];
  EXPECT_EQ(values(gg), (std::vector<double>{3.0, 12.0}));  // 6x
  EXPECT_FALSE(x.grad().defined());                         // grad() does not accumulate
  auto z = x.sum();
  EXPECT_THROW(torch::autograd::grad({z}, {torch::ones({2}, torch::requires_grad())}), c10::Error);
  auto w = torch::ones({2}, torch::requires_grad());
  auto unused = torch::autograd::grad({x.sum()}, {w}, {}, std::nullopt, false, /*allow_unused=*/true);
  EXPECT_FALSE(unused[0].defined());
}

TEST(FrontendAutograd, GradModes) {
  auto x = torch::ones({2}, torch::requires_grad());
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE((x * 2).requires_grad());
    EXPECT_FALSE(torch::GradMode::is_enabled());
  }
  EXPECT_TRUE((x * 2).requires_grad());
  {
    c10::InferenceMode guard;
    EXPECT_FALSE((x * 2).requires_grad());
  }
  auto d = (x * 2).detach();
  EXPECT_FALSE(d.requires_grad());
  auto leaf = torch::zeros({2});
  leaf.requires_grad_();
  EXPECT_TRUE(leaf.requires_grad());
  EXPECT_THROW((leaf * 2).requires_grad_(false), c10::Error);  // only leaves may change it
}

TEST(FrontendAutograd, Hooks) {
  auto x = torch::ones({2}, torch::requires_grad());
  x.register_hook([](torch::Tensor g) { return g * 10; });
  auto y = x * 3;
  int seen = 0;
  y.register_hook([&](torch::Tensor g) { seen += static_cast<int>(g.sum().item<float>()); });
  y.sum().backward();
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{30, 30}));
}

namespace {
// y = x * w * mul (mul a number kept in saved_data): gradients x: w*mul, w: x*mul.
struct MulConstant : public torch::autograd::Function<MulConstant> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x, torch::Tensor w, double mul) {
    ctx->saved_data["mul"] = mul;
    ctx->save_for_backward({x, w});
    return x * w * mul;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    double mul = ctx->saved_data["mul"].toDouble();
    auto g = grad_outputs[0];
    torch::Tensor gx = ctx->needs_input_grad(0) ? g * saved[1] * mul : torch::Tensor();
    torch::Tensor gw = ctx->needs_input_grad(1) ? g * saved[0] * mul : torch::Tensor();
    return {gx, gw, torch::Tensor()};
  }
};

// Returns too few gradients: an error, as in libtorch.
struct Broken : public torch::autograd::Function<Broken> {
  static torch::Tensor forward(torch::autograd::AutogradContext*, torch::Tensor a, torch::Tensor b) { return a + b; }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*, torch::autograd::variable_list g) {
    return {g[0]};
  }
};

// Returns a gradient for the tensor only, though forward has two arguments: libtorch counts every
// argument (a number's gradient slot must be there, undefined).
struct ScaleBy : public torch::autograd::Function<ScaleBy> {
  static torch::Tensor forward(torch::autograd::AutogradContext*, torch::Tensor x, double k) { return x * k; }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*, torch::autograd::variable_list g) {
    return {g[0]};
  }
};

// y = x^2 with a backward written in differentiable ops (so double backward works).
struct Square : public torch::autograd::Function<Square> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list g) {
    auto x = ctx->get_saved_variables()[0];
    return {2 * x * g[0]};
  }
};
}  // namespace

TEST(FrontendAutograd, CustomFunction) {
  auto x = torch::tensor({1.0, 2.0}, torch::dtype(torch::kDouble).requires_grad(true));
  auto w = torch::tensor({3.0, 4.0}, torch::dtype(torch::kDouble).requires_grad(true));
  auto y = MulConstant::apply(x, w, 0.5);
  EXPECT_EQ(y.grad_fn()->name(), "torch::autograd::CppNode<(anonymous namespace)::MulConstant>");
  EXPECT_EQ(values(y), (std::vector<double>{1.5, 4.0}));
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1.5, 2.0}));
  EXPECT_EQ(values(w.grad()), (std::vector<double>{0.5, 1.0}));
  // Saved tensors are freed after backward: a second backward raises.
  EXPECT_THROW(y.sum().backward(), c10::Error);
  // An in-place change to a saved tensor is caught.
  auto x2 = x.detach().clone().requires_grad_(true);
  auto a = x2 * 1;
  auto y2 = MulConstant::apply(a, w, 1.0);
  a.mul_(2);
  EXPECT_THROW(y2.sum().backward(), c10::Error);
  // Without grad mode nothing is recorded.
  {
    torch::NoGradGuard no_grad;
    EXPECT_FALSE(MulConstant::apply(x, w, 2.0).requires_grad());
  }
  EXPECT_THROW(Broken::apply(x, w).sum().backward(), c10::Error);
  try {
    ScaleBy::apply(x, 2.0).sum().backward();
    FAIL();
  } catch (const c10::Error& e) {
    EXPECT_EQ(e.msg(),
              "function torch::autograd::CppNode<(anonymous namespace)::ScaleBy> returned an incorrect number of "
              "gradients (expected 2, got 1)");
  }
}

TEST(FrontendAutograd, CustomFunctionHigherOrder) {
  auto x = torch::tensor({1.5, -2.0}, torch::dtype(torch::kDouble).requires_grad(true));
  auto y = Square::apply(x).sum();
  auto g = torch::autograd::grad({y}, {x}, {}, std::nullopt, true)[0];
  EXPECT_EQ(values(g), (std::vector<double>{3.0, -4.0}));
  auto gg = torch::autograd::grad({g.sum()}, {x})[0];
  EXPECT_EQ(values(gg), (std::vector<double>{2.0, 2.0}));
}
