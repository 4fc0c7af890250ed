// Reductions. Note [Reduction layout]: the input is made contiguous and each run of adjacent
// reduced dims is viewed as (outer, R, inner); inner == 1 sums contiguous rows, otherwise rows
// of length `inner` are accumulated (vectorized across inner). Runs are reduced last to first.
#include <algorithm>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/vec_math.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"

namespace ember {
namespace {
using reduce_detail::reduce_mask;
using reduce_detail::reduced_shape;

template <typename T>
using acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

// Sum of n contiguous values with 8 independent accumulators (vectorizes, and is more accurate
// than one running sum).
template <typename T, typename A>
A sum_contiguous(const T* p, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    // 32 float lanes over blocks of 2048 values (each lane adds 64), block totals in double:
    // vector speed with an error no worse than torch's cascade sum.
    double total = 0;
    int64_t k = 0;
    while (k + 32 <= n) {
      int64_t end = k + std::min<int64_t>(2048, (n - k) / 32 * 32);
      cpu::vf8 a0 = cpu::splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
      for (; k < end; k += 32) {
        a0 += cpu::load8(p + k);
        a1 += cpu::load8(p + k + 8);
        a2 += cpu::load8(p + k + 16);
        a3 += cpu::load8(p + k + 24);
      }
      cpu::vf8 s = (a0 + a1) + (a2 + a3);
      for (int j = 0; j < cpu::kVecF; ++j) total += s[j];
    }
    for (; k < n; ++k) total += p[k];
    return static_cast<A>(total);
  }
  A acc[8] = {};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) acc[j] += static_cast<A>(static_cast<opmath_t<T>>(p[k + j]));
  for (; k < n; ++k) acc[0] += static_cast<A>(static_cast<opmath_t<T>>(p[k]));
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// x: contiguous (outer, R, inner) in type T; returns contiguous (outer, inner) in type O.
template <typename T, typename O>
void sum_block(const T* x, O* out, int64_t outer, int64_t R, int64_t inner) {
  using A = acc_t<T>;
  if (inner == 1) {
    // Parallel over output rows; a single long row splits into per-thread partial sums.
    if (outer == 1 && R > 4 * kGrainSize) {
      int nt = get_num_threads();
      std::vector<A> part(nt, A(0));
      int64_t chunk = (R + nt - 1) / nt;
      parallel_for(0, nt, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          int64_t lo = t * chunk, hi = std::min(R, lo + chunk);
          if (lo < hi) part[t] = sum_contiguous<T, A>(x + lo, hi - lo);
        }
      });
      A total = 0;
      for (A v : part) total += v;
      out[0] = static_cast<O>(total);
      return;
    }
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) out[o] = static_cast<O>(sum_contiguous<T, A>(x + o * R, R));
    });
    return;
  }
  // Accumulate R rows of length `inner` for each outer index; parallel over (outer, inner tiles).
  constexpr int64_t kTile = 1024;
  int64_t tiles = (inner + kTile - 1) / kTile;
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * kTile, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<A> acc(kTile);
                 for (int64_t w = b; w < e; ++w) {
                   int64_t o = w / tiles, j0 = (w % tiles) * kTile, len = std::min(kTile, inner - j0);
                   std::fill(acc.begin(), acc.begin() + len, A(0));
                   const T* base = x + o * R * inner + j0;
                   for (int64_t r = 0; r < R; ++r) {
                     const T* row = base + r * inner;
                     for (int64_t j = 0; j < len; ++j) acc[j] += static_cast<A>(static_cast<opmath_t<T>>(row[j]));
                   }
                   O* dst = out + o * inner + j0;
                   for (int64_t j = 0; j < len; ++j) dst[j] = static_cast<O>(acc[j]);
                 }
               });
}

// Sums `x` over the masked dims into dtype `out_dtype`, contiguous, with keepdim shape.
Tensor sum_impl(const Tensor& x_in, const std::vector<bool>& mask, ScalarType out_dtype) {
  Tensor x = contiguous(x_in);
  Shape cur = x.sizes();
  if (x.dim() == 0) return to_dtype(x, out_dtype, true);
  // Runs of reduced dims, last to first.
  Tensor src = x;
  for (int64_t d = x.dim() - 1; d >= 0;) {
    if (!mask[d]) {
      --d;
      continue;
    }
    int64_t hi = d;
    while (d >= 0 && mask[d]) --d;
    int64_t lo = d + 1;
    int64_t outer = 1, R = 1, inner = 1;
    for (int64_t i = 0; i < lo; ++i) outer *= cur[i];
    for (int64_t i = lo; i <= hi; ++i) R *= cur[i];
    for (int64_t i = hi + 1; i < static_cast<int64_t>(cur.size()); ++i) inner *= cur[i];
    Shape next = cur;
    for (int64_t i = lo; i <= hi; ++i) next[i] = 1;
    // Intermediate results keep full precision for floats; the last one gets out_dtype.
    bool last = true;
    for (int64_t i = 0; i < lo; ++i) last = last && !mask[i];
    ScalarType step_dtype = last ? out_dtype : (is_floating_point(out_dtype) ? ScalarType::Float64 : ScalarType::Int64);
    Tensor dst = empty(next, step_dtype);
    EMBER_DISPATCH_ALL(src.dtype(), "sum", [&] {
      using T = scalar_t;
      EMBER_DISPATCH_NUMERIC(step_dtype, "sum",
                             [&] { sum_block<T, scalar_t>(src.data<T>(), dst.data<scalar_t>(), outer, R, inner); });
    });
    src = dst;
    cur = next;
  }
  return src;
}

}  // namespace

Tensor sum(const Tensor& t, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType out_dtype = dtype ? *dtype : (is_integral(t.dtype(), true) ? ScalarType::Int64 : t.dtype());
  auto mask = reduce_mask(t, dims);
  Shape shape = reduced_shape(t, mask, keepdim);
  Tensor x = dtype && *dtype != t.dtype() ? to_dtype(t, *dtype) : t;
  Tensor r;
  {
    autograd::NoGradGuard raw;  // the internal reshape is not part of the history
    if (t.numel() == 0) {
      r = zeros(shape, out_dtype);
    } else if (is_complex(out_dtype) && x.dim() == 0) {
      r = to_dtype(x, out_dtype, true);
    } else if (is_complex(out_dtype)) {  // sums of the (..., 2) real pairs
      std::vector<bool> m2 = mask;
      m2.push_back(false);
      Tensor parts = sum_impl(view_as_real(to_dtype(x, out_dtype)), m2, to_real(out_dtype));
      r = reshape(view_as_complex(parts), shape);
    } else {
      r = reshape(sum_impl(x, mask, out_dtype), shape);
    }
  }
  if (auto n = autograd::make_node<autograd::SumBackward1>(x)) {
    n->self_sizes = x.sizes();
    n->keepdim = keepdim;
    if (dims && !dims->empty())
      for (int64_t d : *dims) n->dims.push_back(wrap_dim(d, t.dim()));
    autograd::set_history(r, n);
  }
  return r;
}

Tensor mean(const Tensor& t, OptDims dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType out_dtype = dtype ? *dtype : t.dtype();
  EMBER_CHECK(is_floating_point(out_dtype) || is_complex(out_dtype),
              "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
              "Got: ",
              dtype_name(out_dtype));
  auto mask = reduce_mask(t, dims);
  int64_t count = 1;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (mask[d]) count *= t.sizes()[d];
  if (out_dtype == ScalarType::Float16 || out_dtype == ScalarType::BFloat16) {
    // Accumulate and divide in float32, round once (a float16 sum of 100 x 60000 is inf), as torch.
    Tensor s = sum(t, dims, keepdim, ScalarType::Float32);
    return to_dtype(div(s, scalar_tensor(static_cast<double>(count), std::nullopt, true)), out_dtype);
  }
  Tensor s = sum(t, dims, keepdim, out_dtype);
  return div(s, scalar_tensor(static_cast<double>(count), std::nullopt, true));
}

}  // namespace ember
