// Scans along one dim: cumsum, cumprod, cummax, cummin, logcumsumexp. The input is read as
// (outer, R, inner) (Note [Reduction layout]): contiguous rows scan one after another, otherwise
// a tile of `inner` running values advances together over R.
#include <cmath>
#include <complex>
#include <limits>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/scan_rows.h"
#include "ember/cpu/sum_kernels.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::SavedVariable;
using autograd::TensorList;
using reduce_detail::num;

template <typename T>
using wide_t = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

ScalarType scan_dtype(const Tensor& t, std::optional<ScalarType> dtype) {
  return dtype ? *dtype : (is_integral(t.dtype(), true) ? ScalarType::Int64 : t.dtype());
}

// Reverse cumulative sum along dim (the adjoint of cumsum).
Tensor reverse_cumsum(const Tensor& g, int64_t dim) { return flip(cumsum(flip(g, {dim}), dim), {dim}); }

template <bool Prod>
Tensor cum_arith(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype, const char* name) {
  ScalarType out_dtype = scan_dtype(t, dtype);
  if (out_dtype == ScalarType::Bool) EMBER_NOT_IMPLEMENTED("\"", name, "_cpu\" not implemented for 'Bool'");
  Tensor x = dtype ? to_dtype(t, *dtype) : t;
  dim = wrap_dim(dim, x.dim());
  Tensor y = empty(x.sizes(), out_dtype);
  {
    autograd::NoGradGuard raw;
    auto l = reduce_detail::dim_layout(x, dim);
    if (is_complex(x.dtype())) {  // out_dtype == x.dtype() here; accumulate in complex<double>
      using C = std::complex<double>;
      EMBER_DISPATCH_COMPLEX(x.dtype(), name, [&] {
        using T = scalar_t;
        scan_rows(l.x.data<T>(), y.data<T>(), l.outer, l.R, l.inner, C(Prod ? 1 : 0, 0), [](C acc, T v) {
          double vr = v.real(), vi = v.imag();
          if (Prod) return C(acc.real() * vr - acc.imag() * vi, acc.real() * vi + acc.imag() * vr);
          return C(acc.real() + vr, acc.imag() + vi);
        });
      });
    } else if (is_floating_point(x.dtype()) && out_dtype == x.dtype()) {
      cpu::scan_float_kernel(Prod, l.x, y, l.outer, l.R, l.inner);  // the same loop at the vector ISA levels
    } else
      EMBER_DISPATCH_ALL(x.dtype(), name, [&] {
        using T = scalar_t;
        EMBER_DISPATCH_ALL(out_dtype, name, [&] {
          using A = wide_t<opmath_t<T>>;
          scan_rows(l.x.data<T>(), y.data<scalar_t>(), l.outer, l.R, l.inner, A(Prod ? 1 : 0), [](A acc, T v) {
            A a = static_cast<A>(static_cast<opmath_t<T>>(v));
            if constexpr (std::is_integral_v<A>)  // wraps like torch's int64 arithmetic, without UB
              return static_cast<A>(Prod ? static_cast<uint64_t>(acc) * static_cast<uint64_t>(a)
                                         : static_cast<uint64_t>(acc) + static_cast<uint64_t>(a));
            else
              return Prod ? acc * a : acc + a;
          });
        });
      });
  }
  if (auto n = autograd::make_node<LambdaBackward>(x)) {
    n->name_ = Prod ? "CumprodBackward0" : "CumsumBackward0";
    autograd::set_history(y, n);
    if (!Prod) {
      n->fn = [dim](const TensorList& g, const TensorList&) -> TensorList {
        return {g[0].dim() == 0 ? g[0] : reverse_cumsum(g[0], dim)};
      };
      return y;
    }
    n->saved = {SavedVariable(x, false), SavedVariable(y, true)};
    n->fn = [dim](const TensorList& g, const TensorList& s) -> TensorList {
      // Complex: the same formulas on conj(x), conj(y) (torch's conjugate convention).
      bool cplx = is_complex(s[0].dtype());
      const Tensor x = cplx ? conj(s[0]) : s[0], y = cplx ? conj(s[1]) : s[1];
      if (x.dim() == 0) return {g[0]};
      Tensor zero = num(0.0), is_zero = eq(x, zero);
      bool any_zero;
      {
        autograd::NoGradGuard ng;
        any_zero = item(any(is_zero)).to_bool();
      }
      if (!any_zero) return {div(reverse_cumsum(mul(g[0], y), dim), x)};
      // Let z be the first zero of a slice. Before z the usual formula holds (later outputs are
      // 0); at z the gradient is prod(x before z) * sum_{i >= z} g_i prod(x in (z, i]); after z
      // it is 0. Built from differentiable ops so double backward works.
      Tensor zeros_so_far, first, before, after;
      {
        autograd::NoGradGuard ng;
        zeros_so_far = cumsum(is_zero, dim);
        before = eq(zeros_so_far, num(0));
        first = mul(is_zero, eq(zeros_so_far, num(1)));
        after = mul(gt(zeros_so_far, num(0)), eq(first, num(false)));
      }
      Tensor one = num(1.0);
      Tensor x1 = where(is_zero, one, x);
      Tensor grad_before = div(reverse_cumsum(mul(g[0], y), dim), x1);
      Tensor prefix = cumprod(where(before, x, one), dim);  // prod(x before z) at z
      Tensor suffix = cumprod(where(after, x, one), dim);   // prod(x in (z, i]) at i >= z
      Tensor at_first = mul(prefix, reverse_cumsum(mul(g[0], suffix), dim));
      return {where(before, grad_before, where(first, at_first, zero))};
    };
  }
  return y;
}

template <bool Max>
TensorPair cum_extremum(const Tensor& t, int64_t dim, const char* name) {
  dim = wrap_dim(dim, t.dim());
  Tensor values = empty(t.sizes(), t.dtype()), indices = empty(t.sizes(), ScalarType::Int64);
  if (t.numel() > 0) {
    autograd::NoGradGuard raw;
    auto l = reduce_detail::dim_layout(t, dim);
    EMBER_DISPATCH_ALL(t.dtype(), name, [&] {
      using T = scalar_t;
      using M = opmath_t<T>;
      const T* x = l.x.data<T>();
      T* v = values.data<T>();
      int64_t* ix = indices.data<int64_t>();
      int64_t R = l.R, inner = l.inner;
      // Ties move the index forward; a NaN takes over and only a later NaN replaces it.
      parallel_for(0, l.outer * inner, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
        for (int64_t w = b; w < e; ++w) {
          int64_t o = w / inner, j = w % inner;
          int64_t base = o * R * inner + j;
          M best = static_cast<M>(x[base]);
          int64_t bi = 0;
          for (int64_t r = 0; r < R; ++r) {
            M cur = static_cast<M>(x[base + r * inner]);
            if ((Max ? cur >= best : cur <= best) || cur != cur) best = cur, bi = r;
            v[base + r * inner] = static_cast<T>(best);
            ix[base + r * inner] = bi;
          }
        }
      });
    });
  }
  if (auto n = autograd::make_node<LambdaBackward>(t))
    n->record(Max ? "CummaxBackward0" : "CumminBackward0", {values}, {indices}, {},
              [dim, sizes = t.sizes()](const TensorList& g, const TensorList& s) -> TensorList {
                if (sizes.empty()) return {g[0]};
                return {scatter_add(zeros(sizes, g[0].dtype()), dim, s[0], g[0])};
              });
  return {values, indices};
}

double lowest_value(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return -65504.0;
    case ScalarType::BFloat16:
      return -3.3895313892515355e38;
    case ScalarType::Float32:
      return std::numeric_limits<float>::lowest();
    default:
      return std::numeric_limits<double>::lowest();
  }
}

double log_add_exp(double a, double b) {
  if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
  double hi = std::max(a, b), lo = std::min(a, b);
  if (std::isinf(hi)) return hi;  // -inf + -inf, or anything + inf
  return hi + std::log1p(std::exp(lo - hi));
}

// Complex log(exp(a) + exp(b)), a the accumulated value. A NaN in either part of either gives
// NaN, as torch's. log1p(w) for w = exp(lo - hi) (|w| <= 1) is log|1 + w| + i arg(1 + w), with
// log|1 + w| = 0.5 log1p(Re w (Re w + 2) + (Im w)^2) for small w (its precision), else log hypot.
std::complex<double> log_add_exp(std::complex<double> a, std::complex<double> b) {
  using C = std::complex<double>;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (std::isnan(a.real()) || std::isnan(a.imag()) || std::isnan(b.real()) || std::isnan(b.imag())) return {kNaN, kNaN};
  double ar = a.real(), br = b.real();
  if (ar == br && std::isinf(ar)) {
    if (ar < 0) return a;  // both -inf: the sum of exps is 0 whatever the angles; a stays
    return std::log(std::exp(a) + std::exp(b));
  }
  C hi = ar > br ? a : b, lo = ar > br ? b : a;  // ties: b (the angle sits on the side torch puts it)
  C w = std::exp(lo - hi);
  double x = w.real(), y = w.imag();
  double log_abs = std::abs(w) < 0.5 ? 0.5 * std::log1p(x * (x + 2) + y * y) : std::log(std::hypot(1 + x, y));
  return C(log_abs, std::atan2(y, 1 + x)) + hi;
}

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return cum_arith<false>(t, dim, dtype, "cumsum");
}
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype) {
  return cum_arith<true>(t, dim, dtype, "cumprod");
}
TensorPair cummax(const Tensor& t, int64_t dim) { return cum_extremum<true>(t, dim, "cummax"); }
TensorPair cummin(const Tensor& t, int64_t dim) { return cum_extremum<false>(t, dim, "cummin"); }

Tensor logcumsumexp(const Tensor& t, int64_t dim) {
  if (!is_floating_point(t.dtype()) && !is_complex(t.dtype()))
    EMBER_NOT_IMPLEMENTED("\"logcumsumexp_out_cpu\" not implemented for '", dtype_name(t.dtype()), "'");
  dim = wrap_dim(dim, t.dim());
  Tensor y = empty(t.sizes(), t.dtype());
  {
    autograd::NoGradGuard raw;
    auto l = reduce_detail::dim_layout(t, dim);
    constexpr double kNegInf = -std::numeric_limits<double>::infinity();
    if (is_complex(t.dtype())) {
      using C = std::complex<double>;
      EMBER_DISPATCH_COMPLEX(t.dtype(), "logcumsumexp", [&] {
        using T = scalar_t;
        scan_rows(l.x.data<T>(), y.data<T>(), l.outer, l.R, l.inner, C(kNegInf, 0),
                  [](C acc, T v) { return log_add_exp(acc, C(v.real(), v.imag())); });
      });
    } else
      EMBER_DISPATCH_FLOAT(t.dtype(), "logcumsumexp", [&] {
        using T = scalar_t;
        scan_rows(l.x.data<T>(), y.data<T>(), l.outer, l.R, l.inner, kNegInf,
                  [](double acc, T v) { return log_add_exp(acc, static_cast<double>(static_cast<opmath_t<T>>(v))); });
      });
  }
  if (auto n = autograd::make_node<LambdaBackward>(t)) {
    n->record("LogcumsumexpBackward0", {y}, {t}, {y}, [dim](const TensorList& g, const TensorList& s) -> TensorList {
      const Tensor &x = s[0], &y = s[1];
      if (x.dim() == 0) return {g[0]};
      if (is_complex(x.dtype())) {
        // grad_k = sum_{i >= k} g_i conj(exp(x_k - y_i)) = exp(conj(x_k)) sum_{i >= k} exp(log g_i - conj(y_i)),
        // the sum in log space by a reversed logcumsumexp (complex logs need no sign split). log 0
        // is the lowest finite real: -inf would put NaN into the double backward.
        Tensor nz = ne(g[0], num(0.0));
        Tensor log_zero = full({}, lowest_value(to_real(x.dtype())), x.dtype());
        Tensor log_g = where(nz, ember::log(where(nz, g[0], num(1.0))), log_zero);
        Tensor rev = flip(logcumsumexp(flip(sub(log_g, conj(y)), {dim}), dim), {dim});
        return {ember::exp(add(conj(x), rev))};
      }
      // grad_k = sum_{i >= k} g_i exp(x_k - y_i), summed in log space separately for the positive
      // and negative parts of g so that nothing overflows. log(0) is the dtype's lowest finite
      // value rather than -inf: -inf - -inf would put NaN into the double backward.
      Tensor one = num(1.0);
      Tensor log_zero = full({}, lowest_value(x.dtype()), x.dtype());
      auto part = [&](const Tensor& w) {  // w >= 0
        Tensor log_w = where(gt(w, num(0.0)), ember::log(where(gt(w, num(0.0)), w, one)), log_zero);
        Tensor rev = flip(logcumsumexp(flip(sub(log_w, y), {dim}), dim), {dim});
        return ember::exp(add(x, rev));
      };
      Tensor gp = where(gt(g[0], num(0.0)), g[0], num(0.0));
      Tensor gn = where(lt(g[0], num(0.0)), neg(g[0]), num(0.0));
      return {sub(part(gp), part(gn))};
    });
  }
  return y;
}

}  // namespace ember
