// Note [Memory overlap]: the core helper's answers, and the ops that use it.
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;

namespace {
Tensor iota(int64_t n) { return arange(0, n, 1, ScalarType::Float32); }
}  // namespace

TEST(MemOverlap, InternalOverlap) {
  EXPECT_EQ(has_internal_overlap(iota(6)), MemOverlap::No);
  EXPECT_EQ(has_internal_overlap(transpose(reshape(iota(6), {2, 3}), 0, 1)), MemOverlap::No);
  EXPECT_EQ(has_internal_overlap(expand(iota(3), {4, 3})), MemOverlap::Yes);
  EXPECT_EQ(has_internal_overlap(expand(iota(1), {1, 1})), MemOverlap::No);  // size-1 dims never overlap
  EXPECT_EQ(has_internal_overlap(as_strided(iota(10), {3, 3}, {2, 1})), MemOverlap::TooHard);
  EXPECT_EQ(has_internal_overlap(slice(iota(6), 0, 0, 6, 2)), MemOverlap::TooHard);  // gaps: not dense
}

TEST(MemOverlap, OverlapStatus) {
  Tensor x = iota(6);
  EXPECT_EQ(get_overlap_status(x, x), MemOverlapStatus::Full);
  EXPECT_EQ(get_overlap_status(x, alias(x)), MemOverlapStatus::Full);
  EXPECT_EQ(get_overlap_status(slice(x, 0, 1, 6), slice(x, 0, 0, 5)), MemOverlapStatus::Partial);
  EXPECT_EQ(get_overlap_status(slice(x, 0, 0, 3), slice(x, 0, 3, 6)), MemOverlapStatus::No);
  EXPECT_EQ(get_overlap_status(x, iota(6)), MemOverlapStatus::No);
  EXPECT_EQ(get_overlap_status(slice(x, 0, 0, 0), x), MemOverlapStatus::No);  // empty
  Tensor m = reshape(x, {2, 3});
  EXPECT_EQ(get_overlap_status(m, transpose(reshape(x, {3, 2}), 0, 1)), MemOverlapStatus::Partial);
  EXPECT_EQ(get_overlap_status(expand(slice(x, 0, 0, 1), {6}), x), MemOverlapStatus::TooHard);
}

TEST(MemOverlap, ElementwiseWritesRefuseOverlap) {
  Tensor x = iota(6);
  Tensor hi = slice(x, 0, 1, 6), lo = slice(x, 0, 0, 5);
  EXPECT_THROW(binary_op(BinaryOp::Add, hi, lo, hi, true), Error);
  EXPECT_THROW(unary_op(UnaryOp::Exp, reshape(iota(9), {3, 3}), expand(iota(3), {3, 3})), Error);
  EXPECT_THROW(copy_(hi, lo), Error);
  // Nothing was written by the refused ops.
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(item(select(x, 0, i)).to_double(), static_cast<double>(i));
  // Full overlap is fine: x += x.
  binary_op(BinaryOp::Add, x, x, x, true);
  EXPECT_EQ(item(select(x, 0, 5)).to_double(), 10.0);
  // fill_ is idempotent: allowed on an expanded tensor, as in torch.
  Tensor e = expand(iota(3), {3, 3});
  fill_(e, Scalar(1.0));
  EXPECT_EQ(item(sum(e)).to_double(), 9.0);
}
