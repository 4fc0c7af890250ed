// Note [Checked size arithmetic]: the overflow-checked helpers and the ops built on them.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "ember/ember.h"

using namespace ember;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
}  // namespace

TEST(CheckedMath, MulAddOverflowFlags) {
  int64_t r;
  EXPECT_FALSE(mul_overflows(int64_t(1) << 31, int64_t(1) << 31, &r));
  EXPECT_EQ(r, int64_t(1) << 62);
  EXPECT_TRUE(mul_overflows(int64_t(1) << 32, int64_t(1) << 31, &r));
  EXPECT_TRUE(mul_overflows(kMin, -1, &r));
  EXPECT_FALSE(mul_overflows(kMax, 1, &r));
  EXPECT_FALSE(mul_overflows(0, kMax, &r));
  EXPECT_TRUE(add_overflows(kMax, 1, &r));
  EXPECT_TRUE(add_overflows(kMin, -1, &r));
  EXPECT_FALSE(add_overflows(kMax, kMin, &r));
  EXPECT_EQ(r, -1);
  EXPECT_EQ(checked_mul(6, 7, "t"), 42);
  EXPECT_EQ(checked_add(-6, 7, "t"), 1);
  EXPECT_THROW(checked_mul(kMax, 2, "t"), Error);
  EXPECT_THROW(checked_add(kMax, 1, "t"), Error);
}

TEST(CheckedMath, Numel) {
  int64_t n;
  EXPECT_TRUE(safe_numel({}, &n));
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(safe_numel({2, 3, 4}, &n));
  EXPECT_EQ(n, 24);
  EXPECT_TRUE(safe_numel({int64_t(1) << 62, 0}, &n));
  EXPECT_EQ(n, 0);
  // A running product that overflows is an error even when a later size is 0 (as torch).
  EXPECT_FALSE(safe_numel({int64_t(1) << 62, int64_t(1) << 62, 0}, &n));
  EXPECT_THROW(checked_numel({int64_t(1) << 32, int64_t(1) << 32}), Error);
  EXPECT_EQ(checked_numel({int64_t(1) << 31, int64_t(1) << 31}), int64_t(1) << 62);
}

TEST(CheckedMath, StorageBytes) {
  EXPECT_EQ(storage_nbytes_contiguous({2, 3}, 4), 24u);
  EXPECT_EQ(storage_nbytes_contiguous({0, int64_t(1) << 62}, 8), 0u);
  EXPECT_THROW(storage_nbytes_contiguous({int64_t(1) << 62}, 4), Error);  // 2^64 bytes
  EXPECT_THROW(storage_nbytes_contiguous({int64_t(1) << 60}, 8), Error);  // 2^63 bytes: not an int64
  EXPECT_EQ(storage_nbytes_strided({2, 3}, {3, 1}, 4), 24u);
  EXPECT_EQ(storage_nbytes_strided({2, 3}, {1, 2}, 4, 1), 28u);  // offset 1 + last index 5, plus one
  EXPECT_EQ(storage_nbytes_strided({0, 3}, {kMax, 1}, 4), 0u);   // empty: nothing needed
  EXPECT_THROW(storage_nbytes_strided({2, 2}, {int64_t(1) << 62, 1}, 4), Error);
  EXPECT_THROW(storage_nbytes_strided({3}, {kMax}, 1), Error);
  EXPECT_THROW(storage_nbytes_strided({1}, {1}, 1, kMax), Error);
}

TEST(CheckedMath, ViewBounds) {
  EXPECT_NO_THROW(check_view_in_bounds({3}, {1}, 7, 4, 40));
  EXPECT_THROW(check_view_in_bounds({3}, {1}, 8, 4, 40), Error);
  EXPECT_THROW(check_view_in_bounds({3}, {-1}, 1, 4, 40), Error);  // reaches index -1
  EXPECT_NO_THROW(check_view_in_bounds({3}, {-1}, 2, 4, 40));
  EXPECT_NO_THROW(check_view_in_bounds({0}, {kMax}, kMax, 4, 0));  // no elements
  EXPECT_THROW(check_view_in_bounds({2}, {int64_t(1) << 62}, 0, 4, 40), Error);
  EXPECT_THROW(check_view_in_bounds({2, 2}, {kMax, kMax}, 0, 4, 40), Error);
}

TEST(CheckedMath, IntegerDivisionWithoutTrap) {
  EXPECT_EQ(int_div_wrap<int64_t>(kMin, -1), kMin);
  EXPECT_EQ(int_mod_wrap<int64_t>(kMin, -1), 0);
  EXPECT_EQ(int_div_wrap<int32_t>(std::numeric_limits<int32_t>::min(), -1), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(int_div_wrap<int8_t>(-128, -1), -128);
  EXPECT_EQ(int_div_wrap<int64_t>(7, -2), -3);
  EXPECT_EQ(int_mod_wrap<int64_t>(7, -2), 1);
  EXPECT_EQ(int_div_wrap<uint8_t>(200, 3), 66);
}

TEST(CheckedMath, OpsRaiseInsteadOfWrapping) {
  EXPECT_THROW(empty({int64_t(1) << 62}), Error);
  EXPECT_THROW(empty({int64_t(1) << 32, int64_t(1) << 32}), Error);
  EXPECT_THROW(empty_strided({2, 2}, {int64_t(1) << 62, 1}), Error);
  Tensor t = ones({3});
  EXPECT_THROW(as_strided(t, {2}, {int64_t(1) << 62}), Error);
  EXPECT_THROW(as_strided(t, {2}, {1}, int64_t(1) << 62), Error);
  EXPECT_THROW(as_strided(t, {3}, {1}, 1), Error);
  EXPECT_NO_THROW(as_strided(t, {2}, {1}, 1));
  EXPECT_THROW(expand(ones({1, 1}), {int64_t(1) << 62, int64_t(1) << 62}), Error);
  EXPECT_THROW(resize_(t, {int64_t(1) << 62}), Error);
  EXPECT_EQ(t.numel(), 3);  // a failed resize_ leaves the tensor as it was
  // An impossible but representable size is the allocator's RuntimeError, not std::bad_alloc.
  EXPECT_THROW(empty({int64_t(1) << 50}, ScalarType::UInt8), Error);
}

TEST(CheckedMath, IntegerDivisionOps) {
  Tensor a = full({4}, kMin, ScalarType::Int64), m1 = full({4}, -1, ScalarType::Int64);
  EXPECT_EQ(floor_divide(a, m1).data<int64_t>()[3], kMin);
  EXPECT_EQ(remainder(a, m1).data<int64_t>()[3], 0);
  EXPECT_EQ(fmod(a, m1).data<int64_t>()[3], 0);
  EXPECT_THROW(floor_divide(a, zeros({4}, ScalarType::Int64)), Error);
}
