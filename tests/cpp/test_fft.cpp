// The FFT primitives (ops/fft.h) below Python: values against a direct DFT sum, round trips, and
// plans made and run from several threads at once (Note [FFTW plans]: the planner is guarded).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <complex>
#include <numbers>
#include <thread>
#include <vector>

#include "ember/cpu/fft_kernels.h"
#include "ember/ember.h"

using namespace ember;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  Tensor d = sub(a, b);
  if (is_complex(d.dtype())) d = abs(d);
  return item(max(abs(d))).to_double();
}

}  // namespace

TEST(Fft, C2CMatchesDirectSumForPrimeLength) {
  const int64_t n = 7;
  Tensor x = randn({n}, nullptr, ScalarType::Complex128);
  Tensor y = fft_c2c(x, {0}, FftNorm::None, /*forward=*/true);
  auto* xp = static_cast<const std::complex<double>*>(x.data_ptr());
  auto* yp = static_cast<const std::complex<double>*>(y.data_ptr());
  for (int64_t k = 0; k < n; ++k) {
    std::complex<double> s = 0;
    for (int64_t j = 0; j < n; ++j) s += xp[j] * std::polar(1.0, -2 * std::numbers::pi * double(j * k) / double(n));
    EXPECT_NEAR(std::abs(yp[k] - s), 0.0, 1e-12) << "k = " << k;
  }
}

TEST(Fft, RoundTrips) {
  for (int64_t n : {1, 2, 5, 16, 17}) {
    Tensor x = randn({3, n}, nullptr, ScalarType::Float64);
    Tensor spec = fft_r2c(x, {1}, FftNorm::None, /*onesided=*/true);
    EXPECT_EQ(spec.size(1), n / 2 + 1);
    EXPECT_LT(max_abs_diff(fft_c2r(spec, {1}, FftNorm::ByN, n), x), 1e-12) << "n = " << n;
    Tensor z = randn({n, 4}, nullptr, ScalarType::Complex64);
    Tensor back = fft_c2c(fft_c2c(z, {0, 1}, FftNorm::ByRootN, true), {0, 1}, FftNorm::ByRootN, false);
    EXPECT_LT(max_abs_diff(back, z), 1e-5) << "n = " << n;
  }
}

TEST(Fft, ChecksArguments) {
  Tensor x = randn({4}, nullptr, ScalarType::Float32);
  EXPECT_THROW(fft_c2c(x, {0}, FftNorm::None, true), Error);  // needs complex input
  EXPECT_THROW(fft_r2c(x, {}, FftNorm::None, true), Error);
  EXPECT_THROW(fft_r2c(x, {1}, FftNorm::None, true), IndexError);
  EXPECT_THROW(fft_c2r(to_dtype(x, ScalarType::Complex64), {0}, FftNorm::None, 4), Error);  // 4 values, not 3
  EXPECT_THROW(fft_r2c(zeros({0}), {0}, FftNorm::None, true), Error);
}

TEST(Fft, PlansFromManyThreads) {
  // Each thread transforms its own lengths (new plans made concurrently) many times while another
  // thread keeps clearing the cache; every result must equal the one computed alone.
  constexpr int kThreads = 4;
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(randn({8, 30 + 7 * t}, nullptr, t % 2 ? ScalarType::Float32 : ScalarType::Float64));
    expected.push_back(fft_r2c(inputs.back(), {1}, FftNorm::ByN, true));
  }
  cpu::fft_plan_cache_clear();
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread clearer([&] {
    while (!stop.load()) {
      cpu::fft_plan_cache_clear();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        Tensor r = fft_r2c(inputs[t], {1}, FftNorm::ByN, true);
        if (max_abs_diff(r, expected[t]) > 1e-5) bad.fetch_add(1);
      }
    });
  for (auto& th : ts) th.join();
  stop.store(true);
  clearer.join();
  EXPECT_EQ(bad.load(), 0);
}
