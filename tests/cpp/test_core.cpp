// Invariants of the tensor core best checked below Python.
#include <gtest/gtest.h>

#include <limits>

#include "ember/ember.h"
#include "ember/ops/gemm.h"
#include "ember/ops/random.h"
#include "ember/ops/tri_indices.h"

using namespace ember;

TEST(Storage, FreedWhenLastReferenceGoes) {
  cpu_empty_cache();
  int64_t before = cpu_memory_stats().allocated_bytes;
  {
    Tensor t = empty({1024, 1024});
    Tensor v = view(t, Shape{-1});
    EXPECT_GE(cpu_memory_stats().allocated_bytes - before, 4 << 20);
    t = Tensor();
    EXPECT_GE(cpu_memory_stats().allocated_bytes - before, 4 << 20) << "a view keeps the storage alive";
  }
  EXPECT_EQ(cpu_memory_stats().allocated_bytes, before);
}

TEST(Allocator, LargeBlocksAreReused) {
  cpu_empty_cache();
  void* first;
  {
    Tensor t = empty({1 << 20});
    first = t.data_ptr();
  }
  EXPECT_GT(cpu_memory_stats().cached_bytes, 0);
  Tensor t2 = empty({1 << 20});
  EXPECT_EQ(t2.data_ptr(), first);
  cpu_empty_cache();
}

TEST(Views, ShareStorageAndVersionCounter) {
  Tensor a = zeros({4, 6});
  Tensor v = transpose(a, 0, 1);
  EXPECT_EQ(v.impl()->storage().get(), a.impl()->storage().get());
  EXPECT_FALSE(v.is_contiguous());
  uint32_t before = a.version();
  Tensor s = select(v, 0, 2);
  fill_(s, 5);
  EXPECT_GT(a.version(), before) << "an in-place op on a view bumps the base's version";
  EXPECT_EQ(item(sum(a)).to_double(), 5.0 * 4);
}

TEST(Views, ViewStridesFollowChunks) {
  Tensor a = zeros({2, 3, 4});
  Tensor p = permute(a, Shape{1, 0, 2});  // (3, 2, 4) strides (4, 12, 1)
  Tensor ok = view(p, Shape{3, 2, 2, 2});
  EXPECT_EQ(ok.strides(), (Shape{4, 12, 2, 1}));
  EXPECT_THROW(view(p, Shape{6, 4}), Error);
  Tensor r = reshape(p, Shape{6, 4});  // needs a copy
  EXPECT_TRUE(r.is_contiguous());
  EXPECT_NE(r.impl()->storage().get(), a.impl()->storage().get());
}

TEST(Views, SliceAndExpand) {
  Tensor a = arange(0, 10, 1);
  Tensor s = slice(a, 0, 1, 9, 3);  // 1, 4, 7
  EXPECT_EQ(s.sizes(), (Shape{3}));
  EXPECT_EQ(s.strides(), (Shape{3}));
  EXPECT_EQ(item(select(s, 0, 2)).to_int(), 7);
  Tensor e = expand(unsqueeze(s, 0), Shape{5, -1});
  EXPECT_EQ(e.strides(), (Shape{0, 3}));
  EXPECT_EQ(item(sum(e)).to_int(), 5 * (1 + 4 + 7));
  EXPECT_THROW(expand(s, Shape{4}), Error);
  EXPECT_THROW(select(s, 0, 3), IndexError);
}

TEST(Promotion, MatchesPyTorchLattice) {
  using S = ScalarType;
  EXPECT_EQ(promote_types(S::UInt8, S::Int8), S::Int16);
  EXPECT_EQ(promote_types(S::Bool, S::Int32), S::Int32);
  EXPECT_EQ(promote_types(S::Int64, S::Float16), S::Float16);
  EXPECT_EQ(promote_types(S::Float16, S::BFloat16), S::Float32);
  EXPECT_EQ(promote_types(S::Float32, S::Float64), S::Float64);
  EXPECT_EQ(promote_types(S::Complex64, S::Float64), S::Complex128);
  // Tensors outrank 0-d tensors and Python numbers of the same category.
  Tensor i8 = zeros({2}, S::Int8);
  EXPECT_EQ(result_type(i8, scalar_tensor(int64_t(300), std::nullopt, true)), S::Int8);
  EXPECT_EQ(result_type(i8, scalar_tensor(1.5, std::nullopt, true)), S::Float32);
  EXPECT_EQ(result_type(i8, zeros({}, S::Float64)), S::Float64);
  EXPECT_EQ(result_type(zeros({2}, S::Float16), zeros({}, S::Float64)), S::Float16);
}

TEST(Half, RoundTripsAndRounds) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = Half::to_float(static_cast<uint16_t>(h));
    if (f != f) continue;
    ASSERT_EQ(Half::from_float(f), h);
  }
  EXPECT_EQ(static_cast<float>(Half(65520.0f)), INFINITY);           // rounds up past max
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f + 1.0f / 256)), 1.0f);  // tie to even
}

TEST(Arithmetic, BroadcastAndErrors) {
  Tensor a = reshape(arange(0, 6, 1, ScalarType::Float32), Shape{2, 3});
  Tensor b = arange(0, 3, 1, ScalarType::Float32);
  Tensor c = a + b;
  EXPECT_EQ(c.sizes(), (Shape{2, 3}));
  EXPECT_DOUBLE_EQ(item(sum(c)).to_double(), 15.0 + 2 * 3.0);
  EXPECT_THROW(a + arange(0, 4, 1), Error);
  Tensor ia = arange(0, 4, 1);
  EXPECT_THROW(floor_divide(ia, zeros({4}, ScalarType::Int64)), Error);
  Tensor x = ones({3}, ScalarType::Int64);
  EXPECT_THROW(x += 1.5, Error) << "float result cannot be written into an int tensor";
}

TEST(Matmul, AgreesWithLoops) {
  Tensor a = reshape(arange(0, 6, 1, ScalarType::Float64), Shape{2, 3});
  Tensor b = reshape(arange(0, 12, 1, ScalarType::Float64), Shape{3, 4});
  Tensor c = matmul(a, b);
  ASSERT_EQ(c.sizes(), (Shape{2, 4}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double want = 0;
      for (int k = 0; k < 3; ++k) want += (i * 3 + k) * (k * 4 + j);
      EXPECT_DOUBLE_EQ(c.data<double>()[i * 4 + j], want);
    }
  EXPECT_THROW(mm(a, a), Error);
}

TEST(Matmul, OutFormsWriteIntoOutAndCheckIt) {
  // A product big enough for the BLAS/MKL path, and a tiny one: out keeps its memory, equals mm.
  for (int64_t n : {3, 200}) {
    Tensor a = randn({n, n + 1}), b = randn({n + 1, n - 1});
    Tensor out = empty({n, n - 1});
    const void* before = out.data_ptr();
    const uint32_t version = out.version();
    Tensor& r = mm_out(out, a, b);
    EXPECT_TRUE(r.is_same(out));
    EXPECT_EQ(out.data_ptr(), before) << "written in place, not replaced";
    EXPECT_GT(out.version(), version);
    EXPECT_TRUE(allclose(out, mm(a, b), 1e-5, 1e-5));
    Tensor bout = empty({0});  // resized
    bmm_out(bout, unsqueeze(a, 0), unsqueeze(b, 0));
    EXPECT_EQ(bout.sizes(), (Shape{1, n, n - 1}));
    EXPECT_TRUE(allclose(select(bout, 0, 0), mm(a, b), 1e-5, 1e-5));
  }
  Tensor x = randn({4, 4}), y = mm(x, x);
  mm_out(x, x, x);  // out aliases both operands: computed first
  EXPECT_TRUE(allclose(x, y, 1e-6, 1e-6));
  Tensor wrong = empty({0}, ScalarType::Float64);
  EXPECT_THROW(mm_out(wrong, x, x), Error);
  EXPECT_THROW(mm_out(wrong, x, randn({3, 4})), Error);
}

TEST(Core, TriIndicesRowByRow) {
  // tril of 3 x 4 below diagonal 1: rows of 2, 3, 4 columns
  Tensor l = tril_indices(3, 4, 1);
  ASSERT_EQ(l.sizes(), Shape({2, 9}));
  const int64_t want_l[2][9] = {{0, 0, 1, 1, 1, 2, 2, 2, 2}, {0, 1, 0, 1, 2, 0, 1, 2, 3}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 9; ++j) EXPECT_EQ(l.data<int64_t>()[i * 9 + j], want_l[i][j]);
  // triu of 4 x 3 above diagonal -1, int32: rows of 3, 3, 2, 1 columns
  Tensor u = triu_indices(4, 3, -1, ScalarType::Int32);
  ASSERT_EQ(u.sizes(), Shape({2, 9}));
  const int32_t want_u[2][9] = {{0, 0, 0, 1, 1, 1, 2, 2, 3}, {0, 1, 2, 0, 1, 2, 1, 2, 2}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 9; ++j) EXPECT_EQ(u.data<int32_t>()[i * 9 + j], want_u[i][j]);
  // offsets past the edges, a few pairs of a huge matrix, refusals
  EXPECT_EQ(tril_indices(3, 3, std::numeric_limits<int64_t>::min()).numel(), 0);
  EXPECT_EQ(triu_indices(3, 3, std::numeric_limits<int64_t>::min()).size(1), 9);
  EXPECT_EQ(tril_indices(int64_t{1} << 62, int64_t{1} << 62, 2 - (int64_t{1} << 62)).size(1), 3);
  EXPECT_THROW(triu_indices(int64_t{1} << 32, int64_t{1} << 32, 0), Error);
  EXPECT_THROW(tril_indices(-1, 3, 0), Error);
  EXPECT_THROW(tril_indices(3, 3, 0, ScalarType::Float32), NotImplementedError);
}
