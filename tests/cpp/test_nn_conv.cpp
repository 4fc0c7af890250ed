// The nn ops through the C++ API: conv2d against direct loops, conv_transpose2d as conv2d's
// adjoint, max/avg pooling against direct loops, and the errors' exception types.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ember.h"

using namespace ember;

namespace {
Tensor ramp(IntArrayRef sizes, double scale) {  // deterministic, distinct values
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Tensor t = empty(sizes, ScalarType::Float64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = std::sin(scale * double(i + 1));
  return t;
}
double inner_sum(const Tensor& a, const Tensor& b) { return item(sum(mul(a, b))).to_double(); }
}  // namespace

TEST(NnConv, Conv2dMatchesDirectLoops) {
  const int64_t N = 2, C = 4, H = 7, W = 6, O = 6, G = 2, K = 3, S = 2, P = 1, D = 1;
  Tensor x = ramp({N, C, H, W}, 0.37), w = ramp({O, C / G, K, K}, 0.91), b = ramp({O}, 1.3);
  Tensor y = conv2d(x, w, b, {S}, {P}, {D}, G);
  const int64_t Ho = (H + 2 * P - K) / S + 1, Wo = (W + 2 * P - K) / S + 1;
  ASSERT_EQ(y.sizes(), (Shape{N, O, Ho, Wo}));
  Tensor yc = contiguous(y);
  const double *xp = x.data<double>(), *wp = w.data<double>(), *bp = b.data<double>(), *yp = yc.data<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < Ho; ++i)
        for (int64_t j = 0; j < Wo; ++j) {
          double acc = bp[o];
          int64_t g = o / (O / G);
          for (int64_t c = 0; c < C / G; ++c)
            for (int64_t ki = 0; ki < K; ++ki)
              for (int64_t kj = 0; kj < K; ++kj) {
                int64_t ii = i * S - P + ki, jj = j * S - P + kj;
                if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
                acc += xp[((n * C + g * (C / G) + c) * H + ii) * W + jj] * wp[((o * (C / G) + c) * K + ki) * K + kj];
              }
          EXPECT_NEAR(yp[((n * O + o) * Ho + i) * Wo + j], acc, 1e-12);
        }
}

TEST(NnConv, ConvTransposeIsTheAdjoint) {
  Tensor x = ramp({2, 4, 9, 8}, 0.21), w = ramp({6, 2, 3, 2}, 0.73);
  Tensor y = conv2d(x, w, Tensor(), {2, 1}, {1, 0}, {1, 2}, 2);
  Tensor r = ramp(y.sizes(), 0.57);
  // conv_transpose2d(r, w) with output_padding chosen so its size is x's.
  Tensor xt = conv_transpose2d(r, w, Tensor(), {2, 1}, {1, 0}, {0, 0}, 2, {1, 2});
  ASSERT_EQ(xt.sizes(), x.sizes());
  EXPECT_NEAR(inner_sum(y, r), inner_sum(x, xt), 1e-9);
}

TEST(NnConv, PoolsMatchDirectLoops) {
  Tensor x = ramp({1, 2, 5, 5}, 0.43);
  auto [m, idx] = max_pool_with_indices(x, 2, {2}, {}, {0}, {1}, /*ceil_mode=*/true);
  ASSERT_EQ(m.sizes(), (Shape{1, 2, 3, 3}));
  Tensor a = avg_pool(x, 2, {3}, {2}, {1}, false, /*count_include_pad=*/false);
  ASSERT_EQ(a.sizes(), (Shape{1, 2, 3, 3}));
  const double* xp = x.data<double>();
  Tensor mc = contiguous(m), ac = contiguous(a);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double best = -INFINITY, s = 0;
        int64_t cnt = 0;
        for (int64_t ii = 2 * i; ii < std::min<int64_t>(2 * i + 2, 5); ++ii)
          for (int64_t jj = 2 * j; jj < std::min<int64_t>(2 * j + 2, 5); ++jj)
            best = std::max(best, xp[c * 25 + ii * 5 + jj]);
        for (int64_t ii = std::max<int64_t>(2 * i - 1, 0); ii < std::min<int64_t>(2 * i + 2, 5); ++ii)
          for (int64_t jj = std::max<int64_t>(2 * j - 1, 0); jj < std::min<int64_t>(2 * j + 2, 5); ++jj, ++cnt)
            s += xp[c * 25 + ii * 5 + jj];
        EXPECT_EQ(mc.data<double>()[c * 9 + i * 3 + j], best);
        EXPECT_NEAR(ac.data<double>()[c * 9 + i * 3 + j], s / double(cnt), 1e-12);
      }
}

TEST(NnConv, ErrorsHaveTorchsTypes) {
  Tensor x = zeros({2, 5, 8, 8}, ScalarType::Float32), w = zeros({4, 3, 3, 3}, ScalarType::Float32);
  EXPECT_THROW(conv2d(x, w), Error);              // channels
  EXPECT_THROW(conv2d(zeros({2, 3}), w), Error);  // dims
  EXPECT_THROW(conv2d(zeros({2, 3, 8, 8}, ScalarType::Int64), zeros({4, 3, 3, 3}, ScalarType::Int64)),
               NotImplementedError);                                           // integer dtype
  EXPECT_THROW(conv2d(zeros({2, 3, 8, 8}), w, Tensor(), {2}, "same"), Error);  // strided 'same'
  EXPECT_THROW(max_pool_with_indices(zeros({2, 3, 2, 2}), 2, {3}), Error);     // output too small
}
