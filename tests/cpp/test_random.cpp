// Random generation: the Philox engine against its published answers, results that do not depend
// on the thread count, and generator state round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "ember/core/philox.h"
#include "ember/cpu/random_math.h"
#include "ember/ember.h"

using namespace ember;

namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.is_contiguous() && b.is_contiguous() &&
         std::memcmp(a.data_ptr(), b.data_ptr(), a.numel() * a.element_size()) == 0;
}

// Runs `make` with the given thread count from the same seed.
Tensor with_threads(int n, uint64_t seed, const std::function<Tensor(Generator&)>& make) {
  int before = get_num_threads();
  set_num_threads(n);
  Generator g;
  g.manual_seed(seed);
  Tensor t = make(g);
  set_num_threads(before);
  return t;
}

}  // namespace

TEST(Philox, MatchesRandom123KnownAnswers) {
  // Random123's kat_vectors for philox4x32_10.
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, BatchedFillAgreesWithSingleBlocks) {
  const uint64_t key = 0x0123456789abcdefull, counter = 0xfffffffffffffff0ull;  // crosses the 32-bit carry
  uint32_t out[4 * 37];
  philox_fill(key, counter, 37, out);
  for (int i = 0; i < 37; ++i) {
    uint64_t c = counter + i;
    auto want = philox4x32({uint32_t(c), uint32_t(c >> 32), 0, 0}, {uint32_t(key), uint32_t(key >> 32)});
    for (int j = 0; j < 4; ++j) ASSERT_EQ(out[4 * i + j], want[j]) << "block " << i << " word " << j;
  }
}

TEST(Random, IndependentOfThreadCount) {
  const int64_t n = 300001;  // many tiles, odd, several grains
  std::vector<std::pair<const char*, std::function<Tensor(Generator&)>>> cases = {
      {"rand f32", [&](Generator& g) { return rand({n}, &g); }},
      {"rand f64", [&](Generator& g) { return rand({n}, &g, ScalarType::Float64); }},
      {"randn f32", [&](Generator& g) { return randn({n}, &g); }},
      {"randn f64", [&](Generator& g) { return randn({n}, &g, ScalarType::Float64); }},
      {"randn f16", [&](Generator& g) { return randn({n}, &g, ScalarType::Float16); }},
      {"randint", [&](Generator& g) { return randint(-7, 1000, {n}, &g); }},
      {"random_ wide",
       [&](Generator& g) {
         Tensor t = empty({n}, ScalarType::Int64);
         return random_(t, &g);
       }},
      {"bernoulli",
       [&](Generator& g) {
         Tensor t = empty({n}, ScalarType::Float32);
         return bernoulli_(t, 0.3, &g);
       }},
      {"exponential",
       [&](Generator& g) {
         Tensor t = empty({n}, ScalarType::Float32);
         return exponential_(t, 2.0, &g);
       }},
      {"normal tensors", [&](Generator& g) { return normal(arange(0, n, 1, ScalarType::Float32), 2.0, &g); }},
      {"multinomial",
       [&](Generator& g) {
         return multinomial(ones({64, 100}), 50, false, &g);
       }},
      {"multinomial replacement",
       [&](Generator& g) {
         return multinomial(ones({64, 100}), 500, true, &g);
       }},
  };
  for (auto& [name, make] : cases) {
    Tensor one = with_threads(1, 1234, make);
    Tensor two = with_threads(2, 1234, make);
    EXPECT_TRUE(same_bytes(one, two)) << name;
  }
}

TEST(Random, PrefixOfALongerDrawIsTheShorterDraw) {
  // Element i's value depends on its index only, so rand(n)[:m] == rand(m) for one seed.
  Generator a, b;
  a.manual_seed(7);
  b.manual_seed(7);
  Tensor big = randn({1000}, &a), small = randn({301}, &b);
  EXPECT_EQ(std::memcmp(big.data_ptr(), small.data_ptr(), 301 * sizeof(float)), 0);
}

TEST(Generator, StateRoundTrip) {
  Generator g;
  g.manual_seed(42);
  (void)rand({10}, &g);
  Tensor state = g.get_state();
  ASSERT_EQ(state.dtype(), ScalarType::UInt8);
  ASSERT_EQ(state.numel(), kRngStateSize);
  Tensor first = randn({1000}, &g);
  Tensor first_int = randint(0, 10, {100}, &g);
  g.set_state(state);
  EXPECT_TRUE(same_bytes(randn({1000}, &g), first));
  EXPECT_TRUE(same_bytes(randint(0, 10, {100}, &g), first_int));
  EXPECT_EQ(g.initial_seed(), 42u);

  Generator other;  // state carries the seed as well
  other.set_state(state);
  EXPECT_EQ(other.initial_seed(), 42u);
  EXPECT_TRUE(same_bytes(randn({1000}, &other), first));

  Generator copy = g.clone_state();
  EXPECT_FALSE(copy.is_same(g));
  EXPECT_TRUE(same_bytes(rand({5}, &copy), rand({5}, &g)));

  EXPECT_THROW(g.set_state(zeros({3}, ScalarType::UInt8)), Error);
  EXPECT_THROW(g.set_state(zeros({kRngStateSize}, ScalarType::Int64)), TypeError);
}

TEST(Generator, DefaultGeneratorAndReseeding) {
  manual_seed(5);
  EXPECT_EQ(initial_seed(), 5u);
  Tensor a = rand({4});
  manual_seed(5);
  EXPECT_TRUE(same_bytes(rand({4}), a));
  Tensor saved = get_rng_state();
  Tensor b = rand({4});
  set_rng_state(saved);
  EXPECT_TRUE(same_bytes(rand({4}), b));
  uint64_t s = seed();
  EXPECT_EQ(initial_seed(), s);
  Generator fresh;
  EXPECT_EQ(fresh.initial_seed(), kDefaultRngSeed);
}

TEST(Random, NonContiguousInPlaceMatchesContiguousValues) {
  // A strided (non-dense) destination receives the values of a contiguous draw of its shape.
  Generator a, b;
  a.manual_seed(3);
  b.manual_seed(3);
  Tensor base = zeros({4, 10});
  Tensor strided = slice(base, 1, 0, 10, 2);  // (4, 5), not dense
  uniform_(strided, -1.0, 1.0, &a);
  Tensor want = empty({4, 5});
  uniform_(want, -1.0, 1.0, &b);
  Tensor got = contiguous(strided);
  EXPECT_TRUE(same_bytes(got, want));
  EXPECT_EQ(item(sum(select(slice(base, 1, 1, 10, 2), 0, 0))).to_double(), 0.0) << "odd columns untouched";
}

TEST(RandomMath, LogAndSinCosAreAccurate) {
  double worst_log = 0, worst_trig_f = 0, worst_trig_d = 0;
  for (int i = 1; i <= (1 << 16); ++i) {
    float u = float(i) * 0x1p-16f;  // (0, 1]
    double want = std::log(double(u));
    worst_log = std::max(worst_log, std::abs(double(cpu::log_f(u)) - want) / std::max(1e-30, std::abs(want)));
    float s, c;
    cpu::sincos_2pi(u - 0x1p-16f, s, c);  // [0, 1)
    double a = 2 * M_PI * double(u - 0x1p-16f);
    worst_trig_f = std::max({worst_trig_f, std::abs(s - std::sin(a)), std::abs(c - std::cos(a))});
    double sd, cd, ud = double(i - 1) / 65536.0 + 1e-7;
    cpu::sincos_2pi(ud, sd, cd);
    worst_trig_d =
        std::max({worst_trig_d, std::abs(sd - std::sin(2 * M_PI * ud)), std::abs(cd - std::cos(2 * M_PI * ud))});
  }
  EXPECT_LT(worst_log, 3e-7) << "log_f relative error";
  EXPECT_LT(worst_trig_f, 3e-7) << "float sincos absolute error";
  EXPECT_LT(worst_trig_d, 1e-15) << "double sincos absolute error";
}

TEST(RandomMath, VectorBoxMullerAgreesWithScalar) {
#ifdef EMBER_X86_SIMD
  if (!ember::detail::cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA on this CPU";
  const int64_t pairs = 4096;
  std::vector<uint32_t> words(2 * pairs);
  philox_fill(99, 0, pairs / 2, words.data());
  words[0] = 0xffffffffu, words[1] = 0;  // u1 = 1 (r = 0) and u1, u2 extremes
  words[2] = 0, words[3] = 0xffffffffu;
  std::vector<float> vec(2 * pairs), ref(2 * pairs);
  cpu::detail::box_muller_f32_avx2(words.data(), pairs, vec.data());
  cpu::detail::box_muller_f32_scalar(words.data(), pairs, ref.data());
  for (int64_t i = 0; i < 2 * pairs; ++i)
    ASSERT_NEAR(vec[i], ref[i], 2e-6f * std::max(1.0f, std::abs(ref[i]))) << "element " << i;
#else
  GTEST_SKIP() << "no x86 SIMD path in this build";
#endif
}
