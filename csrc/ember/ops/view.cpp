// Views: ops whose result shares storage and version counter with the input. Each computes the
// result's sizes/strides/offset the way PyTorch does, so stride(), is_contiguous() and whether
// reshape copies are the same as there.
#include <algorithm>
#include <numeric>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/checked_math.h"
#include "ember/ops/ops.h"
#include "ember/ops/unsafe_view.h"

namespace ember {
namespace {

// Every view goes through here: same storage, same version counter (paper §4.3).
Tensor make_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset, ScalarType dtype) {
  // A view never reaches outside its storage, whatever arithmetic made it (Note [Checked size arithmetic]).
  check_view_in_bounds(sizes, strides, offset, element_size(dtype), t.impl()->storage()->nbytes());
  auto impl = IntrusivePtr<TensorImpl>::make(t.impl()->storage(), dtype, std::move(sizes), std::move(strides), offset);
  impl->share_version_counter(t.impl()->version_counter());
  impl->view_base = t.impl()->view_base ? t.impl()->view_base : t.impl_ptr();
  impl->is_inference = impl->is_inference || t.impl()->is_inference;
  impl->view_version.store(impl->version(), std::memory_order_relaxed);  // Note [View history]
  impl->view_made_no_grad = !autograd::GradMode::is_enabled();
  impl->view_multi_output = t.impl()->view_multi_output;
  return Tensor(std::move(impl));
}

// Autograd history of a view op (no-op unless the input requires grad). `bw` maps the view's
// gradient to the input's, with ember ops so it is itself differentiable.
template <typename F>
Tensor with_history(const Tensor& in, Tensor out, const char* name, F bw) {
  autograd::set_view_history(in, out, name, std::move(bw));
  return out;
}

// Gradient of a view that picks some elements of the input: zeros shaped like the input with
// the view's elements set to the gradient.
template <typename Pick>
Tensor scatter_into_zeros(const Shape& in_sizes, const Tensor& g, Pick pick) {
  Tensor z = zeros(in_sizes, g.dtype());
  Tensor slot = pick(z);
  copy_(slot, g);
  return z;
}
Tensor make_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset) {
  return make_view(t, std::move(sizes), std::move(strides), offset, t.dtype());
}

// Duplicate-free wrapped dims; `what` names the list in PyTorch's message.
std::vector<bool> dim_mask(IntArrayRef dims, int64_t ndim) {
  std::vector<bool> seen(std::max<int64_t>(ndim, 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim);
    EMBER_CHECK(!seen[w], "dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
  }
  return seen;
}

}  // namespace

// Note [View strides]
// A view of (sizes, strides) as `shape` exists when the old dims can be grouped into "chunks"
// of dims that are laid out one after another in memory (stride[d-1] == size[d] * stride[d],
// size-1 dims belong to any chunk), and every new dim falls inside one chunk. Walking both
// shapes from the innermost dim, each chunk's elements are handed out to new dims with strides
// growing from the chunk's innermost stride. Tensors with no elements view as any shape with
// contiguous strides (their own strides when the shape is unchanged); 0-d tensors view as
// all-ones shapes with stride 1. reshape() copies exactly when this returns nullopt.
std::optional<Shape> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides, IntArrayRef shape) {
  if (old_sizes.empty()) return Shape(shape.size(), 1);
  int64_t numel = numel_of(old_sizes);
  if (numel == 0) {
    if (old_sizes == shape) return old_strides.vec();
    return contiguous_strides(shape);
  }
  Shape out(shape.size());
  int64_t new_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t chunk_numel = 1;  // elements of the chunk given to new dims so far
  int64_t old_numel = 1;    // elements of the chunk's old dims so far
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    old_numel *= old_sizes[d];
    bool chunk_end = d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != old_numel * chunk_base_stride);
    if (!chunk_end) continue;
    while (new_d >= 0 && (chunk_numel < old_numel || shape[new_d] == 1)) {
      out[new_d] = chunk_numel * chunk_base_stride;
      chunk_numel *= shape[new_d];
      --new_d;
    }
    if (chunk_numel != old_numel) return std::nullopt;
    if (d > 0) {
      chunk_base_stride = old_strides[d - 1];
      old_numel = 1;
      chunk_numel = 1;
    }
  }
  if (new_d != -1) return std::nullopt;
  return out;
}

Shape infer_size(IntArrayRef sizes, int64_t numel) {
  Shape out(sizes.begin(), sizes.end());
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      EMBER_CHECK(!infer, "only one dimension can be inferred");
      infer = i;
    } else {
      EMBER_CHECK(sizes[i] >= 0, "invalid shape dimension ", sizes[i], " at index ", i, " of shape ", shape_str(sizes));
      known *= sizes[i];
    }
  }
  if (infer) {
    EMBER_CHECK(numel != 0 || known != 0, "shape '", shape_str(sizes), "' is invalid for input of size ", numel);
    EMBER_CHECK(known != 0, "cannot reshape tensor of 0 elements into shape ", shape_str(sizes),
                " because the unspecified dimension size -1 can be any value and is ambiguous");
    EMBER_CHECK(numel % known == 0, "shape '", shape_str(sizes), "' is invalid for input of size ", numel);
    out[*infer] = numel / known;
  } else {
    EMBER_CHECK(known == numel, "shape '", shape_str(sizes), "' is invalid for input of size ", numel);
  }
  return out;
}

Tensor alias(const Tensor& t) {
  return with_history(t, make_view(t, t.sizes(), t.strides(), t.storage_offset()), "AliasBackward0",
                      [](const Tensor& g) { return g; });
}

Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) {
  EMBER_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  int64_t off = offset.value_or(t.storage_offset());
  for (int64_t s : sizes)
    EMBER_CHECK(s >= 0, "as_strided: Negative sizes are not allowed, got sizes: ", shape_str(sizes));
  for (int64_t s : strides)
    EMBER_CHECK(s >= 0,
                "as_strided: Negative strides are not supported at the moment, got strides: ", shape_str(strides));
  EMBER_CHECK(off >= 0, "Tensor: invalid storage offset ", off);
  // The last element must lie inside the storage (nothing is needed for an empty view).
  checked_numel(sizes);
  storage_nbytes_strided(sizes, strides, t.element_size(), off);  // torch's overflow message first
  check_view_in_bounds(sizes, strides, off, t.element_size(), t.impl()->storage()->nbytes());
  Shape in_sizes = t.sizes(), in_strides = t.strides();
  int64_t in_off = t.storage_offset();
  Shape vs = sizes.vec(), vst = strides.vec();
  return with_history(t, make_view(t, sizes.vec(), strides.vec(), off), "AsStridedBackward0",
                      [in_sizes, in_strides, in_off, vs, vst, off](const Tensor& g) {
                        return autograd::as_strided_backward(g, in_sizes, in_strides, in_off, vs, vst, off);
                      });
}

Tensor view(const Tensor& t, IntArrayRef sizes) {
  Shape shape = infer_size(sizes, t.numel());
  auto st = view_strides(t.sizes(), t.strides(), shape);
  EMBER_CHECK(st.has_value(),
              "view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces). Use .reshape(...) instead.");
  Shape in_sizes = t.sizes();
  return with_history(t, make_view(t, std::move(shape), std::move(*st), t.storage_offset()), "ViewBackward0",
                      [in_sizes](const Tensor& g) { return reshape(g, in_sizes); });
}

Tensor view_dtype(const Tensor& t, ScalarType dtype) {
  size_t from = t.element_size(), to = element_size(dtype);
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t off = t.storage_offset();
  if (from != to) {
    auto names = [&] { return detail::str_cat(dtype_name(t.dtype()), " as ", dtype_name(dtype)); };
    EMBER_CHECK(t.dim() > 0, "self.dim() cannot be 0 to view ", names(), " (different element sizes)");
    int64_t last = t.dim() - 1;
    if (to > from) {
      auto r = static_cast<int64_t>(to / from);
      EMBER_CHECK(sizes[last] % r == 0, "self.size(-1) must be divisible by ", r, " to view ", names(),
                  " (different element sizes), but got ", sizes[last]);
      EMBER_CHECK(off % r == 0, "self.storage_offset() must be divisible by ", r, " to view ", names(),
                  " (different element sizes), but got ", off);
      EMBER_CHECK(strides[last] == 1, "self.stride(-1) must be 1 to view ", names(),
                  " (different element sizes), but got ", strides[last]);
      for (int64_t d = 0; d < last; ++d) {
        EMBER_CHECK(strides[d] % r == 0, "self.stride(", d, ") must be divisible by ", r, " to view ", names(),
                    " (different element sizes), but got ", strides[d]);
        strides[d] /= r;
      }
      sizes[last] /= r;
      off /= r;
    } else {
      auto r = static_cast<int64_t>(from / to);
      EMBER_CHECK(strides[last] == 1, "self.stride(-1) must be 1 to view ", names(),
                  " (different element sizes), but got ", strides[last]);
      for (int64_t d = 0; d < last; ++d) strides[d] *= r;
      sizes[last] *= r;
      off *= r;
    }
  }
  return make_view(t, std::move(sizes), std::move(strides), off, dtype);
}

Tensor reshape(const Tensor& t, IntArrayRef sizes) {
  Shape shape = infer_size(sizes, t.numel());
  if (auto st = view_strides(t.sizes(), t.strides(), shape)) {
    Shape in_sizes = t.sizes();
    return with_history(t, make_view(t, std::move(shape), std::move(*st), t.storage_offset()), "ViewBackward0",
                        [in_sizes](const Tensor& g) { return reshape(g, in_sizes); });
  }
  Tensor c = clone(t, MemoryFormat::Contiguous);
  Shape c_sizes = c.sizes();
  return with_history(c, make_view(c, shape, contiguous_strides(shape), 0), "UnsafeViewBackward0",
                      [c_sizes](const Tensor& g) { return reshape(g, c_sizes); });
}

Tensor permute(const Tensor& t, IntArrayRef dims) {
  int64_t n = t.dim();
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == n,
              "permute(sparse_coo): number of dimensions in the tensor input "
              "does not match the length of the desired ordering of dimensions i.e. input.dim() = ",
              n, " is not equal to len(dims) = ", dims.size());
  Shape sizes(n), strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n);
    EMBER_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = t.sizes()[d];
    strides[i] = t.strides()[d];
  }
  Shape inverse(n);
  for (int64_t i = 0; i < n; ++i) inverse[wrap_dim(dims[i], n)] = i;
  return with_history(t, make_view(t, std::move(sizes), std::move(strides), t.storage_offset()), "PermuteBackward0",
                      [inverse](const Tensor& g) { return permute(g, inverse); });
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  int64_t n = t.dim();
  d0 = wrap_dim(d0, n);
  d1 = wrap_dim(d1, n);
  Shape sizes = t.sizes(), strides = t.strides();
  if (n > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return with_history(t, make_view(t, std::move(sizes), std::move(strides), t.storage_offset()), "TransposeBackward0",
                      [d0, d1](const Tensor& g) { return transpose(g, d0, d1); });
}

Tensor t_(const Tensor& t) {
  EMBER_CHECK(t.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", t.dim(), "D");
  Shape sizes = t.sizes(), strides = t.strides();
  if (t.dim() == 2) std::swap(sizes[0], sizes[1]), std::swap(strides[0], strides[1]);
  return with_history(t, make_view(t, std::move(sizes), std::move(strides), t.storage_offset()), "TBackward0",
                      [](const Tensor& g) { return t_(g); });
}

Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination) {
  int64_t n = t.dim();
  EMBER_CHECK(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (",
              shape_str(source), " dims) should contain the same number of dims as destination (",
              shape_str(destination), " dims)");
  Shape src(source.size()), dst(destination.size());
  for (size_t i = 0; i < src.size(); ++i) {
    src[i] = wrap_dim(source[i], n);
    dst[i] = wrap_dim(destination[i], n);
  }
  auto unique = [](Shape v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) == v.end();
  };
  EMBER_CHECK(unique(src), "movedim: repeated dim in `source` (", shape_str(source), ")");
  EMBER_CHECK(unique(dst), "movedim: repeated dim in `destination` (", shape_str(destination), ")");
  if (n == 0) return alias(t);
  // order[i] = which input dim lands at output position i: the named ones first, then the
  // rest in their original order.
  Shape order(n, -1);
  std::vector<bool> used(n, false);
  for (size_t i = 0; i < src.size(); ++i) {
    order[dst[i]] = src[i];
    used[src[i]] = true;
  }
  int64_t next = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (order[i] != -1) continue;
    while (used[next]) ++next;
    order[i] = next++;
  }
  return permute(t, order);
}

Tensor expand(const Tensor& t, IntArrayRef sizes) {
  int64_t n = static_cast<int64_t>(sizes.size()), td = t.dim();
  EMBER_CHECK(n >= td, "expand(", t.shape_str(), ", size=", shape_str(sizes), "): the number of sizes provided (", n,
              ") must be greater or equal to the number of dimensions in the tensor (", td, ")");
  Shape out_sizes(n), out_strides(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t j = i - (n - td);
    int64_t want = sizes[i];
    int64_t have = j >= 0 ? t.sizes()[j] : 1;
    // A new leading dim strides over everything inside it (0 inside a 0-d tensor).
    int64_t stride = j >= 0 ? t.strides()[j] : (i + 1 < n ? out_sizes[i + 1] * out_strides[i + 1] : 0);
    if (want == -1) {
      EMBER_CHECK(j >= 0, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension ",
                  i);
      want = have;
    }
    EMBER_CHECK(want >= 0, "expand: invalid size ", want, " for dimension ", i, ".  Target sizes: ", shape_str(sizes));
    if (want != have) {
      EMBER_CHECK(have == 1, "The expanded size of the tensor (", want, ") must match the existing size (", have,
                  ") at non-singleton dimension ", i, ".  Target sizes: ", shape_str(sizes),
                  ".  Tensor sizes: ", t.shape_str());
      stride = 0;
    }
    out_sizes[i] = want;
    out_strides[i] = stride;
  }
  Shape in_sizes = t.sizes();
  return with_history(t, make_view(t, std::move(out_sizes), std::move(out_strides), t.storage_offset()),
                      "ExpandBackward0", [in_sizes](const Tensor& g) { return autograd::sum_to(g, in_sizes); });
}

Tensor squeeze(const Tensor& t, OptDims dims) {
  int64_t n = t.dim();
  std::vector<bool> drop(n, false);
  if (!dims) {
    for (int64_t i = 0; i < n; ++i) drop[i] = t.sizes()[i] == 1;
  } else {
    std::vector<bool> named = dim_mask(*dims, n);
    for (int64_t i = 0; i < n; ++i) drop[i] = named[i] && t.sizes()[i] == 1;
  }
  Shape sizes, strides;
  for (int64_t i = 0; i < n; ++i) {
    if (drop[i]) continue;
    sizes.push_back(t.sizes()[i]);
    strides.push_back(t.strides()[i]);
  }
  Shape in_sizes = t.sizes();
  return with_history(t, make_view(t, std::move(sizes), std::move(strides), t.storage_offset()), "SqueezeBackward0",
                      [in_sizes](const Tensor& g) { return reshape(g, in_sizes); });
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  int64_t n = t.dim();
  dim = wrap_dim(dim, n + 1);
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t st = dim < n ? sizes[dim] * strides[dim] : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, st);
  Shape in_sizes = t.sizes();
  return with_history(t, make_view(t, std::move(sizes), std::move(strides), t.storage_offset()), "UnsqueezeBackward0",
                      [in_sizes](const Tensor& g) { return reshape(g, in_sizes); });
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  int64_t n = t.dim();
  start_dim = wrap_dim(start_dim, n);
  end_dim = wrap_dim(end_dim, n);
  EMBER_CHECK(start_dim <= end_dim, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (n == 0) return reshape(t, Shape{1});
  if (start_dim == end_dim) return t;
  Shape shape(t.sizes().begin(), t.sizes().begin() + start_dim);
  int64_t prod = 1;
  for (int64_t i = start_dim; i <= end_dim; ++i) prod *= t.sizes()[i];
  shape.push_back(prod);
  shape.insert(shape.end(), t.sizes().begin() + end_dim + 1, t.sizes().end());
  return reshape(t, shape);
}

Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes) {
  dim = wrap_dim(dim, t.dim());
  EMBER_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  EMBER_CHECK(t.dim() > 0, "unflatten: cannot unflatten a 0-dim tensor");
  int64_t size = t.sizes()[dim];
  Shape inner;
  try {
    inner = infer_size(sizes, size);
  } catch (const Error&) {
    throw Error(detail::str_cat("unflatten: Provided sizes ", shape_str(sizes),
                                " don't multiply up to the size of dim ", dim, " (", size, ") in the input tensor"));
  }
  Shape shape(t.sizes().begin(), t.sizes().begin() + dim);
  shape.insert(shape.end(), inner.begin(), inner.end());
  shape.insert(shape.end(), t.sizes().begin() + dim + 1, t.sizes().end());
  return view(t, shape);
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK(t.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK(length >= 0, "narrow(): length must be non-negative.");
  dim = wrap_dim(dim, t.dim());
  int64_t size = t.sizes()[dim];
  EMBER_CHECK_INDEX(start >= -size && start <= size, "start out of range (expected to be in range of [", -size, ", ",
                    size, "], but got ", start, ")");
  if (start < 0) start += size;
  EMBER_CHECK(start <= size - length, "start (", start, ") + length (", length, ") exceeds dimension size (", size,
              ").");
  return slice(t, dim, start, start + length, 1);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  EMBER_CHECK_INDEX(t.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t.dim());
  int64_t size = t.sizes()[dim];
  EMBER_CHECK_INDEX(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
                    t.shape_str(), " at dimension ", dim);
  if (index < 0) index += size;
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t off = t.storage_offset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  Shape in_sizes = t.sizes();
  return with_history(t, make_view(t, std::move(sizes), std::move(strides), off), "SelectBackward0",
                      [in_sizes, dim, index](const Tensor& g) {
                        return scatter_into_zeros(in_sizes, g, [&](const Tensor& z) { return select(z, dim, index); });
                      });
}

Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start_opt, std::optional<int64_t> end_opt,
             int64_t step) {
  EMBER_CHECK_INDEX(t.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK_VALUE(step > 0, "step must be greater than zero");
  dim = wrap_dim(dim, t.dim());
  int64_t size = t.sizes()[dim];
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(size);
  // Python slice clamping.
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape sizes = t.sizes(), strides = t.strides();
  int64_t off = t.storage_offset() + start * strides[dim];
  sizes[dim] = (end - start + step - 1) / step;
  strides[dim] *= step;
  Shape in_sizes = t.sizes();
  return with_history(t, make_view(t, std::move(sizes), std::move(strides), off), "SliceBackward0",
                      [in_sizes, dim, start, end, step](const Tensor& g) {
                        return scatter_into_zeros(in_sizes, g,
                                                  [&](const Tensor& z) { return slice(z, dim, start, end, step); });
                      });
}

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step) {
  int64_t n = t.dim();
  dim = wrap_dim(dim, n);
  int64_t dsize = n == 0 ? 1 : t.sizes()[dim];
  int64_t dstride = n == 0 ? 1 : t.strides()[dim];
  EMBER_CHECK(size <= dsize, "maximum size for tensor at dimension ", dim, " is ", dsize, " but size is ", size);
  EMBER_CHECK(step > 0, "step is ", step, " but must be > 0");
  EMBER_CHECK(size >= 0, "size is ", size, " but must be >= 0");
  Shape sizes = t.sizes(), strides = t.strides();
  if (n > 0) {
    sizes[dim] = (dsize - size) / step + 1;
    // A step beyond the dim leaves one window, whose stride is never used; multiply without
    // signed overflow (found by the libFuzzer target: step = 2**62).
    strides[dim] = static_cast<int64_t>(static_cast<uint64_t>(dstride) * static_cast<uint64_t>(step));
  }
  sizes.push_back(size);
  strides.push_back(dstride);
  return as_strided(t, sizes, strides, t.storage_offset());
}

Tensor unsafe_view(const Tensor& t, const Shape& shape) {
  Tensor r;
  {
    autograd::NoGradGuard no_grad;
    r = reshape(t, shape);
  }
  r.impl()->view_base = IntrusivePtr<TensorImpl>();
  r.impl()->view_made_no_grad = false;
  if (auto n = autograd::make_node<autograd::LambdaBackward>(t)) {
    const Shape in = t.sizes();
    n->record("UnsafeViewBackward0", {r}, {}, {},
              [in](const autograd::TensorList& g, const autograd::TensorList&) -> autograd::TensorList {
                return {g[0].defined() ? reshape(g[0], in) : Tensor()};
              });
  }
  return r;
}

}  // namespace ember
