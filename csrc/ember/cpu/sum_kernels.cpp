// Compiled once per ISA level (Note [Multi-ISA kernels] in isa.h).
#include "ember/cpu/sum_kernels.h"

#include <algorithm>
#include <vector>

#include "ember/cpu/isa_begin.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/scan_rows.h"
#include "ember/cpu/vec_math.h"

namespace ember::cpu {
namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

// Sum of n contiguous values with 8 independent accumulators (vectorizes, and is more accurate
// than one running sum).
template <typename T, typename A>
A sum_contiguous(const T* p, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    // 32 float lanes over blocks of 2048 values (each lane adds 64), block totals in double:
    // vector speed with an error no worse than torch's cascade sum.
    // (lanes added pairwise: short rows, such as global pooling's 49 or 64 values per plane, are
    // bound by the latency of these last adds)
    auto lanes_sum = [](vf8 s) {
      return ((double(s[0]) + double(s[1])) + (double(s[2]) + double(s[3]))) +
             ((double(s[4]) + double(s[5])) + (double(s[6]) + double(s[7])));
    };
    double total = 0;
    int64_t k = 0;
    vf8 last = splat(0.0f);  // the last block's lanes, which the final 8..31 values join
    while (k + 32 <= n) {
      int64_t end = k + std::min<int64_t>(2048, (n - k) / 32 * 32);
      vf8 a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
      for (; k < end; k += 32) {
        a0 += load8(p + k);
        a1 += load8(p + k + 8);
        a2 += load8(p + k + 16);
        a3 += load8(p + k + 24);
      }
      const vf8 block = (a0 + a1) + (a2 + a3);
      if (k + 32 <= n)
        total += lanes_sum(block);
      else
        last = block;
    }
    // at most 3 more adds per lane; one fold to double per row (two made a 7x7 pooling plane's
    // 49 values take 1.8x torch's time)
    for (; k + 8 <= n; k += 8) last += load8(p + k);
    total += lanes_sum(last);
    double tail = 0;
    for (; k < n; ++k) tail += p[k];
    return static_cast<A>(total + tail);
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    // converted to float a block at a time (exactly), then summed as float (Note [Half in float
    // blocks]): a double add per element ran at 10x torch's time
    float block[2048];
    double total = 0;
    for (int64_t k = 0; k < n; k += 2048) {
      const int64_t len = std::min<int64_t>(2048, n - k);
      row_to_float(p + k, block, len);
      total += sum_contiguous<float, double>(block, len);
    }
    return static_cast<A>(total);
  }
  A acc[8] = {};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) acc[j] += static_cast<A>(load_as<opmath_t<T>>(p + k + j));
  for (; k < n; ++k) acc[0] += static_cast<A>(load_as<opmath_t<T>>(p + k));
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// acc[j] += sum of rows r0..r1 of column j (j < len), rows `stride` apart. Float columns go 64 at
// a time through eight 8-float register accumulators, each adding at most 64 rows before its
// block total joins the double sum: the blocking of sum_contiguous, so vector speed with the same
// error bound (a double per element ran at half the width with a load and store of acc per row:
// a bias gradient over 2048 rows of 256 took 1.7x torch's time). 16-bit rows take the same path
// through a float copy of each 64-column piece (converted one element at a time into double sums,
// a float16 sum over dim 0 took 3.2x torch's time). Other types, and the columns past the last
// multiple of 64, add each element in A.
template <typename T, typename A>
void add_column_sums(const T* base, int64_t stride, int64_t r0, int64_t r1, int64_t len, A* acc) {
  int64_t j0 = 0;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    constexpr int64_t kRows = 64, kCols = 64;
    float piece[kCols];
    for (; j0 + kCols <= len; j0 += kCols)
      for (int64_t rb = r0; rb < r1; rb += kRows) {
        vf8 a[8];
        for (auto& v : a) v = splat(0.0f);
        for (int64_t r = rb, re = std::min(r1, rb + kRows); r < re; ++r) {
          const float* row;
          if constexpr (std::is_same_v<T, float>) {
            row = base + r * stride + j0;
          } else {
            row_to_float(base + r * stride + j0, piece, kCols);
            row = piece;
          }
          for (int u = 0; u < 8; ++u) a[u] += load8(row + u * kVecF);
        }
        for (int u = 0; u < 8; ++u)
          for (int l = 0; l < kVecF; ++l) acc[j0 + u * kVecF + l] += static_cast<A>(a[u][l]);
      }
  }
  for (int64_t r = r0; r < r1; ++r) {
    const T* row = base + r * stride;
    for (int64_t j = j0; j < len; ++j) acc[j] += static_cast<A>(load_as<opmath_t<T>>(row + j));
  }
}

// x: contiguous (outer, R, inner) in type T; returns contiguous (outer, inner) in type O.
template <typename T, typename O>
void sum_block(const T* x, O* out, int64_t outer, int64_t R, int64_t inner) {
  using A = acc_t<T>;
  if (inner == 1) {
    // Parallel over output rows; long rows in fixed pieces (Note [Long-row reductions]).
    if (R > kLongRow) {
      reduce_long_rows(
          outer, R, A(0),
          [&](int64_t o, int64_t lo, int64_t hi) { return sum_contiguous<T, A>(x + o * R + lo, hi - lo); },
          [](A a, A b) { return a + b; }, [&](int64_t o, A total) { out[o] = static_cast<O>(total); });
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
  // Few tiles (a bias gradient: sum over 2048 rows of 768) would leave threads idle: the rows are
  // also cut into chunks, summed in parallel and then in chunk order. Chunks depend on the shape
  // only, so the result is the same for any thread count (Note [Determinism on CPU]).
  if (outer * tiles < 16 && R >= 512) {
    const int64_t rows = std::max<int64_t>(256, (R + 31) / 32), chunks = (R + rows - 1) / rows;
    std::vector<A> part(static_cast<size_t>(outer * chunks * inner));
    parallel_for(0, outer * tiles * chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        int64_t c = w % chunks, t = (w / chunks) % tiles, o = w / (chunks * tiles);
        int64_t j0 = t * kTile, len = std::min(kTile, inner - j0), r0 = c * rows, r1 = std::min(R, r0 + rows);
        add_column_sums(x + o * R * inner + j0, inner, r0, r1, len, part.data() + (o * chunks + c) * inner + j0);
      }
    });
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j) {
        A total = 0;
        for (int64_t c = 0; c < chunks; ++c) total += part[(o * chunks + c) * inner + j];
        out[o * inner + j] = static_cast<O>(total);
      }
    return;
  }
  parallel_for(0, outer * tiles, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * kTile, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<A> acc(kTile);
                 for (int64_t w = b; w < e; ++w) {
                   int64_t o = w / tiles, j0 = (w % tiles) * kTile, len = std::min(kTile, inner - j0);
                   std::fill(acc.begin(), acc.begin() + len, A(0));
                   add_column_sums(x + o * R * inner + j0, inner, 0, R, len, acc.data());
                   O* dst = out + o * inner + j0;
                   for (int64_t j = 0; j < len; ++j) dst[j] = static_cast<O>(acc[j]);
                 }
               });
}

// cumsum/cumprod of contiguous 16-bit rows: as scan_rows (double running values, two rows side by
// side, each row in order; the same values), but each piece of a row is converted to floats and
// back in vector code (a Half converted one at a time made float16 cumsum 2.6x torch's time).
template <typename T, typename F>
void scan_16bit_rows(const T* x, T* y, int64_t outer, int64_t R, double init, const F& f) {
  constexpr int64_t kPiece = 256;
  if (outer == 0 || R == 0) return;  // (an empty scanned dim: nothing to write, and no grain of 1 / 0)
  parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
    float in0[kPiece], in1[kPiece], out0[kPiece], out1[kPiece];
    int64_t o = b;
    for (; o + 2 <= e; o += 2) {
      double a0 = init, a1 = init;
      for (int64_t k = 0; k < R; k += kPiece) {
        const int64_t len = std::min(kPiece, R - k);
        row_to_float(x + o * R + k, in0, len);
        row_to_float(x + (o + 1) * R + k, in1, len);
        for (int64_t j = 0; j < len; ++j) {
          a0 = f(a0, in0[j]);
          a1 = f(a1, in1[j]);
          out0[j] = static_cast<float>(a0);
          out1[j] = static_cast<float>(a1);
        }
        row_from_float(out0, y + o * R + k, len);
        row_from_float(out1, y + (o + 1) * R + k, len);
      }
    }
    for (; o < e; ++o) {
      double a = init;
      for (int64_t k = 0; k < R; k += kPiece) {
        const int64_t len = std::min(kPiece, R - k);
        row_to_float(x + o * R + k, in0, len);
        for (int64_t j = 0; j < len; ++j) out0[j] = static_cast<float>(a = f(a, in0[j]));
        row_from_float(out0, y + o * R + k, len);
      }
    }
  });
}

}  // namespace

void EMBER_ISA_KERNEL(sum_kernel)(const Tensor& src, Tensor& dst, int64_t outer, int64_t R, int64_t inner) {
  EMBER_DISPATCH_ALL(src.dtype(), "sum", [&] {
    using T = scalar_t;
    EMBER_DISPATCH_NUMERIC(dst.dtype(), "sum",
                           [&] { sum_block<T, scalar_t>(src.data<T>(), dst.data<scalar_t>(), outer, R, inner); });
  });
}

void EMBER_ISA_KERNEL(scan_float_kernel)(bool prod, const Tensor& x, Tensor& y, int64_t outer, int64_t R,
                                         int64_t inner) {
  EMBER_DISPATCH_FLOAT(x.dtype(), "cumsum", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;  // float for the 16-bit types
    if constexpr (!std::is_same_v<T, M>) {
      if (inner == 1) {  // 16-bit rows: pieces converted by the vector paths of loops.h
        if (prod)
          scan_16bit_rows(x.data<T>(), y.data<T>(), outer, R, 1.0, [](double acc, float v) { return acc * v; });
        else
          scan_16bit_rows(x.data<T>(), y.data<T>(), outer, R, 0.0, [](double acc, float v) { return acc + v; });
        return;
      }
    }
    if (prod)
      scan_rows(x.data<T>(), y.data<T>(), outer, R, inner, 1.0,
                [](double acc, T v) { return acc * static_cast<double>(static_cast<M>(v)); });
    else
      scan_rows(x.data<T>(), y.data<T>(), outer, R, inner, 0.0,
                [](double acc, T v) { return acc + static_cast<double>(static_cast<M>(v)); });
  });
}

}  // namespace ember::cpu
#include "ember/cpu/isa_end.h"
