// torch::optim in the C++ frontend: the optimizers (over ember's fused steps) against scalar
// reference loops of PyTorch's update rules, param groups, state, LBFGS and the schedulers.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace {
std::vector<double> values(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}
void expect_near(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "at " << i;
}
// loss = sum(c * p^2): gradient 2 c p.
torch::Tensor quad_loss(const torch::Tensor& p, const torch::Tensor& c) { return (c * p * p).sum(); }
}  // namespace

TEST(FrontendOptim, SGDMomentumNesterovMatchesReference) {
  auto c = torch::tensor({1.0, 0.5, 2.0}, torch::kDouble);
  auto p = torch::tensor({1.0, -2.0, 0.5}, torch::dtype(torch::kDouble).requires_grad(true));
  torch::optim::SGD opt({p}, torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.01));
  std::vector<double> ref = values(p), buf(3, 0), cc = values(c);
  for (int step = 0; step < 5; ++step) {
    opt.zero_grad();
    quad_loss(p, c).backward();
    opt.step();
    for (size_t i = 0; i < 3; ++i) {
      double g = 2 * cc[i] * ref[i] + 0.01 * ref[i];
      buf[i] = step == 0 ? g : 0.9 * buf[i] + g;
      ref[i] -= 0.1 * (g + 0.9 * buf[i]);
    }
  }
  expect_near(values(p), ref, 1e-12);
  auto& st = static_cast<torch::optim::SGDParamState&>(*opt.state().at(p.impl()));
  expect_near(values(st.momentum_buffer()), buf, 1e-12);
  EXPECT_THROW(torch::optim::SGD({p}, torch::optim::SGDOptions(0.1).nesterov(true)), c10::ValueError);
  EXPECT_THROW(torch::optim::SGD({p}, torch::optim::SGDOptions(-1)), c10::ValueError);
}

TEST(FrontendOptim, AdamAndAdamWMatchReference) {
  for (bool decoupled : {false, true}) {
    auto c = torch::tensor({1.0, 0.5, 2.0}, torch::kDouble);
    auto p = torch::tensor({1.0, -2.0, 0.5}, torch::dtype(torch::kDouble).requires_grad(true));
    std::unique_ptr<torch::optim::Optimizer> opt;
    if (decoupled)
      opt = std::make_unique<torch::optim::AdamW>(std::vector<torch::Tensor>{p},
                                                  torch::optim::AdamWOptions(0.01).weight_decay(0.1));
    else
      opt = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{p},
                                                 torch::optim::AdamOptions(0.01).weight_decay(0.1).amsgrad(true));
    std::vector<double> ref = values(p), m(3, 0), v(3, 0), vmax(3, 0), cc = values(c);
    for (int step = 1; step <= 4; ++step) {
      opt->zero_grad();
      quad_loss(p, c).backward();
      opt->step();
      for (size_t i = 0; i < 3; ++i) {
        double g = 2 * cc[i] * ref[i];
        if (decoupled)
          ref[i] *= 1 - 0.01 * 0.1;
        else
          g += 0.1 * ref[i];
        m[i] = 0.9 * m[i] + 0.1 * g;
        v[i] = 0.999 * v[i] + 0.001 * g * g;
        double vv = v[i];
        if (!decoupled) vv = vmax[i] = std::max(vmax[i], v[i]);
        double bc1 = 1 - std::pow(0.9, step), bc2 = 1 - std::pow(0.999, step);
        ref[i] -= 0.01 / bc1 * m[i] / (std::sqrt(vv) / std::sqrt(bc2) + 1e-8);
      }
    }
    expect_near(values(p), ref, 1e-12);
    auto& st = static_cast<torch::optim::AdamParamState&>(*opt->state().at(p.impl()));
    EXPECT_EQ(st.step(), 4);
    expect_near(values(st.exp_avg()), m, 1e-12);
  }
}

TEST(FrontendOptim, RMSpropAndAdagradMatchReference) {
  auto c = torch::tensor({1.0, 0.5}, torch::kDouble);
  auto p = torch::tensor({1.0, -2.0}, torch::dtype(torch::kDouble).requires_grad(true));
  auto q = torch::tensor({1.0, -2.0}, torch::dtype(torch::kDouble).requires_grad(true));
  torch::optim::RMSprop rms({p}, torch::optim::RMSpropOptions(0.01).momentum(0.5).centered(true));
  torch::optim::Adagrad ada({q}, torch::optim::AdagradOptions(0.1).lr_decay(0.01).initial_accumulator_value(0.1));
  std::vector<double> rp = values(p), rq = values(q), sq(2, 0), mb(2, 0), ga(2, 0), sum(2, 0.1), cc = values(c);
  for (int step = 1; step <= 3; ++step) {
    rms.zero_grad();
    ada.zero_grad();
    quad_loss(p, c).backward();
    quad_loss(q, c).backward();
    rms.step();
    ada.step();
    for (size_t i = 0; i < 2; ++i) {
      double g = 2 * cc[i] * rp[i];
      sq[i] = 0.99 * sq[i] + 0.01 * g * g;
      ga[i] = 0.99 * ga[i] + 0.01 * g;
      double avg = std::sqrt(sq[i] - ga[i] * ga[i]) + 1e-8;
      mb[i] = 0.5 * mb[i] + g / avg;
      rp[i] -= 0.01 * mb[i];
      double h = 2 * cc[i] * rq[i];
      double clr = 0.1 / (1 + (step - 1) * 0.01);
      sum[i] += h * h;
      rq[i] -= clr * h / (std::sqrt(sum[i]) + 1e-10);
    }
  }
  expect_near(values(p), rp, 1e-12);
  expect_near(values(q), rq, 1e-12);
}

TEST(FrontendOptim, ParamGroupsAndZeroGrad) {
  auto a = torch::ones({2}, torch::requires_grad());
  auto b = torch::ones({2}, torch::requires_grad());
  auto unused = torch::ones({2}, torch::requires_grad());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{a});
  groups.emplace_back(std::vector<torch::Tensor>{b, unused}, std::make_unique<torch::optim::SGDOptions>(1.0));
  torch::optim::SGD opt(groups, torch::optim::SGDOptions(0.1));
  EXPECT_EQ(opt.param_groups().size(), 2u);
  EXPECT_EQ(opt.size(), 3u);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  (a.sum() + b.sum()).backward();
  opt.step();                                // `unused` has no gradient: skipped
  expect_near(values(a), {0.9, 0.9}, 1e-7);  // float32 1 - 0.1
  expect_near(values(b), {0.0, 0.0}, 0);
  expect_near(values(unused), {1.0, 1.0}, 0);
  opt.zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(values(a.grad()), (std::vector<double>{0.0, 0.0}));
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  EXPECT_THROW(opt.add_param_group(torch::optim::OptimizerParamGroup({a})), c10::Error);
  auto nonleaf = a * 2;
  EXPECT_THROW(torch::optim::SGD({nonleaf}, 0.1), c10::Error);
}

TEST(FrontendOptim, ClosureAndLBFGS) {
  // Minimizes (x - 3)^2 + 2 (y + 1)^2: a quadratic, so LBFGS converges in a few iterations.
  auto p = torch::zeros({2}, torch::dtype(torch::kDouble).requires_grad(true));
  torch::optim::LBFGS opt({p}, torch::optim::LBFGSOptions(1.0).max_iter(50));
  auto closure = [&] {
    opt.zero_grad();
    auto loss = (p[0] - 3).pow(2) + 2 * (p[1] + 1).pow(2);
    loss.backward();
    return loss;
  };
  auto first = opt.step(closure);
  EXPECT_NEAR(first.item<double>(), 11.0, 1e-12);  // the loss before the step
  for (int i = 0; i < 5; ++i) opt.step(closure);
  expect_near(values(p), {3.0, -1.0}, 1e-4);  // stops once the loss changes by < tolerance_change
  torch::optim::SGD sgd({p}, 0.1);
  auto loss = sgd.step([&] {
    sgd.zero_grad();
    auto l = p.sum();
    l.backward();
    return l;
  });
  EXPECT_NEAR(loss.item<double>(), 2.0, 1e-4);
  torch::optim::LBFGS wolfe({p}, torch::optim::LBFGSOptions().line_search_fn("strong_wolfe"));
  EXPECT_THROW(wolfe.step(closure), c10::NotImplementedError);
}

TEST(FrontendOptim, Schedulers) {
  auto w = torch::ones({1}, torch::requires_grad());
  torch::optim::SGD opt({w}, torch::optim::SGDOptions(1.0));
  auto lr = [&] { return opt.param_groups()[0].options().get_lr(); };
  // libtorch's StepLR: lrs after each step() are 1 1 0.5 0.5 0.25 0.25 for step_size 2.
  torch::optim::StepLR step(opt, 2, 0.5);
  std::vector<double> seen;
  for (int i = 0; i < 6; ++i) {
    step.step();
    seen.push_back(lr());
  }
  EXPECT_EQ(seen, (std::vector<double>{1, 1, 0.5, 0.5, 0.25, 0.25}));
  // The Python-style schedulers: after k steps, the lr of torch.optim.lr_scheduler at epoch k.
  torch::optim::SGD opt2({w}, torch::optim::SGDOptions(1.0));
  torch::optim::ExponentialLR ex(opt2, 0.5);
  ex.step();
  ex.step();
  EXPECT_DOUBLE_EQ(opt2.param_groups()[0].options().get_lr(), 0.25);
  torch::optim::SGD opt3({w}, torch::optim::SGDOptions(1.0));
  torch::optim::MultiStepLR ms(opt3, {2, 3}, 0.1);
  std::vector<double> m;
  for (int i = 0; i < 4; ++i) {
    ms.step();
    m.push_back(opt3.param_groups()[0].options().get_lr());
  }
  expect_near(m, {1.0, 0.1, 0.01, 0.01}, 1e-15);
  torch::optim::SGD opt4({w}, torch::optim::SGDOptions(1.0));
  torch::optim::CosineAnnealingLR cos(opt4, 4, 0.0);
  for (int i = 0; i < 2; ++i) cos.step();
  EXPECT_NEAR(opt4.param_groups()[0].options().get_lr(), 0.5, 1e-12);
  torch::optim::SGD opt5({w}, torch::optim::SGDOptions(1.0));
  torch::optim::ReduceLROnPlateauScheduler plateau(opt5, torch::optim::ReduceLROnPlateauScheduler::min, 0.5, 1);
  for (float metric : {1.0f, 0.5f, 0.6f, 0.6f, 0.7f}) plateau.step(metric);
  EXPECT_DOUBLE_EQ(opt5.param_groups()[0].options().get_lr(), 0.5);
}

TEST(FrontendOptim, TrainsAModule) {
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(2, 16), torch::nn::Tanh(), torch::nn::Linear(16, 1));
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(0.05));
  auto x = torch::rand({64, 2}) * 2 - 1;
  auto y = (x.index({torch::indexing::Slice(), 0}) * x.index({torch::indexing::Slice(), 1})).unsqueeze(1);
  double first = 0, last = 0;
  for (int i = 0; i < 200; ++i) {
    opt.zero_grad();
    auto loss = torch::mse_loss(model->forward(x), y);
    loss.backward();
    opt.step();
    if (i == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  EXPECT_LT(last, 0.1 * first);
}
