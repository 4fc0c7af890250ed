// The autograd engine from several threads at once (Note [Autograd threads]): no lost gradient
// update, no crash, per-thread grad mode. Also run under ThreadSanitizer (scripts/tsan.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/ember.h"

using namespace ember;

namespace {

constexpr int kThreads = 4;

template <typename F>
void run_threads(int n, F f) {
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i)
    ts.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();  // start together
      f(i);
    });
  for (auto& t : ts) t.join();
}

void backward(const Tensor& root, bool keep_graph = false) {
  autograd::BackwardOptions o;
  o.keep_graph = keep_graph;
  autograd::run_backward({root}, {Tensor()}, {}, o);
}

double min_of(const Tensor& t) { return item(min(t)).to_double(); }
double max_of(const Tensor& t) { return item(max(t)).to_double(); }

}  // namespace

TEST(AutogradThreads, ConcurrentBackwardOnSharedLeafLosesNoUpdate) {
  for (int round = 0; round < 20; ++round) {
    Tensor x = ones({20000}, ScalarType::Float64);
    autograd::set_requires_grad(x, true);
    std::vector<Tensor> losses;
    for (int i = 0; i < kThreads; ++i) losses.push_back(sum(mul(x, full({}, i + 1.0, ScalarType::Float64))));
    run_threads(kThreads, [&](int i) { backward(losses[i]); });
    Tensor g = autograd::grad(x);
    double expected = kThreads * (kThreads + 1) / 2.0;
    ASSERT_EQ(min_of(g), expected) << "round " << round;
    ASSERT_EQ(max_of(g), expected) << "round " << round;
  }
}

TEST(AutogradThreads, OpsAndBackwardFromThreadsOnSharedLeaves) {
  Tensor w = ones({32, 32}, ScalarType::Float64);
  Tensor x = ones({4, 32}, ScalarType::Float64);
  autograd::set_requires_grad(w, true);
  constexpr int iters = 50;
  run_threads(kThreads, [&](int) {
    for (int k = 0; k < iters; ++k) backward(sum(relu(mm(x, w))));  // forward in each thread too
  });
  Tensor g = autograd::grad(w);
  EXPECT_EQ(min_of(g), 4.0 * kThreads * iters);
  EXPECT_EQ(max_of(g), 4.0 * kThreads * iters);
}

TEST(AutogradThreads, SharedGraphWithRetainedGraph) {
  Tensor x = ones({1000}, ScalarType::Float64);
  autograd::set_requires_grad(x, true);
  Tensor y = mul(x, x);  // MulBackward0 with saved tensors, run by every thread
  Tensor loss = sum(mul(y, full({}, 3.0, ScalarType::Float64)));
  constexpr int iters = 50;
  run_threads(kThreads, [&](int) {
    for (int k = 0; k < iters; ++k) backward(loss, /*keep_graph=*/true);
  });
  EXPECT_EQ(max_of(autograd::grad(x)), 6.0 * kThreads * iters);
  EXPECT_EQ(min_of(autograd::grad(x)), 6.0 * kThreads * iters);
}

TEST(AutogradThreads, SharedGraphFreedByOneThreadRaisesInOthers) {
  for (int round = 0; round < 20; ++round) {
    Tensor x = ones({1000}, ScalarType::Float64);
    autograd::set_requires_grad(x, true);
    Tensor loss = sum(mul(x, x));
    std::atomic<int> ok{0}, raised{0};
    run_threads(kThreads, [&](int) {
      try {
        backward(loss);
        ok.fetch_add(1);
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("second time"), std::string::npos) << e.what();
        raised.fetch_add(1);
      }
    });
    ASSERT_GE(ok.load(), 1);
    ASSERT_EQ(ok.load() + raised.load(), kThreads);
    ASSERT_EQ(max_of(autograd::grad(x)), 2.0 * ok.load());
  }
}

TEST(AutogradThreads, GradModeIsPerThread) {
  std::atomic<bool> in_no_grad{false}, checked{false};
  bool other_enabled = false;
  std::thread a([&] {
    autograd::NoGradGuard ng;
    in_no_grad = true;
    while (!checked) std::this_thread::yield();
  });
  std::thread b([&] {
    while (!in_no_grad) std::this_thread::yield();
    other_enabled = autograd::GradMode::is_enabled();
    checked = true;
  });
  a.join();
  b.join();
  EXPECT_TRUE(other_enabled);
  EXPECT_TRUE(autograd::GradMode::is_enabled());
}

TEST(AutogradThreads, ViewsAndVersionCountersOfASharedTensor) {
  // Views made at once from threads share one version counter (made once, atomically).
  for (int round = 0; round < 50; ++round) {
    Tensor base = zeros({64});
    std::vector<Tensor> views(kThreads);
    run_threads(kThreads, [&](int i) { views[i] = slice(base, 0, i, i + 8); });
    base.bump_version();
    for (const Tensor& v : views) ASSERT_EQ(v.version(), base.version());
  }
}

TEST(AutogradThreads, AllocatorStatsConsistentUnderThreads) {
  int64_t before = cpu_memory_stats().allocated_bytes;
  run_threads(kThreads, [&](int i) {
    for (int k = 0; k < 200; ++k) {
      Tensor t = empty({(k % 7 + 1) * 1024 * (i + 1)});
      Tensor big = empty({300 * 1024});  // cached sizes
      (void)t;
      (void)big;
    }
  });
  EXPECT_EQ(cpu_memory_stats().allocated_bytes, before);
}

TEST(AutogradThreads, DefaultGeneratorFromThreads) {
  // Each draw advances the shared generator under its lock: all draws differ.
  manual_seed(0);
  std::vector<std::vector<float>> firsts(kThreads);
  run_threads(kThreads, [&](int i) {
    for (int k = 0; k < 50; ++k) firsts[i].push_back(item(select(rand({16}), 0, 0)).to_double());
  });
  std::vector<float> all;
  for (auto& f : firsts) all.insert(all.end(), f.begin(), f.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()), all.end());
}
