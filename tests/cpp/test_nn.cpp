// nn ops through the C++ API (ops/nn.h), below Python: the fused cross_entropy's row and
// column-tile paths agree with log_softmax + gather, results do not depend on the thread count,
// and the fused backward kernels agree with the create_graph formulas built from ember ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/autograd/engine.h"
#include "ember/ember.h"
#include "ember/ops/distance.h"
#include "ember/ops/nn_grid_sample.h"
#include "ember/ops/nn_pad.h"
#include "ember/ops/nn_rnn.h"

using namespace ember;
using autograd::TensorList;

namespace {
double max_abs_diff(const Tensor& a, const Tensor& b) {
  return item(amax(abs(sub(to_dtype(a, ScalarType::Float64), to_dtype(b, ScalarType::Float64))))).to_double();
}
Tensor grad_of(const Tensor& out, const Tensor& x, bool create_graph) {
  autograd::BackwardOptions o;
  o.accumulate = false;
  o.create_graph = create_graph;
  o.keep_graph = true;
  return autograd::run_backward({sum(mul(out, out))}, {Tensor()}, {x}, o)[0];
}
}  // namespace

TEST(NN, CrossEntropyMatchesLogSoftmaxGather) {
  manual_seed(3);
  Tensor x = mul(randn({6, 37, 70}), full({}, 4.0, ScalarType::Float32));  // N-d: column tiles of 64 + 6
  Tensor t = randint(0, 37, {6, 70});
  Tensor loss = cross_entropy(x, t, Tensor(), Reduction::None);
  Tensor ref = neg(squeeze(gather(log_softmax(x, 1), 1, unsqueeze(t, 1)), std::vector<int64_t>{1}));
  EXPECT_LT(max_abs_diff(loss, ref), 1e-4);
  // The same rows laid out as (N * L, C) take the contiguous-row path.
  Tensor rows = reshape(contiguous(transpose(x, 1, 2)), {6 * 70, 37});
  EXPECT_LT(max_abs_diff(reshape(cross_entropy(rows, reshape(t, {-1}), Tensor(), Reduction::None), {6, 70}), loss),
            1e-5);
}

TEST(NN, ResultsDoNotDependOnThreads) {
  manual_seed(5);
  Tensor x = randn({300, 50}), t = randint(0, 50, {300}), y = randn({40, 8, 33});
  int prev = get_num_threads();
  set_num_threads(1);
  Tensor a = cross_entropy(x, t, Tensor(), Reduction::Mean, -100, 0.1);
  Tensor b = layer_norm(y, {33});
  set_num_threads(2);
  Tensor a2 = cross_entropy(x, t, Tensor(), Reduction::Mean, -100, 0.1);
  Tensor b2 = layer_norm(y, {33});
  set_num_threads(prev);
  EXPECT_TRUE(equal(a, a2));
  EXPECT_TRUE(equal(b, b2));
}

TEST(NN, FusedBackwardAgreesWithCreateGraphFormula) {
  manual_seed(7);
  Tensor x = randn({5, 6, 4}, nullptr, ScalarType::Float64);
  autograd::set_requires_grad(x, true);
  Tensor w = add(rand({6}, nullptr, ScalarType::Float64), full({}, 0.5, ScalarType::Float64));
  Tensor t = randint(0, 6, {5, 4});
  std::vector<Tensor> outs = {cross_entropy(x, t, w, Reduction::None, 2, 0.2), layer_norm(x, {6, 4}),
                              batch_norm(x, Tensor(), Tensor(), w, Tensor(), true)};
  for (const Tensor& out : outs) {
    Tensor fused = grad_of(out, x, false), formula = grad_of(out, x, true);
    EXPECT_LT(max_abs_diff(fused, formula), 1e-10);
  }
}

namespace {
// The fused LSTM layer's loop written out with the per-step cell op: states (B, H), rows of step t
// at offset[t]; sequences join (reverse) or leave (forward) as in lstm_layer's packed layout.
std::tuple<Tensor, Tensor, Tensor> lstm_layer_by_cells(const Tensor& gi, const std::vector<int64_t>& sizes,
                                                       const Tensor& h0, const Tensor& c0, const Tensor& w,
                                                       bool reverse) {
  const int64_t T = static_cast<int64_t>(sizes.size()), B = h0.size(0);
  std::vector<int64_t> offset;
  int64_t n = 0;
  for (int64_t b : sizes) {
    offset.push_back(n);
    n += b;
  }
  std::vector<Tensor> outs(static_cast<size_t>(T));
  Tensor h = h0, c = c0;
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s, rows = sizes[static_cast<size_t>(t)];
    Tensor g = add(narrow(gi, 0, offset[static_cast<size_t>(t)], rows), mm(narrow(h, 0, 0, rows), transpose(w, 0, 1)));
    auto [hy, cy] = lstm_cell_fused(g, narrow(c, 0, 0, rows));
    outs[static_cast<size_t>(t)] = hy;
    h = rows == B ? hy : cat({hy, narrow(h, 0, rows, B - rows)}, 0);
    c = rows == B ? cy : cat({cy, narrow(c, 0, rows, B - rows)}, 0);
  }
  return {cat(outs, 0), h, c};
}
}  // namespace

// Note [Fused LSTM layer]: the one-op layer (in pieces of hidden units for H = 128, one piece for
// H = 8) agrees with the loop of cell ops, forward and backward, padded and packed, both
// directions, bit-identical for 1 and 2 threads; its create_graph backward agrees with the fused one.
TEST(NN, FusedLstmLayerAgreesWithCellLoop) {
  manual_seed(11);
  const int prev = get_num_threads();
  // batch 5: recurrent products on panels; batch 50: on BLAS (Note [Recurrent GEMM])
  for (int64_t scale : {1, 10})
    for (int64_t H : {8, 128})
      for (bool reverse : {false, true})
        for (bool packed : {false, true}) {
          std::vector<int64_t> sizes =
              packed ? std::vector<int64_t>{5, 5, 3, 2, 2, 1} : std::vector<int64_t>{5, 5, 5, 5};
          for (int64_t& b : sizes) b *= scale;
          const int64_t B = sizes[0];
          int64_t n = 0;
          for (int64_t b : sizes) n += b;
          auto leaf = [](Tensor t) {
            autograd::set_requires_grad(t, true);
            return t;
          };
          Tensor gi = leaf(randn({n, 4 * H}, nullptr, ScalarType::Float64));
          Tensor h0 = leaf(randn({B, H}, nullptr, ScalarType::Float64));
          Tensor c0 = leaf(randn({B, H}, nullptr, ScalarType::Float64));
          Tensor w = leaf(mul(randn({4 * H, H}, nullptr, ScalarType::Float64), full({}, 0.1, ScalarType::Float64)));
          Tensor wo = randn({n, H}, nullptr, ScalarType::Float64), wh = randn({B, H}, nullptr, ScalarType::Float64);
          auto loss = [&](const std::tuple<Tensor, Tensor, Tensor>& r) {
            return add(add(sum(mul(std::get<0>(r), wo)), sum(mul(std::get<1>(r), wh))), sum(std::get<2>(r)));
          };
          autograd::BackwardOptions o;
          o.accumulate = false;
          o.keep_graph = true;
          auto ref = lstm_layer_by_cells(gi, sizes, h0, c0, w, reverse);
          TensorList ref_grads = autograd::run_backward({loss(ref)}, {Tensor()}, {gi, h0, c0, w}, o);
          std::vector<TensorList> fused_grads;
          std::vector<Tensor> fused_out;
          for (int threads : {1, 2}) {
            set_num_threads(threads);
            auto r = lstm_layer(gi, sizes, h0, c0, w, reverse);
            for (int i = 0; i < 3; ++i) {
              const Tensor& a = i == 0 ? std::get<0>(r) : i == 1 ? std::get<1>(r) : std::get<2>(r);
              const Tensor& b = i == 0 ? std::get<0>(ref) : i == 1 ? std::get<1>(ref) : std::get<2>(ref);
              EXPECT_LT(max_abs_diff(a, b), 1e-12) << "H=" << H << " reverse=" << reverse << " packed=" << packed;
            }
            fused_out.push_back(std::get<0>(r));
            fused_grads.push_back(autograd::run_backward({loss(r)}, {Tensor()}, {gi, h0, c0, w}, o));
            if (threads == 1) {
              autograd::BackwardOptions cg = o;
              cg.create_graph = true;
              TensorList formula = autograd::run_backward({loss(r)}, {Tensor()}, {gi, h0, c0, w}, cg);
              for (size_t i = 0; i < 4; ++i) EXPECT_LT(max_abs_diff(formula[i], fused_grads[0][i]), 1e-12);
            }
          }
          set_num_threads(prev);
          EXPECT_TRUE(equal(fused_out[0], fused_out[1]));
          for (size_t i = 0; i < 4; ++i) {
            EXPECT_LT(max_abs_diff(fused_grads[0][i], ref_grads[i]), 1e-11) << "grad " << i << " H=" << H;
            EXPECT_TRUE(equal(fused_grads[0][i], fused_grads[1][i])) << "grad " << i << " H=" << H;
          }
        }
}

// The fused GRU layer against a loop of the fused cell op (gru_cell_fused with b_hh inside the
// reset gate), padded and packed, both directions, batch 5 (panels) and 50 (BLAS), with and without
// b_hh: values and gradients, 1 and 2 threads bitwise, create_graph = fused backward.
TEST(NN, FusedGruLayerAgreesWithCellLoop) {
  manual_seed(13);
  const int prev = get_num_threads();
  for (int64_t scale : {1, 10})
    for (bool bias : {true, false})
      for (bool reverse : {false, true})
        for (bool packed : {false, true}) {
          const int64_t H = 128;
          std::vector<int64_t> sizes =
              packed ? std::vector<int64_t>{5, 5, 3, 2, 2, 1} : std::vector<int64_t>{5, 5, 5, 5};
          for (int64_t& b : sizes) b *= scale;
          const int64_t B = sizes[0], T = static_cast<int64_t>(sizes.size());
          int64_t n = 0;
          std::vector<int64_t> offset;
          for (int64_t b : sizes) offset.push_back(n), n += b;
          auto leaf = [](Tensor t) {
            autograd::set_requires_grad(t, true);
            return t;
          };
          const ScalarType f64 = ScalarType::Float64;
          Tensor gi = leaf(randn({n, 3 * H}, nullptr, f64)), h0 = leaf(randn({B, H}, nullptr, f64));
          Tensor w = leaf(mul(randn({3 * H, H}, nullptr, f64), full({}, 0.1, f64)));
          Tensor b = bias ? leaf(randn({3 * H}, nullptr, f64)) : Tensor();
          std::vector<Tensor> ins = {gi, h0, w};
          if (bias) ins.push_back(b);
          Tensor wo = randn({n, H}, nullptr, f64), wh = randn({B, H}, nullptr, f64);
          auto loss = [&](const Tensor& out, const Tensor& hn) { return add(sum(mul(out, wo)), sum(mul(hn, wh))); };
          // reference: the cell loop
          std::vector<Tensor> outs(static_cast<size_t>(T));
          Tensor h = h0;
          for (int64_t s = 0; s < T; ++s) {
            const int64_t t = reverse ? T - 1 - s : s, rows = sizes[static_cast<size_t>(t)];
            Tensor hp = narrow(h, 0, 0, rows), gh = mm(hp, transpose(w, 0, 1));
            if (bias) gh = add(gh, b);
            Tensor hy = gru_cell_fused(narrow(gi, 0, offset[static_cast<size_t>(t)], rows), gh, hp);
            outs[static_cast<size_t>(t)] = hy;
            h = rows == B ? hy : cat({hy, narrow(h, 0, rows, B - rows)}, 0);
          }
          autograd::BackwardOptions o;
          o.accumulate = false;
          o.keep_graph = true;
          Tensor ref_out = cat(outs, 0);
          TensorList ref = autograd::run_backward({loss(ref_out, h)}, {Tensor()}, ins, o);
          std::vector<TensorList> got;
          std::vector<Tensor> got_out;
          for (int threads : {1, 2}) {
            set_num_threads(threads);
            auto [out, hn] = gru_layer(gi, sizes, h0, w, b, reverse);
            EXPECT_LT(max_abs_diff(out, ref_out), 1e-12);
            EXPECT_LT(max_abs_diff(hn, h), 1e-12);
            got_out.push_back(out);
            got.push_back(autograd::run_backward({loss(out, hn)}, {Tensor()}, ins, o));
            if (threads == 1) {
              autograd::BackwardOptions cg = o;
              cg.create_graph = true;
              TensorList formula = autograd::run_backward({loss(out, hn)}, {Tensor()}, ins, cg);
              for (size_t i = 0; i < ins.size(); ++i) EXPECT_LT(max_abs_diff(formula[i], got[0][i]), 1e-11);
            }
          }
          set_num_threads(prev);
          EXPECT_TRUE(equal(got_out[0], got_out[1]));
          for (size_t i = 0; i < ins.size(); ++i) {
            EXPECT_LT(max_abs_diff(got[0][i], ref[i]), 1e-10) << "grad " << i << " bias=" << bias;
            EXPECT_TRUE(equal(got[0][i], got[1][i])) << "grad " << i;
          }
        }
}

TEST(NN, FusedLstmLayerRejectsBadArguments) {
  Tensor gi = zeros({6, 8}), h = zeros({3, 2}), w = zeros({8, 2});
  EXPECT_NO_THROW(lstm_layer(gi, {3, 3}, h, h, w, false));
  EXPECT_THROW(lstm_layer(gi, {3, 2}, h, h, w, false), std::exception);  // rows != sum of sizes
  EXPECT_THROW(lstm_layer(gi, {2, 4}, h, h, w, false), std::exception);  // first size != B, increasing
  EXPECT_THROW(lstm_layer(gi, {}, h, h, w, false), std::exception);      // no step
  EXPECT_THROW(lstm_layer(gi, {3, 3}, h, h, zeros({8, 3}), false), std::exception);
  EXPECT_THROW(lstm_layer(gi, {3, 3}, h, zeros({3, 3}), w, false), std::exception);
  EXPECT_THROW(lstm_layer(to_dtype(gi, ScalarType::Int64), {3, 3}, to_dtype(h, ScalarType::Int64),
                          to_dtype(h, ScalarType::Int64), to_dtype(w, ScalarType::Int64), false),
               std::exception);
  EXPECT_THROW(lstm_layer(gi, {3, 3}, to_dtype(h, ScalarType::Float64), h, w, false), std::exception);
  EXPECT_THROW(lstm_layer(gi, {3, 3, 0}, h, h, w, false), std::exception);  // an empty step
}

TEST(NN, ConstantPadCropsPadsAndItsGradientCropsBack) {
  // Note [Constant pad]: rows of fill, overlap, fill; a crop of what was padded gives the input back
  Tensor x = reshape(arange(0, 2 * 3 * 4, 1, ScalarType::Float64), {2, 3, 4});
  Tensor y = constant_pad_nd(x, {2, 1, 1, 0}, -1.0);
  ASSERT_EQ(y.sizes(), (Shape{2, 4, 7}));
  EXPECT_TRUE(equal(narrow(narrow(y, 1, 1, 3), 2, 2, 4), x));
  EXPECT_EQ(item(sum(eq(y, full({}, -1.0, ScalarType::Float64)))).to_int(), 2 * (4 * 7 - 3 * 4));
  EXPECT_TRUE(equal(constant_pad_nd(y, {-2, -1, -1, 0}), x));
  Tensor crop = constant_pad_nd(x, {-1, -2, 0, 0, -1, 0});  // negative pads crop every padded dim
  EXPECT_TRUE(equal(crop, narrow(narrow(x, 0, 1, 1), 2, 1, 1)));
  EXPECT_TRUE(equal(constant_pad_nd(x, {}), x));
  EXPECT_EQ(constant_pad_nd(zeros({3, 0}), {1, 1}, 2.0).sizes(), (Shape{3, 2}));
  // the gradient is the same op with the pads negated
  Tensor xg = clone(x);
  autograd::set_requires_grad(xg, true);
  Tensor g = grad_of(constant_pad_nd(xg, {-1, 2, 1, 1}, 5.0), xg, false);
  Tensor want = constant_pad_nd(constant_pad_nd(x, {-1, 2, 1, 1}), {1, -2, -1, -1});
  EXPECT_TRUE(equal(g, mul(want, full({}, 2.0, ScalarType::Float64))));
  // bad arguments: odd length, more pairs than dims, cropping past a dim, sizes that overflow
  EXPECT_THROW(constant_pad_nd(x, {1}), std::exception);
  EXPECT_THROW(constant_pad_nd(x, {1, 1, 1, 1, 1, 1, 1, 1}), std::exception);
  EXPECT_THROW(constant_pad_nd(x, {-3, -2}), std::exception);
  EXPECT_THROW(constant_pad_nd(x, {int64_t{1} << 62, int64_t{1} << 62}), std::exception);
}

TEST(NN, GridSampleTapsPaddingModesAndBorderGradient) {
  // Note [Vectorized grid_sample taps] on a 2x3 plane 0..5 with align_corners: grid (gx, gy) maps to
  // x = (gx + 1) * 1, y = (gy + 1) / 2
  Tensor x = reshape(arange(0, 6, 1, ScalarType::Float64), {1, 1, 2, 3});
  auto sample = [&](double gx, double gy, bool nearest, int padding) {
    Tensor g = empty({1, 1, 1, 2}, ScalarType::Float64);
    g.data<double>()[0] = gx, g.data<double>()[1] = gy;
    return contiguous(grid_sample_2d(x, g, nearest, padding, true)).data<double>()[0];
  };
  EXPECT_DOUBLE_EQ(sample(0.0, 0.0, false, 0), 2.5);   // x 1, y 0.5: (1 + 4) / 2
  EXPECT_DOUBLE_EQ(sample(1.5, -1.0, false, 0), 1.0);  // x 2.5: half of column 2, the rest out (0)
  EXPECT_DOUBLE_EQ(sample(1.5, -1.0, false, 1), 2.0);  // border: x clipped to 2
  EXPECT_DOUBLE_EQ(sample(2.0, -1.0, false, 2), 1.0);  // reflection: x 3 -> 1
  EXPECT_DOUBLE_EQ(sample(-4.0, 1.0, false, 2), 4.0);  // x -3 -> 3 -> 1, row 1
  EXPECT_DOUBLE_EQ(sample(-0.5, 1.0, true, 0), 3.0);   // nearest: x 0.5 rounds half to even, 0
  EXPECT_DOUBLE_EQ(sample(0.5, 1.0, true, 0), 5.0);    // x 1.5 -> 2
  EXPECT_DOUBLE_EQ(sample(1.6, 1.0, true, 0), 0.0);    // x 2.6 -> 3: out of range
  // the grid gradient: 1 per unit of x along a row (times dx/dgx = 1); 0 on the border when clipped
  Tensor g = empty({1, 1, 2, 2}, ScalarType::Float64);
  const double pts[] = {0.3, -0.5, 1.0, -0.5};  // x 1.3 inside; x 2 on the border (y 0.25)
  std::copy(pts, pts + 4, g.data<double>());
  autograd::set_requires_grad(g, true);
  autograd::BackwardOptions o;
  o.accumulate = false;
  Tensor gg = autograd::run_backward({sum(grid_sample_2d(x, g, false, 1, true))}, {Tensor()}, {g}, o)[0];
  EXPECT_DOUBLE_EQ(gg.data<double>()[0], 1.0);
  EXPECT_DOUBLE_EQ(gg.data<double>()[2], 0.0);
  EXPECT_DOUBLE_EQ(gg.data<double>()[1], 3.0 / 2);  // d/dy over rows 0 -> 1 is 3, dy/dgy = 1/2
  // bad arguments
  const Tensor pts_grid = zeros({1, 1, 1, 2}, ScalarType::Float64);
  EXPECT_THROW(grid_sample_2d(zeros({1, 1, 0, 3}, ScalarType::Float64), pts_grid, false, 0, true), std::exception);
  EXPECT_THROW(grid_sample_2d(x, to_dtype(pts_grid, ScalarType::Float32), false, 0, true), std::exception);
  EXPECT_THROW(grid_sample_2d(x, pts_grid, false, 3, true), std::exception);
  // 3-d: a 2x2x3 volume 0..11 (z, y, x); the grid maps to x = gx + 1, y = (gy + 1) / 2, z = (gz + 1) / 2
  Tensor v = reshape(arange(0, 12, 1, ScalarType::Float64), {1, 1, 2, 2, 3});
  auto sample3 = [&](double gx, double gy, double gz, bool nearest, int padding) {
    Tensor g3 = empty({1, 1, 1, 1, 3}, ScalarType::Float64);
    g3.data<double>()[0] = gx, g3.data<double>()[1] = gy, g3.data<double>()[2] = gz;
    return contiguous(grid_sample_3d(v, g3, nearest, padding, true)).data<double>()[0];
  };
  EXPECT_DOUBLE_EQ(sample3(0.0, 0.0, 0.0, false, 0), 5.5);    // the centre: the mean of the 8 corners around x 1
  EXPECT_DOUBLE_EQ(sample3(1.0, 1.0, 1.0, false, 0), 11.0);   // the far corner
  EXPECT_DOUBLE_EQ(sample3(1.5, -1.0, 1.0, false, 1), 8.0);   // border: x 2.5 clipped to 2, (z 1, y 0)
  EXPECT_DOUBLE_EQ(sample3(-0.5, 1.0, -1.0, true, 0), 3.0);   // nearest: x 0.5 to 0 (half to even), y 1, z 0
  EXPECT_DOUBLE_EQ(sample3(2.0, -1.0, -1.0, false, 2), 1.0);  // reflection: x 3 -> 1
  EXPECT_THROW(grid_sample_3d(x, pts_grid, false, 0, true), std::exception);  // 4-d input
  EXPECT_THROW(grid_sample_3d(v, zeros({1, 1, 1, 1, 2}, ScalarType::Float64), false, 0, true), std::exception);
}

TEST(NN, PdistPairsRowsInRowMajorOrderWithTheirGradient) {
  // Note [pdist]: rows (0, 0), (3, 4), (0, 1) -> pairs (0,1), (0,2), (1,2)
  Tensor x = empty({3, 2}, ScalarType::Float64);
  const double rows[] = {0.0, 0.0, 3.0, 4.0, 0.0, 1.0};
  std::copy(rows, rows + 6, x.data<double>());
  Tensor d = pdist(x);
  ASSERT_EQ(d.sizes(), (Shape{3}));
  EXPECT_DOUBLE_EQ(item(select(d, 0, 0)).to_double(), 5.0);
  EXPECT_DOUBLE_EQ(item(select(d, 0, 1)).to_double(), 1.0);
  EXPECT_DOUBLE_EQ(item(select(d, 0, 2)).to_double(), std::sqrt(18.0));
  EXPECT_DOUBLE_EQ(item(select(pdist(x, 1.0), 0, 0)).to_double(), 7.0);
  EXPECT_DOUBLE_EQ(item(select(pdist(x, INFINITY), 0, 0)).to_double(), 4.0);
  EXPECT_DOUBLE_EQ(item(select(pdist(x, 0.0), 0, 2)).to_double(), 2.0);
  EXPECT_EQ(pdist(zeros({1, 3}, ScalarType::Float64)).numel(), 0);
  // d(sum of d^2)/dx_0 = 2 d_01 (x_0 - x_1)/d_01 + 2 d_02 (x_0 - x_2)/d_02 = (-6, -8) + (0, -2)
  Tensor xg = clone(x);
  autograd::set_requires_grad(xg, true);
  Tensor g = grad_of(pdist(xg), xg, false);
  EXPECT_NEAR(item(select(select(g, 0, 0), 0, 0)).to_double(), -6.0, 1e-14);
  EXPECT_NEAR(item(select(select(g, 0, 0), 0, 1)).to_double(), -10.0, 1e-14);
  EXPECT_THROW(pdist(zeros({3})), std::exception);
  EXPECT_THROW(pdist(x, -1.0), std::exception);
  EXPECT_THROW(pdist(zeros({2, 2}, ScalarType::Int64)), std::exception);
  EXPECT_THROW(pdist(zeros({2, 2}, ScalarType::Float16)), NotImplementedError);
}

TEST(NN, CdistAgreesWithPdistAndRejectsBadArguments) {
  // Note [Distances in lanes]: 70 rows of 5 (two whole tiles of float lanes and a tail) against themselves:
  // cdist's upper triangle is pdist, for every norm; its diagonal is 0
  manual_seed(5);
  Tensor x = randn({70, 5});
  for (double p : {0.0, 1.0, 2.0, 3.0, double(INFINITY)}) {
    Tensor c = cdist(x, x, p), d = pdist(x, p);
    ASSERT_EQ(c.sizes(), (Shape{70, 70}));
    for (int64_t i : {0, 33, 68})
      for (int64_t j : {i + 1, int64_t{69}})
        EXPECT_FLOAT_EQ(item(select(select(c, 0, i), 0, j)).to_double(),
                        item(select(d, 0, i * 70 - i * (i + 1) / 2 + (j - i - 1))).to_double());
    EXPECT_EQ(item(amax(abs(diagonal(c)))).to_double(), 0.0);
  }
  // a batch of 2 and the gradient of sum d^2 (p = 2): 2 (x1_i - x2_j) summed over j
  const Tensor a0 = to_dtype(randn({2, 4, 3}), ScalarType::Float64),
               b = to_dtype(randn({2, 6, 3}), ScalarType::Float64);
  Tensor a = clone(a0);
  autograd::set_requires_grad(a, true);
  Tensor g = grad_of(cdist(a, b), a, false);
  Tensor want = mul(sub(mul(a0, full({}, 6.0, ScalarType::Float64)), sum(b, std::vector<int64_t>{1}, true)),
                    full({}, 2.0, ScalarType::Float64));
  EXPECT_LT(max_abs_diff(g, want), 1e-12);
  EXPECT_EQ(cdist(zeros({2, 0, 3}), zeros({2, 5, 3})).sizes(), (Shape{2, 0, 5}));
  EXPECT_EQ(item(sum(cdist(zeros({3, 0}), zeros({4, 0}), 1.0))).to_double(), 0.0);
  EXPECT_THROW(cdist(zeros({3}), zeros({3})), std::exception);
  EXPECT_THROW(cdist(zeros({2, 3}), zeros({2, 4})), std::exception);
  EXPECT_THROW(cdist(zeros({2, 2, 3}), zeros({3, 2, 3})), std::exception);
  EXPECT_THROW(cdist(zeros({2, 3}), zeros({2, 3}), -1.0), std::exception);
  EXPECT_THROW(cdist(zeros({2, 3}), zeros({2, 3}, ScalarType::Float64)), std::exception);
  EXPECT_THROW(cdist(zeros({2, 3}, ScalarType::Int64), zeros({2, 3}, ScalarType::Int64)), std::exception);
  EXPECT_THROW(cdist(zeros({2, 3}, ScalarType::BFloat16), zeros({2, 3}, ScalarType::BFloat16)), NotImplementedError);
}

TEST(NN, BatchNormUpdatesRunningStats) {
  manual_seed(9);
  Tensor x = randn({8, 3, 5}, nullptr, ScalarType::Float64);
  Tensor rm = zeros({3}, ScalarType::Float64), rv = ones({3}, ScalarType::Float64);
  batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.25, 1e-5);
  std::vector<int64_t> dims{0, 2};
  Tensor want_mean = mul(mean(x, dims), full({}, 0.25, ScalarType::Float64));
  Tensor want_var = add(full({}, 0.75, ScalarType::Float64), mul(var(x, dims, 1), full({}, 0.25, ScalarType::Float64)));
  EXPECT_LT(max_abs_diff(rm, want_mean), 1e-12);
  EXPECT_LT(max_abs_diff(rv, want_var), 1e-12);
  EXPECT_THROW(cross_entropy(x, zeros({8, 5}, ScalarType::Float32)), Error);
  EXPECT_THROW(nll_loss(reshape(x, {8, 15}), full({8}, 15, ScalarType::Int64)), IndexError);
}
