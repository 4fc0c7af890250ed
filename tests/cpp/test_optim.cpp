// The fused optimizer steps from C++ (ember/optim/optim.h) against scalar reference loops.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {
std::vector<double> values(const Tensor& t) {
  Tensor c = contiguous(to_dtype(t, ScalarType::Float64));
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}
Tensor from(const std::vector<double>& v, Shape shape) {
  Tensor t = empty(shape, ScalarType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t;
}
}  // namespace

TEST(Optim, SgdMomentumNesterovMatchesReference) {
  std::vector<double> p0 = {1.0, -2.0, 0.5, 3.0}, g0 = {0.1, 0.2, -0.3, 0.4};
  optim::TensorList params = {from(p0, {4})}, grads = {from(g0, {4})}, bufs;
  optim::SgdOptions o;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.weight_decay = 0.01;
  o.nesterov = true;
  std::vector<double> p = p0, buf(4);
  for (int step = 0; step < 3; ++step) {
    optim::sgd_step(params, grads, bufs, o);
    for (int i = 0; i < 4; ++i) {
      double d = g0[i] + 0.01 * p[i];
      buf[i] = step == 0 ? d : buf[i] * 0.9 + d;
      p[i] -= 0.1 * (d + 0.9 * buf[i]);
    }
  }
  ASSERT_EQ(bufs.size(), 1u);
  std::vector<double> got = values(params[0]), got_buf = values(bufs[0]);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(got[i], p[i], 1e-14);
    EXPECT_NEAR(got_buf[i], buf[i], 1e-14);
  }
}

TEST(Optim, AdamNonContiguousParamAndStepCounter) {
  // A transposed (non-contiguous) parameter is updated in place through its own strides.
  Tensor base = from({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor p = transpose(base, 0, 1);  // 3 x 2 view
  Tensor g = ones({3, 2}, ScalarType::Float64);
  optim::TensorList params = {p}, grads = {g}, m, v, vmax, steps;
  optim::AdamOptions o;
  o.lr = 0.01;
  optim::adam_step(params, grads, m, v, vmax, steps, o);
  optim::adam_step(params, grads, m, v, vmax, steps, o);
  EXPECT_EQ(item(steps[0]).to_double(), 2.0);
  EXPECT_EQ(steps[0].dtype(), ScalarType::Float32);  // PyTorch's state layout
  EXPECT_TRUE(vmax.empty() || !vmax[0].defined());
  // constant gradient: m_hat = 1, v_hat = 1, so each step moves by lr / (1 + eps)
  std::vector<double> got = values(base);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], (i + 1) - 2 * 0.01 / (1 + 1e-8), 1e-12);
}

TEST(Optim, ChecksDtypesAndShapes) {
  optim::TensorList params = {ones({2}, ScalarType::Float32)}, grads = {ones({3}, ScalarType::Float32)}, bufs;
  EXPECT_THROW(optim::sgd_step(params, grads, bufs, {}), Error);
  optim::TensorList ip = {ones({2}, ScalarType::Int64)}, ig = {ones({2}, ScalarType::Int64)};
  EXPECT_THROW(optim::sgd_step(ip, ig, bufs, {}), NotImplementedError);
}
