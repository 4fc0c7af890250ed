#include "ember/ops/reduce_internal.h"

#include <cmath>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/parallel.h"
#include "ember/cpu/loops.h"
#include "ember/ops/reduce_utils.h"

namespace ember::internal {
namespace {
using autograd::LambdaBackward;
using autograd::make_node;
using autograd::SavedVariable;
using autograd::TensorList;

ScalarType float_type(ScalarType t) { return is_floating_point(t) ? t : default_dtype(); }

template <typename F>
Tensor float_unary(const Tensor& x_in, const char* name, const F& f) {
  ScalarType dt = float_type(x_in.dtype());
  Tensor x = to_dtype(x_in, dt);
  Tensor out;
  TensorIter it(out, {x}, dt, name);
  EMBER_DISPATCH_FLOAT(dt, name, [&] { unary_loop<scalar_t, scalar_t>(it, f); });
  return out;
}

// Gathers or scatter-adds along dim of contiguous (outer, R, inner) data; index is (outer, K, inner).
template <typename T, bool Scatter>
void gather_scatter(T* big, T* small, const int64_t* idx, int64_t outer, int64_t R, int64_t K, int64_t inner) {
  parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K * inner, 1)), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t at = o * K * inner + k * inner + i;
          T* slot = big + (o * R + idx[at]) * inner + i;
          if constexpr (Scatter)
            *slot = static_cast<T>(static_cast<opmath_t<T>>(*slot) + static_cast<opmath_t<T>>(small[at]));
          else
            small[at] = *slot;
        }
  });
}

// Checked before the (possibly parallel) loop: an exception must not leave an OpenMP region.
void check_index_range(const Tensor& index, int64_t R) {
  const int64_t* p = index.data<int64_t>();
  for (int64_t k = 0; k < index.numel(); ++k)
    EMBER_CHECK_INDEX(p[k] >= 0 && p[k] < R, "index ", p[k], " is out of bounds for dimension with size ", R);
}

void check_index_shape(const Tensor& x, int64_t dim, const Tensor& index, IntArrayRef sizes) {
  EMBER_CHECK(index.dtype() == ScalarType::Int64, "gather/scatter: index must be int64");
  EMBER_CHECK(index.dim() == static_cast<int64_t>(sizes.size()), "gather/scatter: index has the wrong rank");
  for (int64_t d = 0; d < index.dim(); ++d)
    EMBER_CHECK(d == dim || index.sizes()[d] == sizes[d], "gather/scatter: index ", index.shape_str(),
                " does not match ", x.shape_str(), " outside dim ", dim);
}

struct DimGeometry {
  int64_t outer = 1, inner = 1;
};
DimGeometry geometry(IntArrayRef sizes, int64_t dim) {
  DimGeometry g;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d < dim) g.outer *= sizes[d];
    if (d > dim) g.inner *= sizes[d];
  }
  return g;
}
}  // namespace

Tensor exp(const Tensor& x) {
  Tensor out = float_unary(x, "exp", [](auto v) { return std::exp(v); });
  if (auto n = make_node<LambdaBackward>(x)) {
    n->name_ = "ExpBackward0";
    autograd::set_history(out, n);
    n->saved = {SavedVariable(out, true)};
    n->fn = [](const TensorList& g, const TensorList& s) -> TensorList { return {mul(g[0], s[0])}; };
  }
  return out;
}

Tensor log(const Tensor& x) {
  Tensor out = float_unary(x, "log", [](auto v) { return std::log(v); });
  if (auto n = make_node<LambdaBackward>(x)) {
    n->name_ = "LogBackward0";
    n->saved = {SavedVariable(x, false)};
    n->fn = [](const TensorList& g, const TensorList& s) -> TensorList { return {div(g[0], s[0])}; };
    autograd::set_history(out, n);
  }
  return out;
}

Tensor sqrt(const Tensor& x) {
  Tensor out = float_unary(x, "sqrt", [](auto v) { return std::sqrt(v); });
  if (auto n = make_node<LambdaBackward>(x)) {
    n->name_ = "SqrtBackward0";
    autograd::set_history(out, n);
    n->saved = {SavedVariable(out, true)};
    n->fn = [](const TensorList& g, const TensorList& s) -> TensorList { return {div(g[0], mul(s[0], num(2.0)))}; };
  }
  return out;
}

Tensor sign(const Tensor& x) {
  Tensor out;
  TensorIter it(out, {x}, x.dtype(), "sign");
  EMBER_DISPATCH_ALL(x.dtype(), "sign", [&] {
    using M = opmath_t<scalar_t>;
    unary_loop<scalar_t, scalar_t>(it, [](M v) { return static_cast<M>((M(0) < v) - (v < M(0))); });
  });
  return out;
}

Tensor abs(const Tensor& x) {
  Tensor out;
  TensorIter it(out, {x}, x.dtype(), "abs");
  EMBER_DISPATCH_ALL(x.dtype(), "abs", [&] {
    using M = opmath_t<scalar_t>;
    unary_loop<scalar_t, scalar_t>(it, [](M v) { return v < M(0) ? static_cast<M>(-v) : v; });
  });
  if (auto n = make_node<LambdaBackward>(x)) {
    n->name_ = "AbsBackward0";
    n->saved = {SavedVariable(x, false)};
    n->fn = [](const TensorList& g, const TensorList& s) -> TensorList { return {mul(g[0], internal::sign(s[0]))}; };
    autograd::set_history(out, n);
  }
  return out;
}

Tensor where(const Tensor& cond_in, const Tensor& a_in, const Tensor& b_in) {
  ScalarType dt = result_type(a_in, b_in);
  Tensor cond = to_dtype(cond_in, ScalarType::Bool);
  Tensor a = to_dtype(a_in, dt), b = to_dtype(b_in, dt);
  Tensor out;
  TensorIter it(out, {cond, a, b}, dt, "where");
  EMBER_DISPATCH_ALL(dt, "where", [&] {
    using T = scalar_t;
    it.for_each([](char** d, const int64_t* s, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        bool c = *reinterpret_cast<const bool*>(d[1] + k * s[1]);
        const char* src = c ? d[2] + k * s[2] : d[3] + k * s[3];
        *reinterpret_cast<T*>(d[0] + k * s[0]) = *reinterpret_cast<const T*>(src);
      }
    });
  });
  if (auto n = make_node<LambdaBackward>(a_in, b_in)) {
    n->name_ = "WhereBackward0";
    n->saved = {SavedVariable(cond, false)};
    Shape sa = a_in.sizes(), sb = b_in.sizes();
    ScalarType da = a_in.dtype(), db = b_in.dtype();
    n->fn = [sa, sb, da, db](const TensorList& g, const TensorList& s) -> TensorList {
      Tensor zero = num(0);
      Tensor ga = to_dtype(autograd::sum_to(internal::where(s[0], g[0], zero), sa), da);
      Tensor gb = to_dtype(autograd::sum_to(internal::where(s[0], zero, g[0]), sb), db);
      return {ga, gb};
    };
    autograd::set_history(out, n);
  }
  return out;
}

Tensor gather(const Tensor& x_in, int64_t dim, const Tensor& index_in) {
  dim = wrap_dim(dim, x_in.dim());
  check_index_shape(x_in, dim, index_in, x_in.sizes());
  Tensor x = contiguous(x_in), index = contiguous(index_in);
  Tensor out = empty(index.sizes(), x.dtype());
  auto g = geometry(x.sizes(), dim);
  int64_t R = x.dim() ? x.sizes()[dim] : 1, K = index.dim() ? index.sizes()[dim] : 1;
  check_index_range(index, R);
  if (out.numel() > 0) {
    EMBER_DISPATCH_ALL(x.dtype(), "gather", [&] {
      gather_scatter<scalar_t, false>(x.data<scalar_t>(), out.data<scalar_t>(), index.data<int64_t>(), g.outer, R, K,
                                      g.inner);
    });
  }
  if (auto n = make_node<LambdaBackward>(x_in)) {
    n->name_ = "GatherBackward0";
    n->saved = {SavedVariable(index, false)};
    Shape sizes = x_in.sizes();
    n->fn = [dim, sizes](const TensorList& gr, const TensorList& s) -> TensorList {
      return {internal::scatter_add(gr[0], dim, s[0], sizes)};
    };
    autograd::set_history(out, n);
  }
  return out;
}

Tensor scatter_add(const Tensor& src_in, int64_t dim, const Tensor& index_in, IntArrayRef sizes) {
  dim = wrap_dim(dim, static_cast<int64_t>(sizes.size()));
  check_index_shape(src_in, dim, index_in, sizes);
  EMBER_CHECK(src_in.sizes() == index_in.sizes(), "scatter_add: src and index shapes differ");
  Tensor src = contiguous(src_in), index = contiguous(index_in);
  Tensor out = zeros(sizes, src.dtype());
  auto g = geometry(sizes, dim);
  int64_t R = sizes.empty() ? 1 : sizes[dim], K = index.dim() ? index.sizes()[dim] : 1;
  check_index_range(index, R);
  if (src.numel() > 0) {
    EMBER_DISPATCH_ALL(src.dtype(), "scatter_add", [&] {
      gather_scatter<scalar_t, true>(out.data<scalar_t>(), src.data<scalar_t>(), index.data<int64_t>(), g.outer, R, K,
                                     g.inner);
    });
  }
  if (auto n = make_node<LambdaBackward>(src_in)) {
    n->name_ = "ScatterAddBackward0";
    n->saved = {SavedVariable(index, false)};
    n->fn = [dim](const TensorList& gr, const TensorList& s) -> TensorList {
      return {internal::gather(gr[0], dim, s[0])};
    };
    autograd::set_history(out, n);
  }
  return out;
}

namespace {
template <typename F>
Tensor with_grad(const Tensor& x, Tensor y, const char* name, F backward) {
  if (auto n = make_node<LambdaBackward>(x)) {
    n->name_ = name;
    n->fn = [backward](const TensorList& g, const TensorList&) -> TensorList { return {backward(g[0])}; };
    autograd::set_history(y, n);
  }
  return y;
}
}  // namespace

Tensor reshape(const Tensor& x, IntArrayRef sizes) {
  Shape from = x.sizes();
  Tensor y;
  {
    autograd::NoGradGuard ng;
    y = ember::reshape(x, sizes);
  }
  return with_grad(x, y, "ViewBackward0", [from](const Tensor& g) { return internal::reshape(g, from); });
}

Tensor permute(const Tensor& x, IntArrayRef perm) {
  Shape inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[wrap_dim(perm[i], x.dim())] = static_cast<int64_t>(i);
  Tensor y;
  {
    autograd::NoGradGuard ng;
    y = ember::permute(x, perm);
  }
  return with_grad(x, y, "PermuteBackward0", [inverse](const Tensor& g) { return internal::permute(g, inverse); });
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  Shape from = x.sizes();
  Tensor y;
  {
    autograd::NoGradGuard ng;
    y = ember::unsqueeze(x, dim);
  }
  return with_grad(x, y, "UnsqueezeBackward0", [from](const Tensor& g) { return internal::reshape(g, from); });
}

Tensor expand(const Tensor& x, IntArrayRef sizes) {
  Shape from = x.sizes();
  Tensor y;
  {
    autograd::NoGradGuard ng;
    y = ember::expand(x, sizes);
  }
  return with_grad(x, y, "ExpandBackward0", [from](const Tensor& g) {
    int64_t lead = g.dim() - static_cast<int64_t>(from.size());
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < g.dim(); ++d)
      if (d < lead || (from[d - lead] == 1 && g.sizes()[d] != 1)) dims.push_back(d);
    Tensor r = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
    return internal::reshape(r, from);
  });
}

Tensor unsqueeze_reduced(const Tensor& x, const std::vector<bool>& mask, int64_t ndim) {
  if (x.dim() == ndim) return x;
  Tensor g = x;
  for (int64_t d = 0; d < ndim; ++d)
    if (mask[d]) g = internal::unsqueeze(g, d);
  return g;
}

Tensor evenly_distribute(const Tensor& g, const Tensor& x, const Tensor& r, const std::vector<bool>& mask) {
  Tensor hit = internal::where(ne(r, r), ne(x, x), eq(x, r));
  Tensor count = sum(hit, reduce_detail::mask_dims(mask, x.dim()), /*keepdim=*/true);
  return div(mul(g, hit), count);
}

Tensor select_backward(const Tensor& g, int64_t dim, const Tensor& indices, const Shape& sizes, bool keepdim) {
  if (sizes.empty()) return internal::reshape(g, sizes);
  Tensor gk = keepdim ? g : internal::unsqueeze(g, dim);
  Tensor ik = keepdim ? indices : ember::unsqueeze(indices, dim);
  return internal::scatter_add(gk, dim, ik, sizes);
}

Tensor flip(const Tensor& x_in, int64_t dim) {
  dim = wrap_dim(dim, x_in.dim());
  auto l = reduce_detail::dim_layout(x_in, dim);
  Tensor out = empty(x_in.sizes(), x_in.dtype());
  EMBER_DISPATCH_ALL(x_in.dtype(), "flip", [&] {
    const scalar_t* src = l.x.data<scalar_t>();
    scalar_t* dst = out.data<scalar_t>();
    for (int64_t o = 0; o < l.outer; ++o)
      for (int64_t r = 0; r < l.R; ++r)
        std::copy(src + (o * l.R + r) * l.inner, src + (o * l.R + r + 1) * l.inner,
                  dst + (o * l.R + (l.R - 1 - r)) * l.inner);
  });
  if (auto n = make_node<LambdaBackward>(x_in)) {
    n->name_ = "FlipBackward0";
    n->fn = [dim](const TensorList& g, const TensorList&) -> TensorList { return {internal::flip(g[0], dim)}; };
    autograd::set_history(out, n);
  }
  return out;
}

}  // namespace ember::internal
