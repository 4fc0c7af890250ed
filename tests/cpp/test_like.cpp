// empty_like's preserve-format layout rules (ops/like.cpp).
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;

TEST(Like, DenseLayoutsKeepTheirStrides) {
  Tensor t = transpose(empty({2, 3}), 0, 1);  // (3, 2) strides (1, 3)
  EXPECT_TRUE(is_non_overlapping_and_dense(t.sizes(), t.strides()));
  EXPECT_EQ(empty_like(t).strides(), (Shape{1, 3}));
  Tensor p = permute(empty({2, 3, 4}), Shape{2, 0, 1});
  EXPECT_EQ(empty_like(p, ScalarType::Int16).strides(), p.strides());
  EXPECT_EQ(empty_like(p, ScalarType::Int16).dtype(), ScalarType::Int16);
}

TEST(Like, GappedLayoutsBecomeDenseInTheSameOrder) {
  Tensor s = slice(empty({4, 6}), 1, 0, 6, 2);  // (4, 3) strides (6, 2)
  EXPECT_FALSE(is_non_overlapping_and_dense(s.sizes(), s.strides()));
  EXPECT_EQ(empty_like(s).strides(), (Shape{3, 1}));
  Tensor st = transpose(s, 0, 1);  // (3, 4) strides (2, 6): column-major order survives
  EXPECT_EQ(empty_like(st).strides(), (Shape{1, 3}));
}

TEST(Like, ZeroStridesAndEmptyTensors) {
  Tensor e = expand(empty({3}), Shape{2, 3});  // strides (0, 1)
  EXPECT_EQ(empty_like(e).strides(), (Shape{3, 1}));
  EXPECT_EQ(infer_dense_strides(Shape{2, 1, 3}, Shape{5, 7, 1}), (Shape{3, 6, 1}));
  EXPECT_TRUE(is_non_overlapping_and_dense(Shape{2, 0, 3}, Shape{5, 7, 1}));
  EXPECT_EQ(empty_like(empty_strided({2, 0, 3}, {5, 7, 1})).strides(), (Shape{5, 7, 1}));
  EXPECT_EQ(empty_like(e, std::nullopt, /*preserve_format=*/false).strides(), (Shape{3, 1}));
}
