// nn ops through the C++ API (ops/nn.h), below Python: the fused cross_entropy's row and
// column-tile paths agree with log_softmax + gather, results do not depend on the thread count,
// and the fused backward kernels agree with the create_graph formulas built from ember ops.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/autograd/engine.h"
#include "ember/ember.h"

using namespace ember;

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
