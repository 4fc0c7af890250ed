// Assembly and shape ops: cat/stack, split family, flip/roll/repeat, triangles and diagonals.
// Most are composites of views, index_select and cat, so their gradients come from the parts.
#include <cstring>
#include <functional>
#include <numeric>

#include "ember/autograd/forward_ad.h"
#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/checked_math.h"
#include "ember/core/parallel.h"
#include "ember/cpu/convert_kernels.h"
#include "ember/cpu/element_bytes.h"
#include "ember/ops/ops.h"
#include "ember/ops/unsafe_view.h"

namespace ember {
namespace {
using namespace autograd;

Tensor cast_to(const Tensor& g, ScalarType dt) { return g.dtype() == dt ? g : to_dtype(g, dt); }
Tensor long_vec(const std::vector<int64_t>& v) {
  Tensor r = empty({static_cast<int64_t>(v.size())}, ScalarType::Int64);
  if (!v.empty()) std::memcpy(r.data_ptr(), v.data(), v.size() * sizeof(int64_t));
  return r;
}
// Note [Small cat and stack]: data loaders collate batches of many small samples; a narrow view
// and a generic copy per input cost more than the bytes. When every input is contiguous with the
// output's dtype and small, each one's rows go in with memcpy: `outer` rows of `rows_bytes` each
// at `dst_offset_bytes` into output rows of `out_row_bytes`. Big inputs keep the parallel copy.
constexpr int64_t kSmallCopyBytes = 1 << 18;
// Not with a dual level open: copy_ carries the tangents into the output (Note [Forward AD]).
bool can_memcpy(const Tensor& t, ScalarType dt) {
  return !autograd::forward_ad::is_active() && t.dtype() == dt && t.is_contiguous() &&
         t.numel() * static_cast<int64_t>(element_size(dt)) <= kSmallCopyBytes;
}
void copy_rows(char* out, int64_t out_row_bytes, int64_t dst_offset_bytes, const Tensor& t, int64_t outer,
               int64_t row_bytes) {
  const char* src = static_cast<const char*>(t.data_ptr());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out + o * out_row_bytes + dst_offset_bytes, src + o * row_bytes, static_cast<size_t>(row_bytes));
}
int64_t prod(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < to; ++k) p *= s[k];
  return p;
}
}  // namespace

Tensor cat(const TensorVec& ts, int64_t dim) {
  EMBER_CHECK_VALUE(!ts.empty(), "torch.cat(): expected a non-empty list of Tensors");
  // Legacy rule (as PyTorch): 1-d empty tensors are skipped whatever the others' shapes.
  const Tensor* ref = nullptr;
  ScalarType dt = ts[0].dtype();
  for (size_t i = 0; i < ts.size(); ++i) {
    EMBER_CHECK(ts[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    dt = promote_types(dt, ts[i].dtype());
    if (!ref && !(ts[i].dim() == 1 && ts[i].numel() == 0)) ref = &ts[i];
  }
  if (!ref) ref = &ts[0];
  int64_t d = wrap_dim(dim, ref->dim());
  Shape out_sizes = ref->sizes();
  int64_t total = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    if (t.dim() == 1 && t.numel() == 0 && &t != ref) continue;
    EMBER_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ",
                t.dim());
    for (int64_t k = 0; k < t.dim(); ++k)
      EMBER_CHECK(k == d || t.sizes()[k] == out_sizes[k], "Sizes of tensors must match except in dimension ", d,
                  ". Expected size ", out_sizes[k], " but got size ", t.sizes()[k], " for tensor number ", i,
                  " in the list.");
    total += t.sizes()[d];
  }
  out_sizes[d] = total;
  Tensor out = empty(out_sizes, dt);
  std::vector<int64_t> offs(ts.size(), -1);
  {
    NoGradGuard g;
    const auto esize = static_cast<int64_t>(element_size(dt));
    const int64_t outer = prod(out_sizes, 0, d), inner_bytes = prod(out_sizes, d + 1, out_sizes.size()) * esize;
    // Big contiguous inputs of the output's dtype with many output rows (the qkv split's
    // gradient: three 2048x256 pieces into 2048x768): one parallel pass over output rows, each
    // row filled from every input with memcpy, instead of a strided copy per input (1.25x).
    bool rows_pass = outer >= 64 && out.numel() * esize >= kSmallCopyBytes && !autograd::forward_ad::is_active();
    for (const Tensor& t : ts) rows_pass = rows_pass && t.dtype() == dt && t.is_contiguous();
    if (rows_pass) {
      std::vector<std::pair<const char*, int64_t>> pieces;  // (data, row bytes), skipped inputs left out
      int64_t off_rows = 0;
      for (size_t i = 0; i < ts.size(); ++i) {
        const Tensor& t = ts[i];
        if (t.dim() == 1 && t.numel() == 0 && &t != ref) continue;
        offs[i] = off_rows;
        off_rows += t.sizes()[d];
        if (t.sizes()[d] > 0) pieces.emplace_back(static_cast<const char*>(t.data_ptr()), t.sizes()[d] * inner_bytes);
      }
      char* dst = static_cast<char*>(out.data_ptr());
      const int64_t row_bytes = total * inner_bytes;
      parallel_for(0, outer, std::max<int64_t>(1, kGrainSize * 4 / std::max<int64_t>(row_bytes, 1)),
                   [&](int64_t b, int64_t e) {
                     for (int64_t o = b; o < e; ++o) {
                       char* row = dst + o * row_bytes;
                       for (const auto& [src, bytes] : pieces) {
                         std::memcpy(row, src + o * bytes, static_cast<size_t>(bytes));
                         row += bytes;
                       }
                     }
                   });
    }
    int64_t off = 0;
    for (size_t i = 0; i < ts.size() && !rows_pass; ++i) {
      const Tensor& t = ts[i];
      if (t.dim() == 1 && t.numel() == 0 && &t != ref) continue;
      offs[i] = off;
      if (t.numel() > 0 && can_memcpy(t, dt)) {  // Note [Small cat and stack]
        copy_rows(static_cast<char*>(out.data_ptr()), total * inner_bytes, off * inner_bytes, t, outer,
                  t.sizes()[d] * inner_bytes);
      } else if (t.sizes()[d] > 0) {
        Tensor slot = narrow(out, d, off, t.sizes()[d]);
        copy_(slot, t);
      }
      off += t.sizes()[d];
    }
  }
  bool any = false;
  for (const Tensor& t : ts) any = any || requires_grad(t);
  if (GradMode::is_enabled() && any) {
    auto n = std::make_shared<LambdaBackward>();
    n->name_ = "CatBackward0";
    std::vector<Shape> shapes;
    std::vector<ScalarType> dts;
    for (const Tensor& t : ts) {
      n->next_edges.push_back(gradient_edge(t));
      shapes.push_back(t.sizes());
      dts.push_back(t.dtype());
    }
    n->fn = [offs, shapes, dts, d](const TensorList& g, const TensorList&) -> TensorList {
      TensorList r;
      for (size_t i = 0; i < shapes.size(); ++i)
        r.push_back(offs[i] < 0 ? zeros(shapes[i], dts[i]) : cast_to(narrow(g[0], d, offs[i], shapes[i][d]), dts[i]));
      return r;
    };
    set_history(out, n);
  }
  return out;
}

Tensor stack(const TensorVec& ts, int64_t dim) {
  EMBER_CHECK(!ts.empty(), "stack expects a non-empty TensorList");
  int64_t d = wrap_dim(dim, ts[0].dim() + 1);
  ScalarType dt = ts[0].dtype();
  bool small = true, any_grad = false;
  for (size_t i = 0; i < ts.size(); ++i) {
    EMBER_CHECK(ts[i].sizes() == ts[0].sizes(), "stack expects each tensor to be equal size, but got ",
                ts[0].shape_str(), " at entry 0 and ", ts[i].shape_str(), " at entry ", i);
    dt = promote_types(dt, ts[i].dtype());
    any_grad = any_grad || requires_grad(ts[i]);
  }
  for (const Tensor& t : ts) small = small && can_memcpy(t, dt);
  if (small && !(any_grad && GradMode::is_enabled())) {  // Note [Small cat and stack]
    const Shape& in = ts[0].sizes();
    Shape out_sizes = in;
    out_sizes.insert(out_sizes.begin() + d, static_cast<int64_t>(ts.size()));
    Tensor out = empty(out_sizes, dt);
    const int64_t outer = prod(in, 0, d), row_bytes = prod(in, d, in.size()) * static_cast<int64_t>(element_size(dt));
    const auto n = static_cast<int64_t>(ts.size());
    if (out.numel() > 0)
      for (int64_t i = 0; i < n; ++i)
        copy_rows(static_cast<char*>(out.data_ptr()), n * row_bytes, i * row_bytes, ts[i], outer, row_bytes);
    return out;
  }
  TensorVec us;
  for (const Tensor& t : ts) us.push_back(unsqueeze(t, d));
  return cat(us, d);
}

Tensor atleast_nd(const Tensor& t, int64_t n) {
  if (t.dim() >= n) return t;
  if (n == 1) return reshape(t, {1});
  if (n == 2) return t.dim() == 0 ? reshape(t, {1, 1}) : unsqueeze(t, 0);
  if (t.dim() == 0) return reshape(t, {1, 1, 1});
  if (t.dim() == 1) return unsqueeze(unsqueeze(t, 0), 2);
  return unsqueeze(t, 2);
}
namespace {
TensorVec all_atleast(const TensorVec& ts, int64_t n) {
  TensorVec r;
  for (const Tensor& t : ts) r.push_back(atleast_nd(t, n));
  return r;
}
}  // namespace
Tensor hstack(const TensorVec& ts) {
  EMBER_CHECK(!ts.empty(), "hstack expects a non-empty TensorList");
  TensorVec r = all_atleast(ts, 1);
  return cat(r, r[0].dim() == 1 ? 0 : 1);
}
Tensor vstack(const TensorVec& ts) {
  EMBER_CHECK(!ts.empty(), "vstack expects a non-empty TensorList");
  return cat(all_atleast(ts, 2), 0);
}
Tensor dstack(const TensorVec& ts) {
  EMBER_CHECK(!ts.empty(), "dstack expects a non-empty TensorList");
  return cat(all_atleast(ts, 3), 2);
}

// Note [Multi-output views]: split, split_with_sizes, chunk and unbind return views that share
// one backward node, as torch's SplitBackward0/UnbindBackward0: it puts the outputs' gradients
// together with one cat (or stack) instead of a zeros tensor plus a copy per output, and the
// outputs may not be modified in place under grad mode (check_inplace raises torch's error).
namespace {
struct MultiViewBackward : Node {
  std::string name_;
  Shape in_sizes;
  int64_t dim = 0;
  std::vector<int64_t> starts, lengths;
  bool unbind = false;  // outputs are selects (the dim dropped), not narrows
  std::string name() const override { return name_; }
  bool materialize_grads() const override { return false; }  // an unused output costs nothing
  TensorList apply(TensorList&& grads) override {
    const Tensor* any = nullptr;
    bool all = true;
    for (const Tensor& g : grads) {
      if (g.defined()) any = any ? any : &g;
      all = all && g.defined();
    }
    if (!any) return {Tensor()};
    if (all && !grads.empty()) return {unbind ? stack(grads, dim) : cat(grads, dim)};
    Tensor z = zeros(in_sizes, any->dtype());
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined()) continue;
      Tensor slot = unbind ? select(z, dim, starts[i]) : narrow(z, dim, starts[i], lengths[i]);
      copy_(slot, grads[i]);
    }
    return {z};
  }
};

TensorVec multi_output_views(const Tensor& t, int64_t d, const std::vector<int64_t>& starts,
                             const std::vector<int64_t>& lengths, bool unbind, const char* name) {
  const bool grad_mode = GradMode::is_enabled();
  TensorVec r;
  {
    NoGradGuard no_history;  // the views alone; their one node is made below
    for (size_t i = 0; i < starts.size(); ++i)
      r.push_back(unbind ? select(t, d, starts[i]) : narrow(t, d, starts[i], lengths[i]));
  }
  for (Tensor& v : r) {
    v.impl()->view_made_no_grad = !grad_mode;
    v.impl()->view_multi_output = grad_mode;
  }
  if (!grad_mode || !requires_grad(t)) return r;
  auto n = std::make_shared<MultiViewBackward>();
  n->name_ = name;
  n->in_sizes = t.sizes();
  n->dim = d;
  n->starts = starts;
  n->lengths = lengths;
  n->unbind = unbind;
  n->next_edges = {gradient_edge(t)};
  for (Tensor& v : r) set_history(v, n);
  return r;
}
}  // namespace

TensorVec split(const Tensor& t, int64_t split_size, int64_t dim) {
  EMBER_CHECK(t.dim() != 0, "split expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  int64_t d = wrap_dim(dim, t.dim()), n = t.sizes()[d];
  EMBER_CHECK(split_size > 0 || n == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ",
              n);
  std::vector<int64_t> starts, lengths;
  if (n == 0) starts.push_back(0), lengths.push_back(0);
  for (int64_t s = 0; s < n; s += split_size) starts.push_back(s), lengths.push_back(std::min(split_size, n - s));
  return multi_output_views(t, d, starts, lengths, false, "SplitBackward0");
}
TensorVec split_with_sizes(const Tensor& t, IntArrayRef sizes, int64_t dim) {
  EMBER_CHECK(t.dim() != 0, "split expects at least a 1-dimensional tensor");
  int64_t d = wrap_dim(dim, t.dim()), n = t.sizes()[d];
  int64_t total = 0;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
                shape_str(sizes));
    total += s;
  }
  EMBER_CHECK(total == n, "split_with_sizes expects split_sizes to sum exactly to ", n,
              " (input tensor's size at "
              "dimension ",
              d, "), but got split_sizes=", shape_str(sizes));
  std::vector<int64_t> starts, lengths;
  int64_t off = 0;
  for (int64_t s : sizes) {
    starts.push_back(off), lengths.push_back(s);
    off += s;
  }
  return multi_output_views(t, d, starts, lengths, false, "SplitWithSizesBackward0");
}
TensorVec chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  EMBER_CHECK(t.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  int64_t d = wrap_dim(dim, t.dim()), n = t.sizes()[d];
  int64_t each = (n + chunks - 1) / chunks;
  if (each == 0) {  // empty dim: `chunks` empty pieces, as PyTorch
    TensorVec r;
    for (int64_t i = 0; i < chunks; ++i) r.push_back(narrow(t, d, 0, 0));
    return r;
  }
  return split(t, each, d);
}
TensorVec tensor_split(const Tensor& t, int64_t sections, int64_t dim) {
  EMBER_CHECK(t.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  EMBER_CHECK(sections > 0, "number of sections must be larger than 0, got ", sections);
  int64_t d = wrap_dim(dim, t.dim()), n = t.sizes()[d];
  int64_t small = n / sections, extra = n % sections;
  TensorVec r;
  EMBER_CHECK(static_cast<uint64_t>(sections) <= r.max_size(), "cannot create std::vector larger than max_size()");
  int64_t off = 0;
  for (int64_t i = 0; i < sections; ++i) {
    int64_t len = small + (i < extra ? 1 : 0);
    r.push_back(narrow(t, d, off, len));
    off += len;
  }
  return r;
}
TensorVec tensor_split_indices(const Tensor& t, IntArrayRef indices, int64_t dim) {
  EMBER_CHECK(t.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  int64_t d = wrap_dim(dim, t.dim()), n = t.sizes()[d];
  TensorVec r;
  int64_t start = 0;
  auto clampi = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  for (int64_t idx : indices) {
    int64_t end = clampi(idx);  // a decreasing index gives an empty piece and restarts there, as torch
    r.push_back(slice(t, d, start, std::max(start, end)));
    start = end;
  }
  r.push_back(slice(t, d, start, n));
  return r;
}
TensorVec unbind(const Tensor& t, int64_t dim) {
  EMBER_CHECK_INDEX(t.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  int64_t d = wrap_dim(dim, t.dim());
  std::vector<int64_t> starts(static_cast<size_t>(t.sizes()[d]));
  std::iota(starts.begin(), starts.end(), int64_t(0));
  return multi_output_views(t, d, starts, std::vector<int64_t>(starts.size(), 1), true, "UnbindBackward0");
}

namespace {
// A contiguous copy of t with the dims marked in `flipped` reversed: each output row (the last
// dim) is read from its source row forwards or backwards. index_select per flipped dim read the
// last dim through one index per element: flip(-1) of a 3x224x224 image took 8x torch's time.
void flip_copy(const Tensor& t, Tensor& out, const std::vector<bool>& flipped) {
  const int64_t nd = t.dim(), n = t.sizes()[nd - 1], rows = t.numel() / n, step = t.strides()[nd - 1];
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  // Work items are pieces of rows, so a few long rows (a 1-d flip) still use every thread.
  const int64_t piece = std::max<int64_t>(kGrainSize, 1), pieces = (n + piece - 1) / piece;
  with_element_bytes(element_size(t.dtype()), [&](auto bytes) {
    using E = Bytes<decltype(bytes)::value>;
    const E* src = static_cast<const E*>(t.data_ptr());
    E* dst = static_cast<E*>(out.data_ptr());
    parallel_for(0, rows * pieces, std::max<int64_t>(1, kGrainSize / std::min(n, piece)), [&](int64_t b, int64_t e) {
      // The source row's index (odometer over the outer dims) and offset, advanced row by row:
      // a division per dim and row cost more than copying a row of 32 floats.
      std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
      int64_t row = b / pieces, off = 0;
      for (int64_t d = nd - 2, rest = row; d >= 0; --d) {
        idx[d] = rest % sizes[d];
        rest /= sizes[d];
        off += (flipped[d] ? sizes[d] - 1 - idx[d] : idx[d]) * strides[d];
      }
      for (int64_t w = b; w < e; ++w) {
        const int64_t r = w / pieces, j0 = (w % pieces) * piece, j1 = std::min(n, j0 + piece);
        for (; row < r; ++row)
          for (int64_t d = nd - 2; d >= 0; --d) {
            const int64_t dir = flipped[d] ? -strides[d] : strides[d];
            if (++idx[d] < sizes[d]) {
              off += dir;
              break;
            }
            off -= dir * (sizes[d] - 1);
            idx[d] = 0;
          }
        const E* in = src + off;
        E* o = dst + r * n;
        if (flipped[nd - 1] && step == 1 && sizeof(E) <= 8) {
          cpu::reverse_run(sizeof(E), o, in + (n - 1), j0, j1);  // 32 bytes per permute (GCC left the loop scalar)
        } else if (flipped[nd - 1]) {
          for (int64_t j = j0; j < j1; ++j) o[j] = in[(n - 1 - j) * step];
        } else if (step == 1) {
          std::memcpy(o + j0, in + j0, static_cast<size_t>(j1 - j0) * sizeof(E));
        } else {
          for (int64_t j = j0; j < j1; ++j) o[j] = in[j * step];
        }
      }
    });
  });
}
}  // namespace

Tensor flip(const Tensor& t, IntArrayRef dims) {
  std::vector<bool> seen(std::max<int64_t>(t.dim(), 1), false);
  for (int64_t dd : dims) {
    int64_t d = wrap_dim(dd, t.dim());
    EMBER_CHECK(!seen[d], "dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
  }
  if (t.dim() == 0) return clone(t);
  // With a dual level open, index_select carries the tangents (Note [Forward AD]).
  if (autograd::forward_ad::is_active() || !t.device().is_cpu()) {
    Tensor r = t;
    for (int64_t d = 0; d < t.dim(); ++d)
      if (seen[d]) r = index_select(r, d, arange(t.sizes()[d] - 1, -1, -1, ScalarType::Int64));
    return r.is_same(t) ? clone(t) : r;
  }
  Tensor out = empty(t.sizes(), t.dtype());
  if (out.numel() > 0) flip_copy(t, out, seen);
  if (auto n = make_node<LambdaBackward>(t)) {
    n->name_ = "FlipBackward0";
    std::vector<int64_t> ds(dims.begin(), dims.end());
    n->fn = [ds](const TensorList& g, const TensorList&) -> TensorList { return {flip(g[0], ds)}; };
    set_history(out, n);
  }
  return out;
}

Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty()) {
    EMBER_CHECK(shifts.size() == 1, "`shifts` required");
    return view(roll(reshape(t, {-1}), shifts, {0}), t.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  Tensor r = t;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], t.dim(), false), n = t.sizes()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    r = cat({narrow(r, d, n - s, s), narrow(r, d, 0, n - s)}, d);
  }
  return r.is_same(t) ? clone(t, MemoryFormat::Contiguous) : r;
}

Tensor repeat(const Tensor& t, IntArrayRef reps) {
  EMBER_CHECK(static_cast<int64_t>(reps.size()) >= t.dim(),
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  for (int64_t r : reps)
    EMBER_CHECK(r >= 0, "Trying to create tensor with negative dimension ", r, ": ", shape_str(reps));
  int64_t lead = static_cast<int64_t>(reps.size()) - t.dim();
  Shape padded(lead, 1), inter, expd, out;
  padded.insert(padded.end(), t.sizes().begin(), t.sizes().end());
  for (size_t i = 0; i < reps.size(); ++i) {
    inter.push_back(1), inter.push_back(padded[i]);
    expd.push_back(reps[i]), expd.push_back(padded[i]);
    out.push_back(reps[i] * padded[i]);
  }
  // Always new memory, as torch's (repeat(1, 1) was t's own memory, so writing to the result
  // changed t). With a dual level open, or off the CPU, the composition carries the tangents.
  Tensor x = expand(reshape(t, inter), expd);
  if (autograd::forward_ad::is_active() || !t.device().is_cpu())
    return reshape(clone(x, MemoryFormat::Contiguous), out);
  Tensor r;
  {
    autograd::NoGradGuard raw;
    // (an empty result of huge sizes, [2^62, 0]: no clone of the [2^62, 1, 0, 3] expansion)
    r = x.numel() == 0 ? empty(out, t.dtype()) : unsafe_view(clone(x, MemoryFormat::Contiguous), out);
  }
  if (auto n = make_node<LambdaBackward>(t)) {
    n->name_ = "RepeatBackward0";
    Shape sizes = t.sizes();
    std::vector<int64_t> rep_dims;  // the repetition dims of the (rep, size) pairs
    for (size_t i = 0; i < reps.size(); ++i) rep_dims.push_back(static_cast<int64_t>(2 * i));
    n->fn = [expd, rep_dims, sizes](const TensorList& g, const TensorList&) -> TensorList {
      if (rep_dims.empty()) return {g[0]};
      if (g[0].numel() == 0) return {zeros(sizes, g[0].dtype())};  // (no reshape of huge empty sizes)
      return {reshape(sum(reshape(g[0], expd), rep_dims), sizes)};
    };
    set_history(r, n);
  }
  return r;
}
Tensor tile(const Tensor& t, IntArrayRef dims) {
  Shape d = dims.vec();
  while (static_cast<int64_t>(d.size()) < t.dim()) d.insert(d.begin(), 1);
  return repeat(t, d);
}

Tensor repeat_interleave_indices(const Tensor& repeats) {
  EMBER_CHECK(repeats.dim() <= 1, "repeat_interleave only accept 1D vector as repeat");
  EMBER_CHECK(repeats.dtype() == ScalarType::Int64 || repeats.dtype() == ScalarType::Int32,
              "repeats has to be Long or Int tensor");
  Tensor r = contiguous(to_dtype(reshape(repeats, {-1}), ScalarType::Int64));
  const int64_t* p = r.data<int64_t>();
  int64_t total = 0;  // the output size, checked before the loop (Note [Checked size arithmetic])
  for (int64_t i = 0; i < r.numel(); ++i) {
    EMBER_CHECK(p[i] >= 0, "repeats can not be negative");
    total = checked_add(total, p[i], "repeat_interleave");
  }
  Tensor idx = empty({total}, ScalarType::Int64);  // runs filled in place (push_back and a copy: 3.5 ns each)
  int64_t* out = idx.data<int64_t>();
  for (int64_t i = 0; i < r.numel(); out += p[i], ++i) std::fill_n(out, p[i], i);
  return idx;
}
Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim) {
  Tensor x = dim ? t : reshape(t, {-1});
  int64_t d = dim ? wrap_dim(*dim, t.dim(), false) : 0;  // torch: a dim of a 0-d input is an IndexError
  if (x.dim() == 0) x = reshape(x, {1});
  int64_t n = x.sizes()[d];
  Tensor reps = repeats;
  if (repeats.dim() == 0 || repeats.numel() == 1) {
    reps = expand(reshape(repeats, {1}), {n});
  } else {
    EMBER_CHECK(repeats.numel() == n,
                "repeats must have the same size as input along dim, but got repeats.size(0) = ", repeats.numel(),
                " and input.size(", d, ") = ", n);
  }
  return index_select(x, d, repeat_interleave_indices(reps));
}

TensorVec broadcast_tensors(const TensorVec& ts) {
  Shape s;
  for (const Tensor& t : ts) s = broadcast_shapes(s, t.sizes(), "broadcast_tensors");
  TensorVec r;
  for (const Tensor& t : ts) r.push_back(expand(t, s));
  return r;
}

namespace {
// A copy with the elements above (lower=true) or below the `k`-th diagonal zeroed: each row's kept
// span copied and the rest cleared in one pass (rows spread over the threads), from a contiguous
// input; other layouts are cloned first and cleared in place.
Tensor triangle(const Tensor& t, int64_t k, bool lower) {
  const char* name = lower ? "tril" : "triu";
  EMBER_CHECK(t.dim() >= 2, name, ": input tensor must have at least 2 dimensions");
  const bool direct = t.is_contiguous() && t.device().is_cpu();
  Tensor out;
  if (direct) {
    out = empty(t.sizes(), t.dtype(), t.device());
  } else {
    NoGradGuard g;
    out = clone(t, MemoryFormat::Contiguous);
  }
  int64_t rows = t.sizes()[t.dim() - 2], cols = t.sizes()[t.dim() - 1];
  int64_t mats = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  size_t es = out.element_size();
  char* p = static_cast<char*>(out.data_ptr());
  const char* src = direct ? static_cast<const char*>(t.data_ptr()) : p;
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(1, cols * int64_t(es)));
  parallel_for(0, mats * rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t i = r % rows;
      char* row = p + r * cols * es;
      const char* in = src + r * cols * es;
      // i + k saturates: a huge k keeps (or clears) whole rows rather than wrapping.
      int64_t ik;
      if (add_overflows(i, k, &ik)) ik = k > 0 ? cols : -1;
      ik = std::clamp<int64_t>(ik, -1, cols);
      // kept columns [keep_lo, keep_hi): j <= i + k (lower) or j >= i + k (upper)
      const int64_t keep_lo = lower ? 0 : std::clamp<int64_t>(ik, 0, cols);
      const int64_t keep_hi = lower ? std::clamp<int64_t>(ik + 1, 0, cols) : cols;
      std::memset(row, 0, keep_lo * es);
      if (direct) std::memcpy(row + keep_lo * es, in + keep_lo * es, (keep_hi - keep_lo) * es);
      std::memset(row + keep_hi * es, 0, (cols - keep_hi) * es);
    }
  });
  if (auto n = make_node<LambdaBackward>(t)) {
    n->name_ = lower ? "TrilBackward0" : "TriuBackward0";
    n->fn = [k, lower](const TensorList& g, const TensorList&) -> TensorList {
      return {lower ? tril(g[0], k) : triu(g[0], k)};
    };
    set_history(out, n);
  }
  return out;
}
}  // namespace
Tensor tril(const Tensor& t, int64_t k) { return triangle(t, k, true); }
Tensor triu(const Tensor& t, int64_t k) { return triangle(t, k, false); }

Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t d1 = wrap_dim(dim1, t.dim()), d2 = wrap_dim(dim2, t.dim());
  EMBER_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t s1 = t.sizes()[d1], s2 = t.sizes()[d2];
  int64_t off = t.storage_offset(), len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(s1, s2 - offset), 0);
    if (len > 0) off += offset * t.strides()[d2];
  } else {
    len = std::max<int64_t>(std::min(s1 + offset, s2), 0);
    if (len > 0) off -= offset * t.strides()[d1];
  }
  Shape sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != d1 && d != d2) sizes.push_back(t.sizes()[d]), strides.push_back(t.strides()[d]);
  sizes.push_back(len);
  strides.push_back(t.strides()[d1] + t.strides()[d2]);
  Tensor v;
  {
    NoGradGuard g;
    v = as_strided(t, sizes, strides, off);
  }
  Shape in_sizes = t.sizes();
  set_view_history(t, v, "DiagonalBackward0", [in_sizes, offset, d1, d2](const Tensor& g) {
    Tensor z = zeros(in_sizes, g.dtype());
    Tensor slot = diagonal(z, offset, d1, d2);
    copy_(slot, g);
    return z;
  });
  return v;
}

Tensor diag_embed(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t nd = t.dim() + 1;
  int64_t d1 = wrap_dim(dim1, nd), d2 = wrap_dim(dim2, nd);
  EMBER_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t n = (t.dim() == 0 ? 1 : t.sizes().back()) + std::abs(offset);
  Shape sizes;
  int64_t k = 0;
  for (int64_t d = 0; d < nd; ++d) sizes.push_back(d == d1 || d == d2 ? n : t.sizes()[k++]);
  Tensor out = zeros(sizes, t.dtype());
  {
    NoGradGuard g;
    Tensor slot = diagonal(out, offset, d1, d2);
    copy_(slot, t);
  }
  if (GradMode::is_enabled() && requires_grad(t)) {
    auto node = std::make_shared<LambdaBackward>();
    node->name_ = "DiagEmbedBackward0";
    node->next_edges.push_back(gradient_edge(t));
    node->fn = [offset, d1, d2](const TensorList& g, const TensorList&) -> TensorList {
      return {diagonal(g[0], offset, d1, d2)};
    };
    set_history(out, node);
  }
  return out;
}

Tensor diag(const Tensor& t, int64_t k) {
  EMBER_CHECK(t.dim() == 1 || t.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ", t.dim(), "D");
  if (t.dim() == 1) return diag_embed(t, k, 0, 1);
  return clone(diagonal(t, k, 0, 1), MemoryFormat::Contiguous);
}
Tensor trace(const Tensor& t) {
  EMBER_CHECK(t.dim() == 2, "trace: expected a matrix, but got tensor with dim ", t.dim());
  if (t.dtype() == ScalarType::Bool) EMBER_NOT_IMPLEMENTED("\"trace\" not implemented for 'Bool'");
  return sum(diagonal(t, 0, 0, 1));
}
Tensor outer(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "outer: Expected 1-D argument self, but got ", a.dim(), "-D");
  return mul(unsqueeze(a, 1), b);
}
Tensor kron(const Tensor& a, const Tensor& b) {
  int64_t nd = std::max(a.dim(), b.dim());
  Shape as(nd - a.dim(), 1), bs(nd - b.dim(), 1);
  as.insert(as.end(), a.sizes().begin(), a.sizes().end());
  bs.insert(bs.end(), b.sizes().begin(), b.sizes().end());
  Shape ai, bi, out;
  for (int64_t d = 0; d < nd; ++d) {
    ai.push_back(as[d]), ai.push_back(1);
    bi.push_back(1), bi.push_back(bs[d]);
    out.push_back(as[d] * bs[d]);
  }
  return unsafe_view(mul(reshape(a, ai), reshape(b, bi)), out);  // (the product is fresh: not a view, as torch's)
}

TensorVec meshgrid(const TensorVec& ts, const std::string& indexing) {
  EMBER_CHECK(!ts.empty(), "torch.meshgrid: Expected at least one tensor");
  EMBER_CHECK(indexing == "ij" || indexing == "xy",
              "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
              "received: ",
              indexing);
  for (const Tensor& t : ts) {
    EMBER_CHECK(t.dim() <= 1, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ", t.shape_str());
    EMBER_CHECK(t.dtype() == ts[0].dtype(),
                "torch.meshgrid: Expected all tensors in the tensor list to have the same "
                "dtype");
  }
  bool swap = indexing == "xy" && ts.size() >= 2;
  TensorVec in = ts;
  if (swap) std::swap(in[0], in[1]);
  Shape shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  TensorVec r;
  for (size_t i = 0; i < in.size(); ++i) {
    Shape v(in.size(), 1);
    v[i] = shape[i];
    r.push_back(expand(reshape(in[i], v), shape));
  }
  if (swap) std::swap(r[0], r[1]);
  return r;
}

Tensor cartesian_prod(const TensorVec& ts) {
  for (const Tensor& t : ts) EMBER_CHECK(t.dim() == 1, "Expect a 1D vector, but got shape ", t.shape_str());
  if (ts.size() == 1) return ts[0];
  TensorVec grid = meshgrid(ts, "ij");
  for (Tensor& g : grid) g = reshape(g, {-1});
  return stack(grid, 1);
}

Tensor combinations(const Tensor& t, int64_t r, bool with_replacement) {
  EMBER_CHECK(t.dim() == 1, "Expect a 1D vector, but got shape ", t.shape_str());
  EMBER_CHECK(r >= 0, "Expect a non-negative number, but got ", r);
  if (r == 0) return empty({0}, t.dtype());
  int64_t n = t.sizes()[0];
  std::vector<std::vector<int64_t>> cols(r);
  std::vector<int64_t> c(r);
  std::function<void(int64_t, int64_t)> rec = [&](int64_t pos, int64_t start) {
    if (pos == r) {
      for (int64_t k = 0; k < r; ++k) cols[k].push_back(c[k]);
      return;
    }
    for (int64_t i = start; i < n; ++i) {
      c[pos] = i;
      rec(pos + 1, with_replacement ? i : i + 1);
    }
  };
  rec(0, 0);
  TensorVec parts;
  for (int64_t k = 0; k < r; ++k) parts.push_back(index_select(t, 0, long_vec(cols[k])));
  return stack(parts, 1);
}

Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  return clone(narrow(t, dim, start, length), MemoryFormat::Contiguous);
}

Tensor rot90(const Tensor& t, int64_t k, IntArrayRef dims) {
  EMBER_CHECK(dims.size() == 2, "expected total rotation dims == 2, but got dims = ", dims.size());
  EMBER_CHECK(t.dim() >= 2, "expected total dims >= 2, but got total dims = ", t.dim());
  int64_t d0 = wrap_dim(dims[0], t.dim()), d1 = wrap_dim(dims[1], t.dim());
  EMBER_CHECK(d0 != d1, "expected rotation dims to be different, but got dim0 = ", d0, " and dim1 = ", d1);
  k = ((k % 4) + 4) % 4;
  if (k == 1) return transpose(flip(t, {d1}), d0, d1);
  if (k == 2) return flip(t, {d0, d1});
  if (k == 3) return transpose(flip(t, {d0}), d0, d1);
  return clone(t);
}

}  // namespace ember
