// Reductions beyond sum/mean: nansum, nanmean, prod, max/min (full, with dim, elementwise),
// amax/amin/aminmax, argmax/argmin, all/any, count_nonzero, var/std, norms, logsumexp. Each reads
// its input through Note [Reduction layout] (reduce_utils.h) and folds it with a reducer from
// cpu/reduce_kernels.h; the backward formula sits beside each op.
#include <cmath>
#include <complex>
#include <limits>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/reductions.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::make_node;
using autograd::TensorList;
using reduce_detail::check_nonempty;
using reduce_detail::Layout;
using reduce_detail::mask_dims;
using reduce_detail::num;
using reduce_detail::reduce_layout;
using reduce_detail::reduce_mask;
using reduce_detail::reduced_count;
using reduce_detail::reduced_shape;
using Mask = std::vector<bool>;

// ---- shared plumbing ----

bool dims_given(const OptDims& dims) { return dims && !dims->empty(); }

Tensor keep_shape(const Tensor& r, const Tensor& t, const Mask& mask, bool keepdim) {
  return keepdim ? reshape(r, reduced_shape(t, mask, true)) : r;
}

// Folds x over the masked dims with the reduction r (cpu/reductions.h) into a fresh tensor of
// dtype out_dtype (keepdim=False shape); empty reductions give the reducer's identity.
Tensor run_reduce(const Tensor& x, const Mask& mask, ScalarType out_dtype, cpu::Reduction r, const char* name,
                  double p = 0) {
  autograd::NoGradGuard raw;
  Tensor out = empty(reduced_shape(x, mask, false), out_dtype);
  if (out.numel() == 0) return out;
  Layout l = reduce_layout(x, mask);
  cpu::reduce_kernel(r, l.x, out, l.outer, l.R, l.inner, p, name);
  return out;
}

// The gradient of a reduction's output, broadcastable against the input (reduced dims restored).
Tensor grad_keep(const Tensor& g, const Mask& mask, bool keepdim, int64_t ndim) {
  return keepdim ? g : reduce_detail::unsqueeze_reduced(g, mask, ndim);
}

template <bool Max>
Tensor extremum_raw(const Tensor& x, const Mask& mask, const char* name) {
  return run_reduce(x, mask, x.dtype(), Max ? cpu::Reduction::Max : cpu::Reduction::Min, name);
}

template <bool Max>
Tensor full_extremum(const Tensor& t, const char* name) {
  Mask mask = reduce_mask(t, std::nullopt);
  check_nonempty(t, mask, false, name);
  Tensor r = extremum_raw<Max>(t, mask, name);
  if (auto n = make_node<LambdaBackward>(t))
    n->record(Max ? "MaxBackward1" : "MinBackward1", {r}, {t}, {r},
              [mask](const TensorList& g, const TensorList& s) -> TensorList {
                return {reduce_detail::evenly_distribute(g[0], s[0], s[1], mask)};
              });
  return r;
}

template <bool Max>
TensorPair dim_extremum(const Tensor& t, int64_t dim, bool keepdim, const char* name) {
  EMBER_CHECK(!is_complex(t.dtype()), name, "(): does not support complex input");
  dim = wrap_dim(dim, t.dim());
  Mask mask = reduce_mask(t, dim);
  check_nonempty(t, mask, true, name);
  Tensor values = empty(reduced_shape(t, mask, false), t.dtype());
  Tensor indices = empty(reduced_shape(t, mask, false), ScalarType::Int64);
  if (values.numel() > 0) {
    Layout l = reduce_layout(t, mask);
    cpu::arg_reduce_kernel(Max, l.x, values, indices, l.outer, l.R, l.inner, name);
  }
  values = keep_shape(values, t, mask, keepdim);
  indices = keep_shape(indices, t, mask, keepdim);
  if (auto n = make_node<LambdaBackward>(t))
    n->record(Max ? "MaxBackward0" : "MinBackward0", {values}, {indices}, {},
              [dim, sizes = t.sizes(), keepdim](const TensorList& g, const TensorList& s) -> TensorList {
                return {reduce_detail::select_backward(g[0], dim, s[0], sizes, keepdim)};
              });
  return {values, indices};
}

template <bool Max>
Tensor amax_impl(const Tensor& t, const OptDims& dims, bool keepdim, const char* name) {
  Mask mask = reduce_mask(t, dims);
  check_nonempty(t, mask, dims_given(dims), name);
  Tensor r = keep_shape(extremum_raw<Max>(t, mask, name), t, mask, keepdim);
  // Complex reaches here only empty (the kernel raises otherwise); torch has no complex derivative.
  EMBER_CHECK(!(is_complex(t.dtype()) && autograd::GradMode::is_enabled() && autograd::requires_grad(t)), name,
              " does not support automatic differentiation for outputs with complex dtype.");
  if (auto n = make_node<LambdaBackward>(t))
    n->record(Max ? "AmaxBackward0" : "AminBackward0", {r}, {t}, {r},
              [mask, keepdim, nd = t.dim()](const TensorList& g, const TensorList& s) -> TensorList {
                return {reduce_detail::evenly_distribute(grad_keep(g[0], mask, keepdim, nd), s[0],
                                                         grad_keep(s[1], mask, keepdim, nd), mask)};
              });
  return r;
}

template <bool Max>
Tensor arg_impl(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const char* name) {
  EMBER_CHECK(t.dtype() != ScalarType::Bool, "\"", name, "_cpu\" not implemented for 'Bool'");
  Tensor x = t;
  Mask mask;
  if (dim) {
    mask = reduce_mask(t, *dim);
    check_nonempty(t, mask, true, name);
  } else {
    check_nonempty(t, reduce_mask(t, std::nullopt), false, name, /*index_error_without_dim=*/true);
    x = reshape(t, {-1});
    mask = {true};
  }
  Tensor indices = empty(reduced_shape(x, mask, false), ScalarType::Int64);
  if (indices.numel() > 0) {
    Layout l = reduce_layout(x, mask);
    Tensor no_values;
    cpu::arg_reduce_kernel(Max, l.x, no_values, indices, l.outer, l.R, l.inner, name);
  }
  if (!keepdim) return indices;
  if (dim) return reshape(indices, reduced_shape(t, mask, true));
  return reshape(indices, Shape(t.dim(), 1));
}

template <bool All>
Tensor all_any(const Tensor& t, const OptDims& dims, bool keepdim, const char* name) {
  ScalarType out_dtype = t.dtype() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  // An explicit empty dim list reduces nothing here (unlike sum's legacy "all dims").
  if (dims && dims->empty()) return to_dtype(ne(t, scalar_tensor(Scalar(0), t.dtype())), out_dtype);
  if (is_complex(t.dtype())) return all_any<All>(ne(t, scalar_tensor(Scalar(0), t.dtype())), dims, keepdim, name);
  Mask mask = reduce_mask(t, dims);
  Tensor r = run_reduce(t, mask, ScalarType::Bool, All ? cpu::Reduction::All : cpu::Reduction::Any, name);
  return keep_shape(to_dtype(r, out_dtype), t, mask, keepdim);
}

// Variance (or its square root) per output element, two passes in double: the mean, then the sum
// of squared deviations, divided by `divisor`.
template <typename T>
void var_rows(const T* x, T* out, int64_t outer, int64_t R, int64_t inner, double divisor, bool take_sqrt) {
  using M = opmath_t<T>;
  auto finish = [&](double ssd) {
    double v = ssd / divisor;
    return static_cast<T>(take_sqrt ? std::sqrt(v) : v);
  };
  auto val = [](T v) { return static_cast<double>(static_cast<M>(v)); };
  if (inner == 1) {
    auto row_var = [&](const T* row, int64_t lo, int64_t hi, double mean) {
      double acc[4] = {0, 0, 0, 0};
      int64_t k = lo;
      for (; k + 4 <= hi; k += 4)
        for (int j = 0; j < 4; ++j) {
          double d = val(row[k + j]) - mean;
          acc[j] += d * d;
        }
      for (; k < hi; ++k) acc[0] += (val(row[k]) - mean) * (val(row[k]) - mean);
      return (acc[0] + acc[1]) + (acc[2] + acc[3]);
    };
    auto row_sum = [&](const T* row, int64_t lo, int64_t hi) {
      double acc[4] = {0, 0, 0, 0};
      int64_t k = lo;
      for (; k + 4 <= hi; k += 4)
        for (int j = 0; j < 4; ++j) acc[j] += val(row[k + j]);
      for (; k < hi; ++k) acc[0] += val(row[k]);
      return (acc[0] + acc[1]) + (acc[2] + acc[3]);
    };
    if (R > kLongRow) {  // Note [Long-row reductions]: the mean, then the squared deviations
      auto plus = [](double a, double b) { return a + b; };
      std::vector<double> mean(static_cast<size_t>(outer));
      reduce_long_rows(
          outer, R, 0.0, [&](int64_t o, int64_t lo, int64_t hi) { return row_sum(x + o * R, lo, hi); }, plus,
          [&](int64_t o, double total) { mean[o] = total / static_cast<double>(R); });
      reduce_long_rows(
          outer, R, 0.0, [&](int64_t o, int64_t lo, int64_t hi) { return row_var(x + o * R, lo, hi, mean[o]); }, plus,
          [&](int64_t o, double total) { out[o] = finish(total); });
      return;
    }
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* row = x + o * R;
        double mean = row_sum(row, 0, R) / static_cast<double>(R);
        out[o] = finish(row_var(row, 0, R, mean));
      }
    });
    return;
  }
  constexpr int64_t kTile = 256;
  int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * kTile, 1)),
               [&](int64_t b, int64_t e) {
                 double mean[kTile], ssd[kTile];
                 for (int64_t w = b; w < e; ++w) {
                   int64_t o = w / tiles, j0 = (w % tiles) * kTile, len = std::min(kTile, inner - j0);
                   const T* base = x + o * R * inner + j0;
                   for (int64_t j = 0; j < len; ++j) mean[j] = 0, ssd[j] = 0;
                   for (int64_t r = 0; r < R; ++r)
                     for (int64_t j = 0; j < len; ++j) mean[j] += val(base[r * inner + j]);
                   for (int64_t j = 0; j < len; ++j) mean[j] /= static_cast<double>(R);
                   for (int64_t r = 0; r < R; ++r)
                     for (int64_t j = 0; j < len; ++j) {
                       double d = val(base[r * inner + j]) - mean[j];
                       ssd[j] += d * d;
                     }
                   T* dst = out + o * inner + j0;
                   for (int64_t j = 0; j < len; ++j) dst[j] = finish(ssd[j]);
                 }
               });
}

Tensor var_std(const Tensor& t, const OptDims& dims, double correction, bool keepdim, bool take_sqrt) {
  EMBER_CHECK(is_floating_point(t.dtype()) || is_complex(t.dtype()),
              "std and var only support floating point and complex dtypes");
  Mask mask = reduce_mask(t, dims);
  int64_t count = reduced_count(t, mask);
  double divisor = std::max(0.0, static_cast<double>(count) - correction);
  Tensor r;
  if (is_complex(t.dtype())) {
    // The mean squared modulus of the deviations: var(real) + var(imag), a real result.
    autograd::NoGradGuard raw;
    Tensor xr = view_as_real(t);
    Mask m2 = mask;
    m2.push_back(false);
    Tensor parts = empty(reduced_shape(xr, m2, false), xr.dtype());
    if (parts.numel() > 0) {
      Layout l = reduce_layout(xr, m2);
      EMBER_DISPATCH_FLOAT(xr.dtype(), take_sqrt ? "std" : "var", [&] {
        var_rows(l.x.data<scalar_t>(), parts.data<scalar_t>(), l.outer, l.R, l.inner, divisor, false);
      });
    }
    r = sum(parts, std::vector<int64_t>{-1});
    if (take_sqrt) r = ember::sqrt(r);
  } else if ((r = empty(reduced_shape(t, mask, false), t.dtype())).numel() > 0) {
    Layout l = reduce_layout(t, mask);
    EMBER_DISPATCH_FLOAT(t.dtype(), take_sqrt ? "std" : "var", [&] {
      var_rows(l.x.data<scalar_t>(), r.data<scalar_t>(), l.outer, l.R, l.inner, divisor, take_sqrt);
    });
  }
  r = keep_shape(r, t, mask, keepdim);
  if (auto n = make_node<LambdaBackward>(t)) {
    int64_t nd = t.dim();
    double denom = static_cast<double>(count) - correction;
    auto backward = [mask, keepdim, nd, denom, take_sqrt](const TensorList& g, const TensorList& s) -> TensorList {
      const Tensor& x = s[0];
      Tensor gk = grad_keep(g[0], mask, keepdim, nd);
      Tensor centered = sub(x, mean(x, mask_dims(mask, nd), /*keepdim=*/true));
      if (take_sqrt) {  // d std = d var / (2 std); 0 where std is 0 (as torch)
        Tensor r = grad_keep(s[1], mask, keepdim, nd);
        Tensor scale = where(eq(r, num(0.0)), num(0.0), div(gk, r));
        return {div(mul(scale, centered), num(denom))};
      }
      return {mul(mul(gk, num(2.0 / denom)), centered)};
    };
    // std's gradient divides by the result, var's needs only the input (so var's result may be
    // changed in place, as torch's)
    if (take_sqrt)
      n->record("StdBackward0", {r}, {t}, {r}, backward);
    else
      n->record("VarBackward0", {r}, {t}, {}, backward);
  }
  return r;
}

ScalarType norm_input_dtype(const Tensor& t, std::optional<ScalarType> dtype, const char* name) {
  EMBER_CHECK(is_floating_point(t.dtype()) || is_complex(t.dtype()), name,
              ": Expected a floating point or complex tensor as input. Got ", dtype_name(t.dtype()));
  if (dtype && is_complex(t.dtype()))
    EMBER_CHECK(is_complex(*dtype), name, ": dtype should be complex for complex inputs, but got ", dtype_name(*dtype));
  else if (dtype)
    EMBER_CHECK(is_floating_point(*dtype), name, ": dtype should be real for real inputs, but got ",
                dtype_name(*dtype));
  return dtype.value_or(t.dtype());
}

std::string ord_str(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  std::ostringstream ss;
  ss << ord;
  return ss.str();
}

// Gradient of vector_norm: x, the norm r and g keepdim-shaped. Where the norm is 0 the
// gradient is 0 (as torch's subgradient choice).
Tensor vector_norm_backward(const Tensor& g, const Tensor& x, const Tensor& r, double p, const Mask& mask) {
  Tensor zero = num(0.0);
  if (p == 0) return Tensor();  // no gradient at all, as torch
  if (p == 1) return mul(g, ember::sign(x));
  if (std::isinf(p)) return mul(ember::sign(x), reduce_detail::evenly_distribute(g, ember::abs(x), r, mask));
  Tensor r_zero = eq(r, zero);
  if (p == 2) return mul(g, where(r_zero, zero, div(x, r)));
  // sign(x) |x|^(p-1), 0 where x == 0.
  Tensor scaled = mul(ember::sign(x), pow(ember::abs(x), num(p - 1)));
  if (p < 1) {
    scaled = where(eq(x, zero), zero, scaled);
    return mul(mul(scaled, g), pow(r, num(1 - p)));
  }
  return mul(scaled, where(r_zero, zero, div(g, pow(r, num(p - 1)))));
}

}  // namespace

// ---- sums and products ----

Tensor nansum(const Tensor& t, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  if (!is_floating_point(t.dtype()) && !is_complex(t.dtype())) return sum(t, dims, keepdim, dtype);
  EMBER_CHECK(!is_complex(t.dtype()), "nansum on CPU does not support complex inputs");
  ScalarType out_dtype = dtype.value_or(t.dtype());
  Tensor x = to_dtype(t, out_dtype);
  Mask mask = reduce_mask(x, dims);
  Tensor r = run_reduce(x, mask, out_dtype, cpu::Reduction::NanSum, "nansum");
  r = keep_shape(r, x, mask, keepdim);
  if (auto n = make_node<LambdaBackward>(x))
    n->record("NansumBackward0", {r}, {x}, {},
              [mask, keepdim, nd = x.dim()](const TensorList& g, const TensorList& s) -> TensorList {
                return {mul(grad_keep(g[0], mask, keepdim, nd), eq(s[0], s[0]))};
              });
  return r;
}

Tensor nanmean(const Tensor& t, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  EMBER_CHECK(is_floating_point(t.dtype()) || is_complex(t.dtype()),
              "nanmean(): expected input to have floating point or complex dtype but got ", dtype_name(t.dtype()));
  EMBER_CHECK(!is_complex(t.dtype()), "nansum on CPU does not support complex inputs");
  Tensor count;
  {
    autograd::NoGradGuard ng;
    count = sum(eq(t, t), dims, keepdim);
  }
  return div(nansum(t, dims, keepdim, dtype), count);
}

Tensor prod(const Tensor& t, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType out_dtype = dtype ? *dtype : (is_integral(t.dtype(), true) ? ScalarType::Int64 : t.dtype());
  Tensor x = dtype ? to_dtype(t, *dtype) : t;
  Mask mask = dim ? reduce_mask(x, *dim) : reduce_mask(x, std::nullopt);
  bool keep = dim && keepdim;
  Tensor r = run_reduce(x, mask, is_complex(x.dtype()) ? x.dtype() : out_dtype, cpu::Reduction::Prod, "prod");
  r = keep_shape(r, x, mask, keep);
  if (auto n = make_node<LambdaBackward>(x)) {
    int64_t nd = x.dim();
    n->record(dim ? "ProdBackward1" : "ProdBackward0", {r}, {x}, {r},
              [mask, keep, nd](const TensorList& g, const TensorList& s) -> TensorList {
                // Complex: the conjugate of the holomorphic derivative (torch's convention).
                bool cplx = is_complex(s[0].dtype());
                const Tensor x = cplx ? conj(s[0]) : s[0];
                Tensor gk = grad_keep(g[0], mask, keep, nd), rk = grad_keep(cplx ? conj(s[1]) : s[1], mask, keep, nd);
                Tensor zero = num(0.0);
                Tensor is_zero = eq(x, zero);
                bool any_zero;
                {
                  autograd::NoGradGuard ng;
                  any_zero = item(any(is_zero)).to_bool();
                }
                if (!any_zero) return {div(mul(gk, rk), x)};
                // A slice with one zero: only the zero gets a gradient, the product of the others; with
                // more zeros every gradient is 0. x1 (zeros made ones) keeps the formula differentiable.
                std::vector<int64_t> dims = mask_dims(mask, nd);
                Tensor x1 = where(is_zero, num(1.0), x);
                Tensor zeros_in_slice = sum(is_zero, dims, /*keepdim=*/true);
                Tensor p1 = dims.size() == 1 ? prod(x1, dims[0], /*keepdim=*/true) : reshape(prod(x1), Shape(nd, 1));
                Tensor others = mul(gk, p1);
                Tensor single = mul(is_zero, eq(zeros_in_slice, num(1)));
                return {where(eq(zeros_in_slice, num(0)), div(mul(gk, rk), x1), where(single, others, zero))};
              });
  }
  return r;
}

// ---- max / min ----

Tensor max(const Tensor& t) { return full_extremum<true>(t, "max"); }
Tensor min(const Tensor& t) { return full_extremum<false>(t, "min"); }
TensorPair max(const Tensor& t, int64_t dim, bool keepdim) { return dim_extremum<true>(t, dim, keepdim, "max"); }
TensorPair min(const Tensor& t, int64_t dim, bool keepdim) { return dim_extremum<false>(t, dim, keepdim, "min"); }
Tensor amax(const Tensor& t, OptDims dims, bool keepdim) { return amax_impl<true>(t, dims, keepdim, "amax"); }
Tensor amin(const Tensor& t, OptDims dims, bool keepdim) { return amax_impl<false>(t, dims, keepdim, "amin"); }

TensorPair aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  if (!dim && t.numel() == 0)
    throw Error("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  OptDims dims = dim ? OptDims(std::vector<int64_t>{*dim}) : std::nullopt;
  if (!dim && keepdim) {  // all dims reduced, each kept as size 1
    Shape ones(t.dim(), 1);
    return {reshape(amin(t, dims, false), ones), reshape(amax(t, dims, false), ones)};
  }
  return {amin(t, dims, keepdim), amax(t, dims, keepdim)};
}

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  EMBER_CHECK(!is_complex(t.dtype()), "argmax(): does not support complex input");
  return arg_impl<true>(t, dim, keepdim, "argmax");
}
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  EMBER_CHECK(!is_complex(t.dtype()), "argmin(): does not support complex input");
  return arg_impl<false>(t, dim, keepdim, "argmin");
}

// ---- logical and counting ----

Tensor all(const Tensor& t, OptDims dims, bool keepdim) { return all_any<true>(t, dims, keepdim, "all"); }
Tensor any(const Tensor& t, OptDims dims, bool keepdim) { return all_any<false>(t, dims, keepdim, "any"); }

Tensor count_nonzero(const Tensor& t, OptDims dims) {
  if (is_complex(t.dtype())) return count_nonzero(ne(t, scalar_tensor(Scalar(0), t.dtype())), dims);
  Mask mask = reduce_mask(t, dims);
  return run_reduce(t, mask, ScalarType::Int64, cpu::Reduction::CountNonzero, "count_nonzero");
}

// ---- moments ----

Tensor var(const Tensor& t, OptDims dims, double correction, bool keepdim) {
  return var_std(t, dims, correction, keepdim, false);
}
Tensor std(const Tensor& t, OptDims dims, double correction, bool keepdim) {
  return var_std(t, dims, correction, keepdim, true);
}
namespace {
// The mean beside var/std: torch's one-pass (Welford) kernel never overflows a float16/bfloat16
// mean, so those take theirs in double (the variance pass already accumulates in double).
Tensor mean_wide(const Tensor& t, OptDims dims, bool keepdim) {
  if (t.dtype() != ScalarType::Float16 && t.dtype() != ScalarType::BFloat16) return mean(t, dims, keepdim);
  return to_dtype(mean(to_dtype(t, ScalarType::Float64), dims, keepdim), t.dtype());
}
}  // namespace
TensorPair var_mean(const Tensor& t, OptDims dims, double correction, bool keepdim) {
  return {var(t, dims, correction, keepdim), mean_wide(t, dims, keepdim)};
}
TensorPair std_mean(const Tensor& t, OptDims dims, double correction, bool keepdim) {
  return {std(t, dims, correction, keepdim), mean_wide(t, dims, keepdim)};
}

// ---- norms ----

Tensor vector_norm(const Tensor& t, double ord, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType dt = norm_input_dtype(t, dtype, "linalg.vector_norm");
  // Complex: the norm of the moduli (abs carries the gradient, sgn(z) * d|z|).
  if (is_complex(dt)) return vector_norm(ember::abs(to_dtype(t, dt)), ord, dims, keepdim, std::nullopt);
  Tensor x = to_dtype(t, dt);
  Mask mask = reduce_mask(x, dims);
  if (ord < 0 || std::isinf(ord)) {
    bool empty_slice = x.numel() == 0 && reduced_count(x, mask) == 0;
    EMBER_CHECK(!empty_slice, "linalg.vector_norm cannot compute the ", ord_str(ord),
                " norm on an empty tensor because the operation does not have an identity");
  }
  using cpu::Reduction;
  Reduction kind = ord == 0                     ? Reduction::Norm0
                   : ord == 1                   ? Reduction::Norm1
                   : ord == 2                   ? Reduction::Norm2
                   : std::isinf(ord) && ord > 0 ? Reduction::NormInf
                   : std::isinf(ord)            ? Reduction::NormNegInf
                                                : Reduction::NormP;
  Tensor r = run_reduce(x, mask, dt, kind, "linalg.vector_norm", ord);
  r = keep_shape(r, x, mask, keepdim);
  if (auto n = make_node<LambdaBackward>(x))
    n->record("LinalgVectorNormBackward0", {r}, {x}, {r},
              [mask, keepdim, nd = x.dim(), ord](const TensorList& g, const TensorList& s) -> TensorList {
                return {vector_norm_backward(grad_keep(g[0], mask, keepdim, nd), s[0],
                                             grad_keep(s[1], mask, keepdim, nd), ord, mask)};
              });
  return r;
}

namespace {
std::pair<int64_t, int64_t> matrix_dims(const Tensor& t, IntArrayRef dims) {
  EMBER_CHECK(t.dim() >= 2, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
  if (dims.size() != 2) {
    std::ostringstream ss;
    for (size_t i = 0; i < dims.size(); ++i) ss << (i ? " " : "") << dims[i];
    throw Error("linalg.matrix_norm: dim must be a 2-tuple. Got " + ss.str());
  }
  int64_t d0 = wrap_dim(dims[0], t.dim()), d1 = wrap_dim(dims[1], t.dim());
  EMBER_CHECK(d0 != d1, "linalg.matrix_norm: dims must be different. Got (", dims[0], ", ", dims[1], ")");
  return {d0, d1};
}
}  // namespace

Tensor matrix_norm(const Tensor& t, const std::string& ord, IntArrayRef dims, bool keepdim,
                   std::optional<ScalarType> dtype) {
  auto [d0, d1] = matrix_dims(t, dims);
  norm_input_dtype(t, dtype, "linalg.matrix_norm");
  if (ord == "fro") return vector_norm(t, 2, std::vector<int64_t>{d0, d1}, keepdim, dtype);
  EMBER_CHECK(ord == "nuc", "linalg.matrix_norm: Order ", ord, " not supported.");
  // The sum of the singular values (ops/lapack.cpp).
  return linalg_norm(to_dtype(t, dtype.value_or(t.dtype())), std::nullopt, "nuc", std::vector<int64_t>{d0, d1},
                     keepdim);
}

Tensor matrix_norm(const Tensor& t, double ord, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  auto [d0, d1] = matrix_dims(t, dims);
  ScalarType dt = norm_input_dtype(t, dtype, "linalg.matrix_norm");
  if (std::fabs(ord) == 2)  // largest/smallest singular value (ops/lapack.cpp)
    return linalg_norm(to_dtype(t, dt), ord, "", std::vector<int64_t>{d0, d1}, keepdim);
  EMBER_CHECK(std::fabs(ord) == 1 || std::isinf(ord), "linalg.matrix_norm: Order ", ord_str(ord), " not supported.");
  // ord +-1: the largest/smallest column sum of |A|; ord +-inf: the same over rows.
  Tensor a = ember::abs(to_dtype(t, dt));
  int64_t sum_dim = std::isinf(ord) ? d1 : d0, ext_dim = std::isinf(ord) ? d0 : d1;
  Tensor s = sum(a, std::vector<int64_t>{sum_dim}, /*keepdim=*/true);
  Tensor r = ord > 0 ? amax(s, std::vector<int64_t>{ext_dim}, true) : amin(s, std::vector<int64_t>{ext_dim}, true);
  if (keepdim) return r;
  Shape squeezed;
  for (int64_t d = 0; d < r.dim(); ++d)
    if (d != d0 && d != d1) squeezed.push_back(r.sizes()[d]);
  return reshape(r, squeezed);
}

Tensor norm(const Tensor& t, double p, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  return vector_norm(t, p, dims, keepdim, dtype);
}

Tensor norm(const Tensor& t, const std::string& p, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  if (p == "fro") {
    if (!dims || dims->size() <= 1) return vector_norm(t, 2, dims, keepdim, dtype);
    return matrix_norm(t, "fro", *dims, keepdim, dtype);
  }
  if (p == "nuc") return matrix_norm(t, "nuc", dims ? IntArrayRef(*dims) : IntArrayRef({-2, -1}), keepdim, dtype);
  throw Error("norm(): p must be a number, 'fro' or 'nuc', got '" + p + "'");
}

// ---- logsumexp ----

Tensor logsumexp(const Tensor& t, OptDims dims, bool keepdim) {
  if (is_complex(t.dtype())) {
    // Shifted by the largest real part (a constant; infinite ones shift by 0), then composed from
    // exp/sum/log, whose complex gradients give the softmax-weighted one.
    Mask mask = reduce_mask(t, dims);
    std::vector<int64_t> ds = mask_dims(mask, t.dim());
    Tensor m;
    {
      autograd::NoGradGuard ng;
      m = t.numel() == 0 ? zeros(reduced_shape(t, mask, true), to_real(t.dtype()))
                         : amax(real(t), ds, /*keepdim=*/true);
      m = where(eq(ember::abs(m), num(std::numeric_limits<double>::infinity())), num(0.0), m);
    }
    Tensor r = ember::log(sum(ember::exp(sub(t, m)), ds, keepdim));
    return add(r, keepdim ? m : reshape(m, reduced_shape(t, mask, false)));
  }
  Tensor x = is_floating_point(t.dtype()) ? t : to_dtype(t, default_dtype());
  Mask mask = reduce_mask(x, dims);
  Tensor r = empty(reduced_shape(x, mask, false), x.dtype());
  if (r.numel() > 0) {
    Layout l = reduce_layout(x, mask);
    cpu::logsumexp_kernel(l.x, r, l.outer, l.R, l.inner);
  }
  r = keep_shape(r, x, mask, keepdim);
  if (auto n = make_node<LambdaBackward>(x))
    n->record("LogsumexpBackward0", {r}, {x}, {r},
              [mask, keepdim, nd = x.dim()](const TensorList& g, const TensorList& s) -> TensorList {
                Tensor rk = grad_keep(s[1], mask, keepdim, nd);
                return {mul(grad_keep(g[0], mask, keepdim, nd), ember::exp(sub(s[0], rk)))};
              });
  return r;
}

}  // namespace ember
