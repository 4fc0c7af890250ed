// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/reductions.h"

#include <cmath>
#include <complex>
#include <limits>

#include "ember/cpu/isa_begin.h"
#include "ember/cpu/reduce_kernels.h"
#include "ember/cpu/vec_math.h"

namespace ember::cpu {
namespace {

// ---- reducers (interface in reduce_kernels.h) ----

template <typename T>
using wide_t = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

// ---- reducers (interface in cpu/reduce_kernels.h) ----

template <typename T, typename O>
struct NanSumOp {
  using acc_t = double;
  vf8 vmap(vf8 v) const requires std::is_same_v<T, float> { return select(v == v, v, splat(0.0f)); }
  acc_t init() const { return 0; }
  acc_t step(acc_t a, T v) const {
    double d = static_cast<double>(static_cast<opmath_t<T>>(v));
    return d != d ? a : a + d;
  }
  acc_t merge(acc_t a, acc_t b) const { return a + b; }
  O finish(acc_t a) const { return static_cast<O>(a); }
};

// Float products accumulate in float (as torch), 8 lanes at a time; others in int64/double.
template <typename T, typename O>
struct ProdOp {
  using acc_t = std::conditional_t<std::is_same_v<T, float>, float, wide_t<T>>;
  vf8 vmerge(vf8 a, vf8 b) const requires std::is_same_v<T, float> { return a * b; }
  acc_t init() const { return 1; }
  acc_t step(acc_t a, T v) const { return merge(a, static_cast<acc_t>(static_cast<opmath_t<T>>(v))); }
  acc_t merge(acc_t a, acc_t b) const {
    if constexpr (std::is_integral_v<acc_t>)  // wraps like torch's int64 products, without UB
      return static_cast<acc_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    else
      return a * b;
  }
  O finish(acc_t a) const { return static_cast<O>(a); }
};

// Complex products in complex<double>, the product written out (std::complex's operator* takes
// the slow Annex G path and differs from torch's plain formula on infinities).
template <typename T>
struct ComplexProdOp {
  using acc_t = std::complex<double>;
  acc_t init() const { return {1.0, 0.0}; }
  acc_t step(acc_t a, T v) const { return merge(a, acc_t(v.real(), v.imag())); }
  acc_t merge(acc_t a, acc_t b) const {
    return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
  }
  T finish(acc_t a) const {
    return T(static_cast<typename T::value_type>(a.real()), static_cast<typename T::value_type>(a.imag()));
  }
};

template <typename T, typename O, bool All>
struct AllAnyOp {
  using acc_t = bool;
  acc_t init() const { return All; }
  acc_t step(acc_t a, T v) const {
    bool nz = static_cast<opmath_t<T>>(v) != opmath_t<T>(0);
    return All ? (a && nz) : (a || nz);
  }
  acc_t merge(acc_t a, acc_t b) const { return All ? (a && b) : (a || b); }
  O finish(acc_t a) const { return static_cast<O>(a); }
};

template <typename T>
struct CountNonzeroOp {
  using acc_t = int64_t;
  acc_t init() const { return 0; }
  acc_t step(acc_t a, T v) const { return a + (static_cast<opmath_t<T>>(v) != opmath_t<T>(0)); }
  acc_t merge(acc_t a, acc_t b) const { return a + b; }
  int64_t finish(acc_t a) const { return a; }
};

enum class NormKind { Zero, One, Two, Inf, NegInf, P };

template <typename T, NormKind K>
struct NormOp {
  using acc_t = double;
  double p = 2;
  vf8 vmap(vf8 v) const requires(std::is_same_v<T, float> && (K == NormKind::One || K == NormKind::Two)) {
    return K == NormKind::Two ? v * v : abs8(v);
  }
  acc_t init() const { return K == NormKind::NegInf ? std::numeric_limits<double>::infinity() : 0.0; }
  acc_t step(acc_t a, T v) const {
    double x = std::fabs(static_cast<double>(static_cast<opmath_t<T>>(v)));
    if constexpr (K == NormKind::Zero)
      return a + (x != 0);
    else if constexpr (K == NormKind::One)
      return a + x;
    else if constexpr (K == NormKind::Two)
      return a + x * x;
    else if constexpr (K == NormKind::P)
      return a + std::pow(x, p);
    else
      return merge(a, x);
  }
  acc_t merge(acc_t a, acc_t b) const {
    if constexpr (K == NormKind::Inf)
      return (a > b || a != a) ? a : b;
    else if constexpr (K == NormKind::NegInf)
      return (a < b || a != a) ? a : b;
    else
      return a + b;
  }
  T finish(acc_t a) const {
    if constexpr (K == NormKind::Two)
      return static_cast<T>(std::sqrt(a));
    else if constexpr (K == NormKind::P)
      return static_cast<T>(std::pow(a, 1.0 / p));
    else
      return static_cast<T>(a);
  }
};

// logsumexp of contiguous (outer, R, inner): max, then log(sum(exp(x - max))) + max, with an
// infinite max shifted by 0 instead (so all -inf gives -inf and +inf gives +inf).
template <typename T>
void logsumexp_rows(const T* x, T* out, int64_t outer, int64_t R, int64_t inner) {
  using M = opmath_t<T>;
  auto shift_of = [](M m) { return std::isinf(m) ? M(0) : m; };
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* row = x + o * R;
        M m = reduce_contiguous(row, R, ExtremumOp<T, true>{});
        M sh = shift_of(m);
        double s = 0;
        int64_t k = 0;
        if constexpr (std::is_same_v<T, float>) {
          vf8 acc = splat(0.0f);
          for (; k + 8 <= R; k += 8) acc += exp8(load8(row + k) - sh);
          for (int j = 0; j < kVecF; ++j) s += acc[j];
        }
        for (; k < R; ++k) s += std::exp(static_cast<double>(static_cast<M>(row[k]) - sh));
        out[o] = m != m ? static_cast<T>(m) : static_cast<T>(std::log(s) + sh);
      }
    });
    return;
  }
  constexpr int64_t kTile = 256;
  int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * kTile, 1)),
               [&](int64_t b, int64_t e) {
                 M m[kTile];
                 double s[kTile];
                 ExtremumOp<T, true> mx;
                 for (int64_t w = b; w < e; ++w) {
                   int64_t o = w / tiles, j0 = (w % tiles) * kTile, len = std::min(kTile, inner - j0);
                   const T* base = x + o * R * inner + j0;
                   for (int64_t j = 0; j < len; ++j) m[j] = mx.init(), s[j] = 0;
                   for (int64_t r = 0; r < R; ++r)
                     for (int64_t j = 0; j < len; ++j) m[j] = mx.step(m[j], base[r * inner + j]);
                   for (int64_t r = 0; r < R; ++r)
                     for (int64_t j = 0; j < len; ++j)
                       s[j] += std::exp(static_cast<double>(static_cast<M>(base[r * inner + j]) - shift_of(m[j])));
                   T* dst = out + o * inner + j0;
                   for (int64_t j = 0; j < len; ++j)
                     dst[j] = m[j] != m[j] ? static_cast<T>(m[j]) : static_cast<T>(std::log(s[j]) + shift_of(m[j]));
                 }
               });
}

template <typename T, typename O, typename Op>
void rows(const Tensor& x, Tensor& out, int64_t outer, int64_t R, int64_t inner, const Op& op) {
  reduce_rows(x.data<T>(), out.data<O>(), outer, R, inner, op);
}

template <NormKind K>
void norm_rows(const Tensor& x, Tensor& out, int64_t outer, int64_t R, int64_t inner, double p, const char* name) {
  EMBER_DISPATCH_ALL(x.dtype(), name, [&] {
    NormOp<scalar_t, K> op;
    op.p = p;
    rows<scalar_t, scalar_t>(x, out, outer, R, inner, op);
  });
}

}  // namespace

void EMBER_ISA_KERNEL(reduce_kernel)(Reduction r, const Tensor& x, Tensor& out, int64_t outer, int64_t R, int64_t inner,
                                     double p, const char* name) {
  const ScalarType dt = x.dtype();
  switch (r) {
    case Reduction::Max:
      return EMBER_DISPATCH_ALL(
          dt, name, [&] { rows<scalar_t, scalar_t>(x, out, outer, R, inner, ExtremumOp<scalar_t, true>{}); });
    case Reduction::Min:
      return EMBER_DISPATCH_ALL(
          dt, name, [&] { rows<scalar_t, scalar_t>(x, out, outer, R, inner, ExtremumOp<scalar_t, false>{}); });
    case Reduction::NanSum:
      return EMBER_DISPATCH_ALL(
          dt, name, [&] { rows<scalar_t, scalar_t>(x, out, outer, R, inner, NanSumOp<scalar_t, scalar_t>{}); });
    case Reduction::Prod:
      if (is_complex(dt))
        return EMBER_DISPATCH_COMPLEX(
            dt, name, [&] { rows<scalar_t, scalar_t>(x, out, outer, R, inner, ComplexProdOp<scalar_t>{}); });
      if (out.dtype() == dt)
        return EMBER_DISPATCH_ALL(
            dt, name, [&] { rows<scalar_t, scalar_t>(x, out, outer, R, inner, ProdOp<scalar_t, scalar_t>{}); });
      EMBER_CHECK(out.dtype() == ScalarType::Int64, name, ": unexpected output dtype ", dtype_name(out.dtype()));
      return EMBER_DISPATCH_INTEGRAL(
          dt, name, [&] { rows<scalar_t, int64_t>(x, out, outer, R, inner, ProdOp<scalar_t, int64_t>{}); });
    case Reduction::All:
      return EMBER_DISPATCH_ALL(
          dt, name, [&] { rows<scalar_t, bool>(x, out, outer, R, inner, AllAnyOp<scalar_t, bool, true>{}); });
    case Reduction::Any:
      return EMBER_DISPATCH_ALL(
          dt, name, [&] { rows<scalar_t, bool>(x, out, outer, R, inner, AllAnyOp<scalar_t, bool, false>{}); });
    case Reduction::CountNonzero:
      return EMBER_DISPATCH_ALL(dt, name,
                                [&] { rows<scalar_t, int64_t>(x, out, outer, R, inner, CountNonzeroOp<scalar_t>{}); });
    case Reduction::Norm0:
      return norm_rows<NormKind::Zero>(x, out, outer, R, inner, p, name);
    case Reduction::Norm1:
      return norm_rows<NormKind::One>(x, out, outer, R, inner, p, name);
    case Reduction::Norm2:
      return norm_rows<NormKind::Two>(x, out, outer, R, inner, p, name);
    case Reduction::NormInf:
      return norm_rows<NormKind::Inf>(x, out, outer, R, inner, p, name);
    case Reduction::NormNegInf:
      return norm_rows<NormKind::NegInf>(x, out, outer, R, inner, p, name);
    case Reduction::NormP:
      return norm_rows<NormKind::P>(x, out, outer, R, inner, p, name);
  }
}

void EMBER_ISA_KERNEL(arg_reduce_kernel)(bool max, const Tensor& x, Tensor& values, Tensor& indices, int64_t outer,
                                         int64_t R, int64_t inner, const char* name) {
  EMBER_DISPATCH_ALL(x.dtype(), name, [&] {
    using M = opmath_t<scalar_t>;
    scalar_t* v = values.defined() ? values.data<scalar_t>() : nullptr;
    if (max)
      arg_reduce_rows<scalar_t, M>(x.data<scalar_t>(), v, indices.data<int64_t>(), outer, R, inner,
                                   [](M a, M best) { return a > best; });
    else
      arg_reduce_rows<scalar_t, M>(x.data<scalar_t>(), v, indices.data<int64_t>(), outer, R, inner,
                                   [](M a, M best) { return a < best; });
  });
}

void EMBER_ISA_KERNEL(logsumexp_kernel)(const Tensor& x, Tensor& out, int64_t outer, int64_t R, int64_t inner) {
  EMBER_DISPATCH_FLOAT(x.dtype(), "logsumexp",
                       [&] { logsumexp_rows(x.data<scalar_t>(), out.data<scalar_t>(), outer, R, inner); });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
