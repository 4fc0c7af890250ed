#include "ember/cpu/iter.h"

#include <algorithm>
#include <numeric>

#include "ember/core/mem_overlap.h"
#include "ember/core/parallel.h"
#include "ember/ops/ops.h"

namespace ember {

Shape broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op_name) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      throw Error(detail::str_cat(op_name ? op_name : "", op_name ? ": " : "", "The size of tensor a (", da,
                                  ") must match the size of tensor b (", db, ") at non-singleton dimension ", i));
    }
  }
  return out;
}

namespace {
// Permutation (outermost first) that orders `t`'s dims by decreasing stride, or identity
// when t is not a dense non-overlapping layout of the full shape.
Shape layout_permutation(const Tensor& t, IntArrayRef shape) {
  Shape perm(shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  if (!t.defined() || t.is_contiguous() || !(IntArrayRef(t.sizes()) == shape)) return perm;
  const Shape& st = t.strides();
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    if (shape[x] == 1 || shape[y] == 1) return false;
    return st[x] > st[y];
  });
  // Dense check: walking perm innermost-out, strides must be the running products.
  int64_t expect = 1;
  for (int64_t i = static_cast<int64_t>(perm.size()) - 1; i >= 0; --i) {
    int64_t d = perm[i];
    if (shape[d] == 1) continue;
    if (st[d] != expect) {
      std::iota(perm.begin(), perm.end(), 0);
      return perm;
    }
    expect *= shape[d];
  }
  return perm;
}
}  // namespace

TensorIter::TensorIter(Tensor& out, std::initializer_list<Tensor> inputs, ScalarType out_dtype, const char* op_name,
                       bool resize_out, bool check_mem_overlap) {
  EMBER_CHECK(inputs.size() + 1 <= kMaxOperands, "too many operands");
  // Broadcast shape; the common case (all shapes equal) copies nothing.
  const Shape* same = inputs.size() ? &inputs.begin()->sizes() : &out.sizes();
  Shape bshape;
  for (const Tensor& t : inputs) {
    if (t.sizes() == *same) continue;
    if (bshape.empty() && same != &bshape) bshape = *same;
    bshape = broadcast_shapes(bshape, t.sizes(), op_name);
    same = &bshape;
  }
  const Shape& shape = *same;
  if (!out.defined()) {
    const Tensor* like = nullptr;
    for (const Tensor& t : inputs)
      if (!t.is_contiguous() && t.sizes() == shape) like = &t;
    if (like)
      out = empty_permuted(shape, layout_permutation(*like, shape), out_dtype);
    else
      out = empty(shape, out_dtype);
  } else {
    if (out.sizes() != shape) {
      EMBER_CHECK(resize_out, "output with shape ", out.shape_str(), " doesn't match the broadcast shape ",
                  ember::shape_str(shape));
      resize_(out, shape);
    }
    if (check_mem_overlap) {
      assert_no_internal_overlap(out);
      for (const Tensor& t : inputs) assert_no_partial_overlap(out, t);
    }
  }

  ntensors_ = static_cast<int>(inputs.size()) + 1;
  numel_ = numel_of(shape);
  const int64_t ndim = static_cast<int64_t>(shape.size());
  EMBER_CHECK(ndim <= kMaxDims, "tensors with more than ", kMaxDims, " dimensions are not supported");
  const int nt = ntensors_;

  // Byte strides per operand (broadcast dims get 0), dims innermost-first.
  int64_t st[kMaxDims * kMaxOperands];
  int64_t sh[kMaxDims];
  const Tensor* ops[kMaxOperands] = {&out};
  int k0 = 1;
  for (const Tensor& t : inputs) ops[k0++] = &t;
  for (int64_t d = 0; d < ndim; ++d) sh[d] = shape[ndim - 1 - d];
  for (int k = 0; k < nt; ++k) {
    const Tensor& t = *ops[k];
    data_[k] = static_cast<char*>(t.data_ptr());
    int64_t es = static_cast<int64_t>(t.element_size());
    int64_t off = ndim - t.dim();
    for (int64_t d = 0; d < ndim; ++d) {
      int64_t td = d - off;
      int64_t s = (td < 0 || t.sizes()[td] == 1) ? 0 : t.strides()[td] * es;
      st[(ndim - 1 - d) * nt + k] = s;
    }
  }

  // Order dims by the output's strides (then inputs'), smallest innermost: insertion sort
  // keeps it stable and ndim is small.
  int64_t order[kMaxDims];
  for (int64_t i = 0; i < ndim; ++i) order[i] = i;
  auto inside = [&](int64_t a, int64_t b) {  // should dim a be inside dim b?
    for (int k = 0; k < nt; ++k) {
      int64_t sa = st[a * nt + k], sb = st[b * nt + k];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa < sb;
    }
    return false;
  };
  for (int64_t i = 1; i < ndim; ++i)
    for (int64_t j = i; j > 0 && inside(order[j], order[j - 1]); --j) std::swap(order[j], order[j - 1]);

  // Merge adjacent dims (inner, outer) when stride[outer] == stride[inner] * size[inner].
  ndim_ = 0;
  for (int64_t idx = 0; idx < ndim; ++idx) {
    int64_t d = order[idx];
    if (sh[d] == 1) continue;
    if (ndim_ > 0) {
      int last = ndim_ - 1;
      bool can = true;
      for (int k = 0; k < nt && can; ++k) can = st[d * nt + k] == strides_[last * nt + k] * shape_[last];
      if (can) {
        shape_[last] *= sh[d];
        continue;
      }
    }
    shape_[ndim_] = sh[d];
    for (int k = 0; k < nt; ++k) strides_[ndim_ * nt + k] = st[d * nt + k];
    ++ndim_;
  }
  if (ndim_ == 0) {  // 0-d or all size-1 dims
    shape_[0] = 1;
    for (int k = 0; k < nt; ++k) strides_[k] = 0;
    ndim_ = 1;
  }
  if (numel_ == 0) {
    shape_[0] = 0;
    ndim_ = 1;
  }
}

namespace {
// The walk's start at element `begin`: the multi-index over the outer dims (counter), each
// operand's pointer, and the column within the first row (returned).
int64_t seek(int64_t begin, int nt, int64_t ndim, const int64_t* shape, const int64_t* strides, char* const* data,
             int64_t* counter, char** ptr) {
  const int64_t row = begin / shape[0], col = begin % shape[0];
  for (int k = 0; k < nt; ++k) ptr[k] = data[k] + col * strides[k];
  for (int64_t d = 1, r = row; d < ndim; ++d) {
    counter[d] = r % shape[d];
    r /= shape[d];
    for (int k = 0; k < nt; ++k) ptr[k] += counter[d] * strides[d * nt + k];
  }
  return col;
}
}  // namespace

void TensorIter::walk(RowLoop loop, int64_t begin, int64_t end) const {
  const int nt = ntensors_;
  const int64_t ndim = ndim_;
  const int64_t inner = shape_[0];
  int64_t counter[kMaxDims] = {0};
  std::array<char*, kMaxOperands> ptr;
  int64_t col = seek(begin, nt, ndim, shape_, strides_, data_.data(), counter, ptr.data());
  int64_t remaining = end - begin;
  while (remaining > 0) {
    int64_t n = std::min(inner - col, remaining);
    loop(ptr.data(), strides_, n);
    remaining -= n;
    if (remaining <= 0) break;
    // Next row: rewind the inner dim, carry through outer dims.
    for (int k = 0; k < nt; ++k) ptr[k] -= col * strides_[k];
    col = 0;
    for (int64_t d = 1; d < ndim; ++d) {
      ++counter[d];
      for (int k = 0; k < nt; ++k) ptr[k] += strides_[d * nt + k];
      if (counter[d] < shape_[d]) break;
      for (int k = 0; k < nt; ++k) ptr[k] -= counter[d] * strides_[d * nt + k];
      counter[d] = 0;
    }
  }
}

void TensorIter::walk_2d(Loop2d loop, int64_t begin, int64_t end) const {
  const int nt = ntensors_;
  const int64_t inner = shape_[0];
  std::array<char*, kMaxOperands> ptr;
  if (ndim_ < 2) {  // one row
    for (int k = 0; k < nt; ++k) ptr[k] = data_[k] + begin * strides_[k];
    loop(ptr.data(), strides_, end - begin, 1, strides_ + nt);
    return;
  }
  int64_t counter[kMaxDims] = {0};
  int64_t col = seek(begin, nt, ndim_, shape_, strides_, data_.data(), counter, ptr.data());
  int64_t remaining = end - begin;
  while (remaining > 0) {
    // A partial row (the range starts or ends inside one) alone, else whole rows to dim 1's end.
    const bool whole = col == 0 && remaining >= inner;
    const int64_t n = whole ? inner : std::min(inner - col, remaining);
    const int64_t rows = whole ? std::min(shape_[1] - counter[1], remaining / inner) : 1;
    loop(ptr.data(), strides_, n, rows, strides_ + nt);
    remaining -= n * rows;
    if (remaining <= 0) break;
    for (int k = 0; k < nt; ++k) ptr[k] += rows * strides_[nt + k] - col * strides_[k];
    col = 0;
    counter[1] += rows;
    for (int64_t d = 1; counter[d] >= shape_[d] && d + 1 < ndim_; ++d) {  // carry into the outer dims
      for (int k = 0; k < nt; ++k) ptr[k] += strides_[(d + 1) * nt + k] - counter[d] * strides_[d * nt + k];
      counter[d] = 0;
      ++counter[d + 1];
    }
  }
}

void TensorIter::for_each_2d(Loop2d loop, int64_t grain) const {
  if (numel_ == 0) return;
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { walk_2d(loop, b, e); });
}

void TensorIter::for_each(RowLoop loop, int64_t grain) const {
  if (numel_ == 0) return;
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { walk(loop, b, e); });
}

}  // namespace ember
