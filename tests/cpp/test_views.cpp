// Invariants of the view layer best checked below Python: shared storage and version counters,
// storage lifetimes, and the layout rules copies follow. Expected strides are PyTorch's.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

Tensor iota(int64_t n, ScalarType dtype = ScalarType::Float32) { return arange(0, n, 1, dtype); }
Tensor iota(Shape shape) { return reshape(iota(numel_of(shape)), shape); }

bool shares_storage(const Tensor& a, const Tensor& b) { return a.impl()->storage().get() == b.impl()->storage().get(); }
bool shares_version(const Tensor& a, const Tensor& b) {
  return a.impl()->version_counter().get() == b.impl()->version_counter().get();
}

// Every view op, applied to a 2x3x4 tensor.
const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>>& view_ops() {
  static const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
      {"view",
       [](const Tensor& t) {
         return view(t, Shape{6, -1});
       }},
      {"reshape", [](const Tensor& t) { return reshape(t, Shape{-1}); }},
      {"view_dtype", [](const Tensor& t) { return view_dtype(t, ScalarType::Int32); }},
      {"view_dtype_narrow", [](const Tensor& t) { return view_dtype(t, ScalarType::Int16); }},
      {"as_strided",
       [](const Tensor& t) {
         return as_strided(t, Shape{2, 2}, Shape{1, 2}, 3);
       }},
      {"permute",
       [](const Tensor& t) {
         return permute(t, Shape{2, 0, 1});
       }},
      {"transpose", [](const Tensor& t) { return transpose(t, 0, 2); }},
      {"t", [](const Tensor& t) { return t_(select(t, 0, 1)); }},
      {"movedim", [](const Tensor& t) { return movedim(t, Shape{0}, Shape{2}); }},
      {"expand",
       [](const Tensor& t) {
         return expand(t, Shape{5, -1, -1, -1});
       }},
      {"squeeze", [](const Tensor& t) { return squeeze(t); }},
      {"unsqueeze", [](const Tensor& t) { return unsqueeze(t, 1); }},
      {"flatten", [](const Tensor& t) { return flatten(t, 1); }},
      {"unflatten",
       [](const Tensor& t) {
         return unflatten(t, 2, Shape{2, -1});
       }},
      {"narrow", [](const Tensor& t) { return narrow(t, 1, 1, 2); }},
      {"select", [](const Tensor& t) { return select(t, -1, 3); }},
      {"slice", [](const Tensor& t) { return slice(t, 2, 1, std::nullopt, 2); }},
      {"unfold", [](const Tensor& t) { return unfold(t, 2, 2, 1); }},
      {"alias", [](const Tensor& t) { return alias(t); }},
  };
  return ops;
}

}  // namespace

TEST(ViewLayer, EveryViewSharesStorageAndVersionCounter) {
  for (const auto& [name, op] : view_ops()) {
    Tensor base = iota(Shape{2, 3, 4});
    Tensor v = op(base);
    EXPECT_FALSE(v.is_same(base)) << name << " returns a new TensorImpl";
    EXPECT_TRUE(shares_storage(v, base)) << name;
    EXPECT_TRUE(shares_version(v, base)) << name;
    uint32_t before = base.version();
    fill_(v, 1);
    EXPECT_EQ(base.version(), before + 1) << name << ": writing through the view bumps the base once";
    Tensor vv = op(base);
    copy_(base, zeros({}));
    EXPECT_EQ(vv.version(), base.version()) << name;
  }
}

TEST(ViewLayer, ViewsKeepStorageAliveAndCopiesDoNot) {
  Tensor base = iota(Shape{4, 6});
  const auto* storage = base.impl()->storage().get();
  uint32_t refs = storage->use_count();
  {
    Tensor a = transpose(base, 0, 1);
    Tensor b = reshape(a, Shape{6, 2, 2});  // a view: splits dim 1 only
    Tensor c = select(slice(base, 1, 0, 6, 2), 0, 1);
    EXPECT_EQ(storage->use_count(), refs + 3);
    Tensor d = reshape(a, Shape{-1});  // not viewable: a copy
    EXPECT_FALSE(shares_storage(d, base));
    EXPECT_FALSE(shares_version(d, base));
    Tensor e = clone(base);
    EXPECT_FALSE(shares_storage(e, base));
    EXPECT_EQ(storage->use_count(), refs + 3);
  }
  EXPECT_EQ(storage->use_count(), refs);
  // A view outliving its base keeps the bytes (and the values) alive.
  Tensor survivor;
  {
    Tensor b2 = iota(Shape{3, 3});
    survivor = select(b2, 0, 2);
  }
  // The view and its root base (kept by view_base for autograd) are the storage's only owners.
  EXPECT_EQ(survivor.impl()->storage()->use_count(), 2u);
  EXPECT_EQ(survivor.impl()->view_base->use_count(), 1u);
  EXPECT_EQ(item(select(survivor, 0, 1)).to_double(), 7.0);
}

TEST(ViewLayer, ViewStridesFollowPyTorch) {
  struct Case {
    Shape sizes, strides, shape;
    std::optional<Shape> want;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {12, 4, 1}, {6, 4}, Shape{4, 1}},
      {{3, 2, 4}, {4, 12, 1}, {3, 2, 2, 2}, Shape{4, 12, 2, 1}},  // permute(1, 0, 2)
      {{3, 2, 4}, {4, 12, 1}, {6, 4}, std::nullopt},
      {{3, 2, 4}, {4, 12, 1}, {3, 8}, std::nullopt},
      {{4, 3}, {6, 1}, {2, 2, 3}, Shape{12, 6, 1}},
      {{4, 3}, {6, 1}, {12}, std::nullopt},
      {{3, 4}, {1, 0}, {3, 2, 2}, Shape{1, 0, 0}},
      {{2, 1, 4}, {4, 7, 1}, {8}, Shape{1}},  // size-1 dims have any stride
      {{2, 1, 4}, {4, 7, 1}, {2, 4, 1}, Shape{4, 1, 1}},
      {{0, 3}, {1, 0}, {0, 3}, Shape{1, 0}},  // no elements, same shape: strides kept
      {{0, 3}, {1, 0}, {3, 0}, Shape{1, 1}},  // otherwise contiguous ones
      {{}, {}, {1, 1}, Shape{1, 1}},
      {{6}, {5}, {1, 6, 1}, Shape{30, 5, 5}},
  };
  for (const Case& c : cases) {
    auto got = view_strides(c.sizes, c.strides, c.shape);
    EXPECT_EQ(got, c.want) << shape_str(c.sizes) << "/" << shape_str(c.strides) << " as " << shape_str(c.shape);
  }
}

TEST(ViewLayer, ClonePreservesLayout) {
  Tensor base = iota(Shape{2, 3, 4, 5});
  // Dense permutation: the exact strides are kept.
  EXPECT_EQ(clone(permute(base, Shape{3, 1, 0, 2})).strides(), (Shape{1, 20, 60, 5}));
  // Not dense: dense strides in the input's dim order.
  Tensor stepped_t = transpose(slice(base, 1, 0, 3, 2), 1, 3);  // (2, 5, 4, 2) strides (60, 1, 5, 40)
  EXPECT_EQ(clone(stepped_t).strides(), (Shape{40, 1, 5, 20}));
  EXPECT_EQ(to_dtype(stepped_t, ScalarType::Float64).strides(), (Shape{40, 1, 5, 20}));
  EXPECT_EQ(clone(stepped_t, MemoryFormat::Contiguous).strides(), (Shape{40, 8, 2, 1}));
  EXPECT_EQ(clone(base, MemoryFormat::ChannelsLast).strides(), (Shape{60, 1, 15, 3}));
  // Expanded: zero strides are "no order", so row-major.
  EXPECT_EQ(clone(expand(iota(Shape{3, 1}), Shape{3, 4})).strides(), (Shape{4, 1}));
  EXPECT_TRUE(is_non_overlapping_and_dense(permute(base, Shape{3, 1, 0, 2})));
  EXPECT_FALSE(is_non_overlapping_and_dense(stepped_t));
  EXPECT_FALSE(is_non_overlapping_and_dense(as_strided(iota(10), Shape{3, 3}, Shape{2, 1}, 0)));
  // contiguous() hands back the same tensor when there is nothing to do.
  EXPECT_TRUE(contiguous(base).is_same(base));
  Tensor cl = contiguous(base, MemoryFormat::ChannelsLast);
  EXPECT_TRUE(is_contiguous(cl, MemoryFormat::ChannelsLast));
  EXPECT_TRUE(contiguous(cl, MemoryFormat::ChannelsLast).is_same(cl));
  EXPECT_THROW(contiguous(stepped_t, MemoryFormat::Preserve), Error);
}

TEST(ViewLayer, CopyRules) {
  Tensor a = iota(6);
  // Partial overlap of dense tensors is an error; the same data is a (counted) no-op.
  Tensor tail = slice(a, 0, 1, std::nullopt), head = slice(a, 0, 0, 5);
  EXPECT_THROW(copy_(tail, head), Error);
  uint32_t v = a.version();
  copy_(a, a);
  EXPECT_EQ(a.version(), v + 1);
  // Writing into a tensor with repeated elements is an error for copy_, fine for fill_.
  Tensor e = expand(zeros({1}), Shape{4});
  EXPECT_THROW(copy_(e, ones({4})), Error);
  fill_(e, 2);
  EXPECT_EQ(item(select(e, 0, 3)).to_double(), 2.0);
  EXPECT_THROW(fill_(e, ones({})), Error);
  // Broadcasting src; never dst.
  Tensor d = zeros({2, 3});
  copy_(d, iota(3));
  EXPECT_EQ(item(sum(d)).to_double(), 6.0);
  EXPECT_THROW(copy_(d, zeros({3, 3})), Error);
}

TEST(ViewLayer, FloatToIntConversionIsDefined) {
  // Out-of-range values convert as PyTorch does on x86 (Note [Float to int conversion]).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> in = {nan, INFINITY, 300.7, -1.5, 1e10 + 1, 70000.4};
  Tensor src = empty({static_cast<int64_t>(in.size())}, ScalarType::Float64);
  for (size_t i = 0; i < in.size(); ++i) src.data<double>()[i] = in[i];
  Tensor i8 = to_dtype(src, ScalarType::Int8), u8 = to_dtype(src, ScalarType::UInt8);
  Tensor i32 = to_dtype(src, ScalarType::Int32), i64 = to_dtype(src, ScalarType::Int64);
  EXPECT_EQ(std::vector<int8_t>(i8.data<int8_t>(), i8.data<int8_t>() + 6), (std::vector<int8_t>{0, 0, 44, -1, 0, 112}));
  EXPECT_EQ(std::vector<uint8_t>(u8.data<uint8_t>(), u8.data<uint8_t>() + 6),
            (std::vector<uint8_t>{0, 0, 44, 255, 1, 112}));
  const int32_t m32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(std::vector<int32_t>(i32.data<int32_t>(), i32.data<int32_t>() + 6),
            (std::vector<int32_t>{m32, m32, 300, -1, m32, 70000}));
  const int64_t m64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(std::vector<int64_t>(i64.data<int64_t>(), i64.data<int64_t>() + 6),
            (std::vector<int64_t>{m64, m64, 300, -1, 10000000001, 70000}));
}

TEST(ViewLayer, FillChecksThatNumbersFit) {
  Tensor i8 = zeros({2}, ScalarType::Int8);
  EXPECT_THROW(fill_(i8, 128), Error);
  EXPECT_THROW(fill_(i8, 127.5), Error);
  EXPECT_NO_THROW(fill_(i8, -128));
  Tensor u8 = zeros({2}, ScalarType::UInt8);
  fill_(u8, -1);  // wraps, as PyTorch allows down to -255
  EXPECT_EQ(u8.data<uint8_t>()[0], 255);
  EXPECT_THROW(fill_(u8, -256), Error);
  Tensor h = zeros({1}, ScalarType::Float16), f = zeros({1}, ScalarType::Float32);
  Tensor l = zeros({1}, ScalarType::Int64), b = zeros({1}, ScalarType::Bool);
  EXPECT_THROW(fill_(h, 65519.0), Error);
  EXPECT_NO_THROW(fill_(f, INFINITY));
  EXPECT_THROW(fill_(l, std::nan("")), Error);
  EXPECT_NO_THROW(fill_(b, 5));
  fill_(i8, scalar_tensor(int64_t(300)));  // a tensor value converts like copy_: wraps
  EXPECT_EQ(i8.data<int8_t>()[1], 44);
}

TEST(ViewLayer, MovedimAndErrors) {
  Tensor t = iota(Shape{2, 3, 4});
  EXPECT_EQ(movedim(t, Shape{0}, Shape{-1}).sizes(), (Shape{3, 4, 2}));
  EXPECT_EQ(movedim(t, Shape{0, 1}, Shape{2, 0}).sizes(), (Shape{3, 4, 2}));
  EXPECT_EQ(movedim(t, Shape{2}, Shape{0}).strides(), (Shape{1, 12, 4}));
  EXPECT_THROW(movedim(t, Shape{0, 0}, Shape{1, 2}), Error);
  EXPECT_THROW(movedim(t, Shape{0}, Shape{1, 2}), Error);
  EXPECT_THROW(movedim(t, Shape{3}, Shape{0}), IndexError);
  EXPECT_THROW(squeeze(t, Shape{0, -3}), Error);
  EXPECT_THROW(as_strided(t, Shape{25}, Shape{1}), Error);
  EXPECT_THROW(unflatten(zeros({}), 0, Shape{1}), Error);
  EXPECT_EQ(expand(t, Shape{1, 2, 3, 4}).strides(), (Shape{24, 12, 4, 1}));
  EXPECT_EQ(expand(zeros({}), Shape{3, 1}).strides(), (Shape{0, 0}));
}
