#include <cstring>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<opmath_t<From>>(v) != opmath_t<From>(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(static_cast<opmath_t<From>>(v)));
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<opmath_t<From>>) {
    // float -> int: through int64 so that e.g. -1.5 -> uint8 wraps like C casts on x86/PyTorch.
    return static_cast<To>(static_cast<int64_t>(static_cast<opmath_t<From>>(v)));
  } else {
    return static_cast<To>(static_cast<opmath_t<From>>(v));
  }
}

void copy_kernel(const TensorIter& it, ScalarType dst, ScalarType src) {
  EMBER_DISPATCH_ALL(dst, "copy_", [&] {
    using out_t = scalar_t;
    EMBER_DISPATCH_ALL(src, "copy_", [&] {
      using in_t = scalar_t;
      it.for_each([](char** d, const int64_t* s, int64_t n) {
        if (s[0] == sizeof(out_t) && s[1] == sizeof(in_t)) {
          auto* o = reinterpret_cast<out_t*>(d[0]);
          auto* i = reinterpret_cast<const in_t*>(d[1]);
          if constexpr (std::is_same_v<out_t, in_t>) {
            std::memcpy(o, i, n * sizeof(out_t));
          } else {
            for (int64_t k = 0; k < n; ++k) o[k] = convert<out_t>(i[k]);
          }
        } else {
          for (int64_t k = 0; k < n; ++k)
            *reinterpret_cast<out_t*>(d[0] + k * s[0]) =
                convert<out_t>(*reinterpret_cast<const in_t*>(d[1] + k * s[1]));
        }
      });
    });
  });
}

// True when the bytes of a and b may overlap without being the same elements.
bool may_partially_overlap(const Tensor& a, const Tensor& b) {
  if (a.impl()->storage().get() != b.impl()->storage().get()) return false;
  if (a.numel() == 0 || b.numel() == 0) return false;
  if (a.data_ptr() == b.data_ptr() && a.sizes() == b.sizes() && a.strides() == b.strides() && a.dtype() == b.dtype())
    return false;
  auto extent = [](const Tensor& t) {
    int64_t hi = 0;
    for (int64_t d = 0; d < t.dim(); ++d) hi += (t.sizes()[d] - 1) * t.strides()[d];
    char* p = static_cast<char*>(t.data_ptr());
    return std::pair<char*, char*>(p, p + (hi + 1) * static_cast<int64_t>(t.element_size()));
  };
  auto [a0, a1] = extent(a);
  auto [b0, b1] = extent(b);
  return a0 < b1 && b0 < a1;
}

}  // namespace

Tensor& copy_(Tensor& dst, const Tensor& src) {
  EMBER_CHECK(src.device() == dst.device() || src.device().is_cpu(), "copy_: device mismatch");
  if (dst.is_same(src)) return dst;
  Tensor s = may_partially_overlap(dst, src) ? clone(src) : src;
  // src must broadcast to dst's shape (dst is never resized).
  Shape b = broadcast_shapes(dst.sizes(), s.sizes(), "copy_");
  EMBER_CHECK(b == dst.sizes(), "output with shape ", dst.shape_str(), " doesn't match the broadcast shape ",
              shape_str(b));
  bool grad = autograd::inplace_needs_grad(dst, {&src});
  if (grad) autograd::check_inplace(dst, true);
  TensorIter it(dst, {s}, dst.dtype(), "copy_");
  copy_kernel(it, dst.dtype(), s.dtype());
  dst.bump_version("copy_");
  if (grad) {
    auto n = std::make_shared<autograd::CopyBackwards>();
    n->next_edges = {autograd::gradient_edge(dst), autograd::gradient_edge(src)};
    n->src_sizes = src.sizes();
    n->src_dtype = src.dtype();
    autograd::rebase_history(dst, n);
  }
  return dst;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out;
  TensorIter it(out, {t}, dtype, "to");
  copy_kernel(it, dtype, t.dtype());
  if (t.dtype() != dtype) {
    if (auto n = autograd::make_node<autograd::ToCopyBackward0>(t)) {
      n->self_dtype = t.dtype();
      autograd::set_history(out, n);
    }
  } else if (auto n = autograd::make_node<autograd::CloneBackward0>(t)) {
    autograd::set_history(out, n);
  }
  return out;
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = empty(t.sizes(), t.dtype(), t.device());
  return copy_(out, t);
}

Tensor clone(const Tensor& t) { return to_dtype(t, t.dtype(), /*copy=*/true); }

Tensor& fill_(Tensor& t, Scalar value) {
  bool grad = autograd::inplace_needs_grad(t, {});
  if (grad) autograd::check_inplace(t, false);
  EMBER_DISPATCH_ALL(t.dtype(), "fill_", [&] {
    const scalar_t v = value.to<scalar_t>();
    if (t.is_contiguous()) {
      scalar_t* p = t.data<scalar_t>();
      int64_t n = t.numel();
      parallel_for(0, n, 4 * kGrainSize, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
    } else {
      TensorIter it(t, {}, t.dtype(), "fill_");
      it.for_each([v](char** d, const int64_t* s, int64_t n) {
        for (int64_t k = 0; k < n; ++k) *reinterpret_cast<scalar_t*>(d[0] + k * s[0]) = v;
      });
    }
  });
  t.bump_version("fill_");
  if (grad) {
    auto n = std::make_shared<autograd::FillBackward0>();
    n->next_edges = {autograd::gradient_edge(t)};
    autograd::rebase_history(t, n);
  }
  return t;
}

Tensor& resize_(Tensor& t, IntArrayRef sizes) {
  for (int64_t s : sizes) EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s);
  TensorImpl* impl = t.impl();
  size_t need = static_cast<size_t>(numel_of(sizes) + impl->storage_offset()) * t.element_size();
  if (need > impl->storage()->nbytes()) {
    Storage fresh = StorageImpl::allocate(need, cpu_allocator());
    std::memcpy(fresh->data(), impl->storage()->data(), impl->storage()->nbytes());
    impl->set_storage(std::move(fresh));
  }
  impl->set_geometry(Shape(sizes.begin(), sizes.end()), contiguous_strides(sizes), impl->storage_offset());
  return t;
}

Scalar item(const Tensor& t) {
  EMBER_CHECK(t.numel() == 1, "a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
  return EMBER_DISPATCH_ALL(t.dtype(), "item", [&]() -> Scalar {
    scalar_t v = *t.data<scalar_t>();
    if constexpr (std::is_same_v<scalar_t, bool>)
      return Scalar(v);
    else if constexpr (std::is_integral_v<scalar_t>)
      return Scalar(static_cast<int64_t>(v));
    else
      return Scalar(static_cast<double>(static_cast<opmath_t<scalar_t>>(v)));
  });
}

bool is_wrapped_number(const Tensor& t) { return t.impl()->wrapped_number; }

}  // namespace ember
