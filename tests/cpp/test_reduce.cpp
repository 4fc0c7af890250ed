// Reduction kernels below Python: the vector paths agree with plain loops at every length and
// NaN position, the (outer, R, inner) layouts agree with each other, and results do not depend
// on the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/autograd/engine.h"
#include "ember/ember.h"
#include "ember/ops/reduce_utils.h"

using namespace ember;

namespace {
Tensor from(const std::vector<float>& v, Shape shape) {
  Tensor t = empty(shape, ScalarType::Float32);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}
std::vector<float> values(const Tensor& t) {
  Tensor c = contiguous(t);
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}
std::vector<int64_t> longs(const Tensor& t) {
  Tensor c = contiguous(t);
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.numel());
}
}  // namespace

// The vector exp (cpu/vec_math.h) seen through softmax([x, 0])[0] = 1 / (1 + e^-x), over the
// whole float range, against double precision (a few float roundings of sum and scale allowed).
TEST(VectorExp, SoftmaxOfPairsMatchesDoublePrecision) {
  std::vector<float> xs;
  for (float x = -110.0f; x < 95.0f; x += 0.0137f) xs.push_back(x);
  int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> pairs;
  for (float x : xs) pairs.push_back(x), pairs.push_back(0.0f);
  // 16 columns per row so the 8-lane path runs: [x, 0, 0, ...] rows.
  Tensor t = zeros({n, 16});
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i * 16] = xs[i];
  std::vector<float> got = values(softmax(t, 1));
  for (int64_t i = 0; i < n; ++i) {
    double e = std::exp(static_cast<double>(xs[i]));
    double ref = e / (e + 15.0);
    if (std::isinf(e)) ref = 1.0;
    // Note [Subnormal exps in softmax]: e^x below e^-87 (under float's normal range) is flushed to 0.
    const double floor_abs = xs[i] < -87.0f ? std::exp(-87.0) : 1e-44;
    EXPECT_NEAR(got[i * 16], ref, 1e-6 * ref + floor_abs) << "x=" << xs[i];
  }
  Tensor special = from({NAN, 0, INFINITY, 0, -INFINITY, 0}, {3, 2});
  std::vector<float> s = values(softmax(special, 1));
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_TRUE(std::isnan(s[2]));  // inf - inf
  EXPECT_EQ(s[4], 0.0f);
  EXPECT_EQ(s[5], 1.0f);
}

TEST(ReduceKernels, VectorMaxMatchesPlainLoopAtEveryLengthAndNanPosition) {
  for (int64_t n = 1; n < 90; ++n) {
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 1.7f) * 10;
    for (int64_t nan_at = -1; nan_at < n; nan_at += 7) {
      std::vector<float> w = v;
      if (nan_at >= 0) w[nan_at] = NAN;
      float ref = -INFINITY;
      bool saw_nan = false;
      for (float x : w) saw_nan |= std::isnan(x), ref = std::max(ref, x);
      float got = values(max(from(w, {n})))[0];
      if (saw_nan)
        EXPECT_TRUE(std::isnan(got)) << n << " " << nan_at;
      else
        EXPECT_EQ(got, ref) << n;
    }
  }
}

TEST(ReduceKernels, ArgMaxBlocksFindFirstIndexAndFirstNan) {
  for (int64_t n : {1, 7, 63, 64, 65, 128, 129, 300}) {
    std::vector<float> v(n, 1.0f);
    v[n / 2] = 5.0f;
    v[n - 1] = 5.0f;  // a later tie must not win
    auto [val, idx] = max(from(v, {1, n}), 1);
    EXPECT_EQ(longs(idx)[0], n == 1 ? 0 : n / 2) << n;
    EXPECT_EQ(values(val)[0], 5.0f);
    if (n > 3) {
      v[n / 3] = NAN;
      v[n - 2] = NAN;
      auto [nv, ni] = max(from(v, {1, n}), 1);
      EXPECT_TRUE(std::isnan(values(nv)[0]));
      EXPECT_EQ(longs(ni)[0], n / 3) << n;
      EXPECT_EQ(longs(argmin(from(v, {1, n}), 1))[0], n / 3);
    }
  }
}

TEST(ReduceLayout, SeveralRunsPermuteReducedDimsLast) {
  Tensor t = arange(0, 24, 1, ScalarType::Float32);
  t = reshape(t, {2, 3, 4});
  auto mask = reduce_detail::reduce_mask(t, std::vector<int64_t>{0, 2});
  auto l = reduce_detail::reduce_layout(t, mask);
  EXPECT_EQ(l.outer, 3);
  EXPECT_EQ(l.R, 8);
  EXPECT_EQ(l.inner, 1);
  // Row o of the layout holds every element with dim-1 index o.
  std::vector<float> x = values(l.x);
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t r = 0; r < 8; ++r) EXPECT_EQ(static_cast<int64_t>(x[o * 8 + r]) / 4 % 3, o);
  EXPECT_EQ(values(amax(t, std::vector<int64_t>{0, 2})), (std::vector<float>{15, 19, 23}));
}

TEST(ReduceKernels, ResultsDoNotDependOnThreadCount) {
  int before = get_num_threads();
  Tensor x = randn({3, 300001});
  Tensor col = randn({70001, 5});
  std::vector<std::vector<float>> runs;
  for (int nt : {1, 2, 3}) {
    set_num_threads(nt);
    std::vector<float> r;
    for (const Tensor& t : {sum(x, std::vector<int64_t>{1}), amax(x, std::vector<int64_t>{1}),
                            var(x, std::vector<int64_t>{1}), var(x), logsumexp(x, std::vector<int64_t>{1}),
                            softmax(col, 0), std::get<0>(sort(x, 1)), std::get<0>(max(col, 0)), cumsum(col, 0)}) {
      std::vector<float> v = values(t);
      r.insert(r.end(), v.begin(), v.begin() + std::min<size_t>(v.size(), 1000));
    }
    runs.push_back(r);
  }
  set_num_threads(before);
  for (size_t i = 0; i < runs[0].size(); ++i) {
    EXPECT_NEAR(runs[1][i], runs[0][i], 1e-5 * std::fabs(runs[0][i]) + 1e-6) << i;
    EXPECT_NEAR(runs[2][i], runs[0][i], 1e-5 * std::fabs(runs[0][i]) + 1e-6) << i;
  }
}

TEST(ReduceAutograd, ProdGradientWithOneZeroIsProductOfOthers) {
  Tensor x = from({2, 0, 3, 4}, {4});
  x = to_dtype(x, ScalarType::Float64);
  autograd::set_requires_grad(x, true);
  Tensor y = prod(x);
  autograd::BackwardOptions o;
  o.accumulate = false;
  Tensor g = autograd::run_backward({y}, {Tensor()}, {x}, o)[0];
  Tensor gd = contiguous(g);
  std::vector<double> got(gd.data<double>(), gd.data<double>() + 4);
  EXPECT_EQ(got, (std::vector<double>{0, 24, 0, 0}));
}

TEST(ReduceErrors, EmptyReductionsWithoutIdentity) {
  Tensor e = empty({0, 3});
  EXPECT_THROW(max(e), Error);
  EXPECT_THROW(amax(e, std::vector<int64_t>{0}), IndexError);
  EXPECT_THROW(argmax(e), IndexError);
  EXPECT_NO_THROW(amax(e, std::vector<int64_t>{1}));
  EXPECT_THROW(sum(e, std::vector<int64_t>{2}), IndexError);
}

// Integer slices of 2048+ elements sort by a radix sort: it must be stable (ties in index order,
// also descending) and order the whole int64 range, both extremes included.
TEST(Sort, RadixSortOfIntegersIsStableAndOrdersTheFullRange) {
  const int64_t n = 5000;
  Tensor x = empty({n}, ScalarType::Int64);
  int64_t* p = x.data<int64_t>();
  uint64_t state = 88172645463325252ull;
  for (int64_t i = 0; i < n; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;                          // xorshift64
    p[i] = (i % 3 == 0) ? static_cast<int64_t>(state) : static_cast<int64_t>(state % 7) - 3;  // wide values and ties
  }
  p[10] = std::numeric_limits<int64_t>::min();
  p[11] = std::numeric_limits<int64_t>::max();
  for (bool descending : {false, true}) {
    auto [values, indices] = sort(x, -1, descending, true);
    const int64_t* v = values.data<int64_t>();
    const int64_t* ix = indices.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], p[ix[i]]);
    for (int64_t i = 1; i < n; ++i) {
      ASSERT_TRUE(descending ? v[i - 1] >= v[i] : v[i - 1] <= v[i]) << i;
      if (v[i - 1] == v[i]) ASSERT_LT(ix[i - 1], ix[i]) << "ties keep index order at " << i;
    }
    EXPECT_EQ(v[descending ? n - 1 : 0], std::numeric_limits<int64_t>::min());
    EXPECT_EQ(v[descending ? 0 : n - 1], std::numeric_limits<int64_t>::max());
  }
}

TEST(ReduceKernels, SumAndProductResultsAreNotViewsAndTakeInPlaceOps) {
  // unsafe_view (ops/unsafe_view.h): sum's and mm's internal reshapes made their results views under
  // no_grad, which refused an in-place op under grad mode
  Tensor x = reshape(arange(0, 12, 1, ScalarType::Float64), {3, 4});
  autograd::set_requires_grad(x, true);
  for (Tensor y : {sum(x, std::vector<int64_t>{0}), sum(x), mm(x, ones({4, 2}, ScalarType::Float64)),
                   matmul(reshape(x, {3, 2, 2}), ones({2, 5}, ScalarType::Float64))}) {
    EXPECT_FALSE(y.impl()->view_base);
    binary_op(BinaryOp::Mul, y, full({}, 2.0, ScalarType::Float64), y, true);
    autograd::BackwardOptions o;
    o.accumulate = false;
    Tensor g = autograd::run_backward({sum(y)}, {Tensor()}, {x}, o)[0];
    EXPECT_EQ(g.sizes(), x.sizes());
    EXPECT_GT(item(sum(g)).to_double(), 0.0);
  }
}

TEST(ReduceKernels, InPlaceOnAKeepdimResultKeepsTheGradient) {
  // set_history: var's keepdim result was a view of var's own buffer; an in-place op on it rebased its
  // history onto that buffer, which has none, and the input's gradient was lost
  Tensor x = reshape(arange(0, 12, 1, ScalarType::Float64), {3, 4});
  autograd::set_requires_grad(x, true);
  Tensor y = var(x, std::vector<int64_t>{1}, 1.0, true);
  EXPECT_FALSE(y.impl()->view_base);
  binary_op(BinaryOp::Mul, y, full({}, 2.0, ScalarType::Float64), y, true);
  autograd::BackwardOptions o;
  o.accumulate = false;
  Tensor g = autograd::run_backward({sum(y)}, {Tensor()}, {x}, o)[0];
  ASSERT_TRUE(g.defined());
  // d(2 var_row)/dx = 2 * 2 (x - mean) / 3: row 0 is 0..3, mean 1.5
  EXPECT_DOUBLE_EQ(item(select(select(g, 0, 0), 0, 0)).to_double(), 4.0 * -1.5 / 3.0);
}
