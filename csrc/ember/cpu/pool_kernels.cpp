// Pooling over independent planes, one plane per task (OpenMP over planes); windows per
// Note [Pool geometry].
#include "ember/cpu/pool_kernels.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

#include "ember/core/dispatch.h"
#include "ember/core/error.h"
#include "ember/core/parallel.h"

namespace ember::cpu {
namespace {

// The valid taps of one output position along one dim: first, first + step, ... (count of them).
struct Taps {
  int64_t first, count, step, size;  // size: the window's size counting padding (avg pools)
};

enum class Kind { Max, Avg };

inline Taps taps(const PoolGeometry& g, int dim, int64_t o, Kind kind) {
  const int64_t in = g.in[dim];
  if (g.adaptive) {
    int64_t s = (o * in) / g.out[dim], e = ((o + 1) * in + g.out[dim] - 1) / g.out[dim];
    return {s, e - s, 1, e - s};
  }
  int64_t start = o * g.stride[dim] - g.pad[dim];
  if (kind == Kind::Avg) {
    int64_t end = std::min(start + g.k[dim], in + g.pad[dim]);
    int64_t size = end - start;
    int64_t s = std::max<int64_t>(start, 0), e = std::min(end, in);
    return {s, std::max<int64_t>(e - s, 0), 1, size};
  }
  const int64_t d = g.dil[dim];
  int64_t lo = start < 0 ? (-start + d - 1) / d : 0;
  int64_t hi = start > in - 1 ? 0 : std::min(g.k[dim], (in - 1 - start) / d + 1);
  return {start + lo * d, std::max<int64_t>(hi - lo, 0), d, g.k[dim]};
}

template <typename F>
void for_each_output(const PoolGeometry& g, Kind kind, F&& f) {
  const int64_t in_l = g.in[0] * g.in[1] * g.in[2], out_l = g.out[0] * g.out[1] * g.out[2];
  int64_t work = std::max<int64_t>(1, out_l * g.k[0] * g.k[1] * g.k[2]);
  // The windows along each dim are the same for every plane: computed once.
  std::vector<Taps> t[3];
  for (int d = 0; d < 3; ++d)
    for (int64_t o = 0; o < g.out[d]; ++o) t[d].push_back(taps(g, d, o, kind));
  parallel_for(0, g.planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh) {
          int64_t yo = p * out_l + (od * g.out[1] + oh) * g.out[2];
          for (int64_t ow = 0; ow < g.out[2]; ++ow) f(p * in_l, yo + ow, t[0][od], t[1][oh], t[2][ow]);
        }
  });
}

// The common 2x2, stride 2 window over 2-d planes (no padding, no dilation): the same taps in
// the same order as max_pool_impl's general loop, without its per-output bookkeeping.
// One output row of max_pool_2x2 from input rows r0, r1 (b0: r0's offset in its plane). As
// torch's loop from -inf: a larger value or any NaN takes over (the last NaN wins), so the first
// tap always does. The selects are branch-free (random data defeats branch prediction: 4x slower),
// four outputs at a time with SSE4.1 for float.
template <typename T>
void max_pool_2x2_row(const T* r0, const T* r1, int64_t b0, int64_t iW, int64_t oW, T* yr, int64_t* ir) {
  int64_t ow = 0;
#if defined(__SSE4_1__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
    // 8 values from p as two float vectors (a bfloat16 is the high half of its float)
    auto load8 = [](const T* p, __m128& lo, __m128& hi) {
      if constexpr (std::is_same_v<T, float>) {
        lo = _mm_loadu_ps(p), hi = _mm_loadu_ps(p + 4);
      } else {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), z = _mm_setzero_si128();
        lo = _mm_castsi128_ps(_mm_unpacklo_epi16(z, v)), hi = _mm_castsi128_ps(_mm_unpackhi_epi16(z, v));
      }
    };
    // n (<= 4) outputs from the 8 values of each input row at a and b; c: a's column in the row
    auto quad = [&](const T* a, const T* b, int64_t c, int64_t o, int n) {
      __m128 a0, a1, b0v, b1v;
      load8(a, a0, a1);
      load8(b, b0v, b1v);
      const __m128 taps[3] = {_mm_shuffle_ps(a0, a1, _MM_SHUFFLE(3, 1, 3, 1)),
                              _mm_shuffle_ps(b0v, b1v, _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm_shuffle_ps(b0v, b1v, _MM_SHUFFLE(3, 1, 3, 1))};
      __m128 best = _mm_shuffle_ps(a0, a1, _MM_SHUFFLE(2, 0, 2, 0));
      __m128 code = _mm_setzero_ps();  // which tap won, as int32 lanes
      for (int k = 0; k < 3; ++k) {
        const __m128 take = _mm_or_ps(_mm_cmpgt_ps(taps[k], best), _mm_cmpunord_ps(taps[k], taps[k]));
        best = _mm_blendv_ps(best, taps[k], take);
        code = _mm_blendv_ps(code, _mm_castsi128_ps(_mm_set1_epi32(k + 1)), take);
      }
      if (n == 4) {  // all in vectors: the winners' values, and their indices c + 2j + column + row * iW
        if constexpr (std::is_same_v<T, float>) {
          _mm_storeu_ps(yr + o, best);
        } else {  // the winning elements' own bits back (exact: they were bfloat16)
          const __m128i h = _mm_packus_epi32(_mm_srli_epi32(_mm_castps_si128(best), 16), _mm_setzero_si128());
          _mm_storel_epi64(reinterpret_cast<__m128i*>(yr + o), h);
        }
        const __m128i won = _mm_castps_si128(code);
        const __m128i off =
            _mm_add_epi32(_mm_add_epi32(_mm_set_epi32(6, 4, 2, 0), _mm_and_si128(won, _mm_set1_epi32(1))),
                          _mm_mullo_epi32(_mm_srli_epi32(won, 1), _mm_set1_epi32(static_cast<int32_t>(iW))));
        const __m128i base = _mm_set1_epi64x(b0 + c);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(ir + o), _mm_add_epi64(base, _mm_cvtepi32_epi64(off)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(ir + o + 2),
                         _mm_add_epi64(base, _mm_cvtepi32_epi64(_mm_srli_si128(off, 8))));
        return;
      }
      alignas(16) float got[4];
      alignas(16) int32_t won[4];
      _mm_store_ps(got, best);
      _mm_store_si128(reinterpret_cast<__m128i*>(won), _mm_castps_si128(code));
      for (int j = 0; j < n; ++j) {
        if constexpr (std::is_same_v<T, float>)
          yr[o + j] = got[j];
        else  // the winning element's own bits back (exact: it was a bfloat16)
          yr[o + j].x = static_cast<uint16_t>(detail::f32_bits(got[j]) >> 16);
        ir[o + j] = b0 + c + 2 * j + (won[j] & 1) + (won[j] >> 1) * iW;
      }
    };
    for (; ow + 4 <= oW; ow += 4) quad(r0 + 2 * ow, r1 + 2 * ow, 2 * ow, ow, 4);
    // The last outputs through a padded copy: a scalar tail compiles to branches, which random
    // data mispredicts (a 7-wide row spent most of its time in a 3-output tail).
    if (ow < oW) {
      T ta[8] = {}, tb[8] = {};
      const int n = static_cast<int>(oW - ow);
      std::copy(r0 + 2 * ow, r0 + 2 * oW, ta);
      std::copy(r1 + 2 * ow, r1 + 2 * oW, tb);
      quad(ta, tb, 2 * ow, ow, n);
      ow = oW;
    }
  }
#endif
  for (; ow < oW; ++ow) {
    const int64_t c = 2 * ow;
    T best = r0[c];
    int64_t at = b0 + c;
    auto tap = [&](T v, int64_t p) {
      const bool take = (v > best) | (v != v);
      best = take ? v : best;
      at = take ? p : at;
    };
    tap(r0[c + 1], b0 + c + 1);
    tap(r1[c], b0 + iW + c);
    tap(r1[c + 1], b0 + iW + c + 1);
    yr[ow] = best;
    ir[ow] = at;
  }
}

template <typename T>
void max_pool_2x2(const T* x, T* y, int64_t* idx, const PoolGeometry& g) {
  const int64_t iW = g.in[2], oH = g.out[1], oW = g.out[2], in_l = g.in[1] * iW, out_l = oH * oW;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 4 * out_l));
  parallel_for(0, g.planes, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      for (int64_t oh = 0; oh < oH; ++oh) {
        const T* r0 = x + p * in_l + 2 * oh * iW;
        max_pool_2x2_row(r0, r0 + iW, 2 * oh * iW, iW, oW, y + p * out_l + oh * oW, idx + p * out_l + oh * oW);
      }
  });
}

bool is_2x2_pool(const PoolGeometry& g) {
  return !g.adaptive && g.in[0] == 1 && g.out[0] == 1 && g.k[0] == 1 && g.k[1] == 2 && g.k[2] == 2 &&
         g.stride[1] == 2 && g.stride[2] == 2 && g.pad[1] == 0 && g.pad[2] == 0 && g.dil[1] == 1 && g.dil[2] == 1 &&
         2 * g.out[1] <= g.in[1] && 2 * g.out[2] <= g.in[2];
}

template <typename T>
void max_pool_impl(const T* x, T* y, int64_t* idx, const PoolGeometry& g) {
  const int64_t iH = g.in[1], iW = g.in[2];
  if (is_2x2_pool(g)) return max_pool_2x2(x, y, idx, g);
  for_each_output(g, Kind::Max, [&](int64_t xo, int64_t yo, const Taps& td, const Taps& th, const Taps& tw) {
    // As torch: start from -inf at the window's first tap; a larger value or any NaN takes over.
    T best = -std::numeric_limits<T>::infinity();
    int64_t at = (td.first * iH + th.first) * iW + tw.first;
    for (int64_t a = 0; a < td.count; ++a) {
      int64_t id = td.first + a * td.step;
      for (int64_t b = 0; b < th.count; ++b) {
        int64_t base = (id * iH + th.first + b * th.step) * iW + tw.first;
        const T* r = x + xo + base;
        for (int64_t c = 0; c < tw.count; ++c) {
          T v = r[c * tw.step];
          if (v > best || v != v) {
            best = v;
            at = base + c * tw.step;
          }
        }
      }
    }
    y[yo] = best;
    idx[yo] = at;
  });
}

// One plane at a time, zeroed just before its scattered adds, so both stay in cache (a zeroed
// batch followed by a scatter_add pass reads and writes the whole gradient twice).
template <typename T>
void max_pool_backward_impl(const T* gy, const int64_t* idx, T* gx, int64_t planes, int64_t in_l, int64_t out_l) {
  std::atomic<bool> bad{false};
  parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, in_l + out_l)),
               [&](int64_t p0, int64_t p1) {
                 // 16-bit floats add in a float plane, rounded once (overlapping windows add
                 // several gradients into one input)
                 using M = opmath_t<T>;
                 std::vector<M> acc(std::is_same_v<M, T> ? 0 : in_l);
                 for (int64_t p = p0; p < p1; ++p) {
                   T* gxp = gx + p * in_l;
                   M* ap = std::is_same_v<M, T> ? reinterpret_cast<M*>(gxp) : acc.data();
                   const T* gyp = gy + p * out_l;
                   const int64_t* ip = idx + p * out_l;
                   std::fill(ap, ap + in_l, M(0));
                   for (int64_t o = 0; o < out_l; ++o) {
                     const int64_t at = ip[o];
                     if (static_cast<uint64_t>(at) >= static_cast<uint64_t>(in_l)) {
                       bad.store(true, std::memory_order_relaxed);
                       continue;
                     }
                     ap[at] += static_cast<M>(gyp[o]);
                   }
                   if constexpr (!std::is_same_v<M, T>)
                     for (int64_t i = 0; i < in_l; ++i) gxp[i] = static_cast<T>(ap[i]);
                 }
               });
  EMBER_CHECK_INDEX(!bad.load(), "max_pool backward: an index is out of range of the input plane of ", in_l,
                    " elements");
}

template <typename T>
inline T divisor(const Taps& td, const Taps& th, const Taps& tw, bool adaptive, bool cip, int64_t override_) {
  if (override_) return T(override_);
  if (adaptive || cip) return T(td.size * th.size * tw.size);
  return T(td.count * th.count * tw.count);
}

// Sum of n contiguous values; from 16 on with 8 independent accumulators, which vectorize (one
// running sum is a chain of dependent adds: a global average pool over 32x32 planes ran at 6x
// torch's time).
template <typename T>
T run_sum(const T* r, int64_t n) {
  T s = 0;
  int64_t c = 0;
  if (n >= 16) {
    T acc[8] = {};
    for (; c + 8 <= n; c += 8)
      for (int j = 0; j < 8; ++j) acc[j] += r[c + j];
    s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  }
  for (; c < n; ++c) s += r[c];
  return s;
}

// Note [Separable average pool]
// An average pool sums a box, which separates: sums along w of every input row, then along h of
// those, then along d, each pass over contiguous rows that vectorize; a divide per output last.
// (One window at a time made k*k scalar adds per output: a 3x3 pool ran at torch's speed, 3x3
// stride 2 at 1.6x its time.) The backward is the adjoint, pass by pass in reverse. Global pools
// (windows of whole rows: a plane or more per output) keep one run_sum per window.

// The outputs [lo, hi) of a dim whose windows hold all k taps inside the input (empty for
// adaptive windows, and for long ones, which run_sum takes one window at a time).
struct Interior {
  int64_t lo = 0, hi = 0;
};
inline Interior interior(const PoolGeometry& g, int d) {
  const int64_t k = g.k[d], st = g.stride[d], p = g.pad[d];
  if (g.adaptive || k > 16) return {};
  const int64_t lo = std::min((p + st - 1) / st, g.out[d]);
  const int64_t hi = g.in[d] + p >= k ? std::min((g.in[d] + p - k) / st + 1, g.out[d]) : 0;
  return {lo, std::max(lo, hi)};
}

// a[ow] = the sum of row r over tw[ow]'s taps.
template <typename T>
void box_row(const T* r, T* a, const std::vector<Taps>& tw, Interior in, int64_t k, int64_t st, int64_t p) {
  const int64_t oW = static_cast<int64_t>(tw.size());
  for (int64_t ow = 0; ow < in.lo; ++ow) a[ow] = run_sum(r + tw[ow].first, tw[ow].count);
  if (in.lo < in.hi) {
    const T* r0 = r + in.lo * st - p;
    T* a0 = a + in.lo;
    const int64_t n = in.hi - in.lo;
    if (st == 1) {
      for (int64_t i = 0; i < n; ++i) a0[i] = r0[i];
      for (int64_t j = 1; j < k; ++j)
        for (int64_t i = 0; i < n; ++i) a0[i] += r0[i + j];
    } else {
      for (int64_t i = 0; i < n; ++i) a0[i] = r0[i * st];
      for (int64_t j = 1; j < k; ++j)
        for (int64_t i = 0; i < n; ++i) a0[i] += r0[i * st + j];
    }
  }
  for (int64_t ow = in.hi; ow < oW; ++ow) a[ow] = run_sum(r + tw[ow].first, tw[ow].count);
}

// The adjoint of box_row: each a[ow] added to every tap of its window in row r.
template <typename T>
void box_row_adjoint(const T* a, T* r, const std::vector<Taps>& tw, Interior in, int64_t k, int64_t st, int64_t p) {
  const int64_t oW = static_cast<int64_t>(tw.size());
  auto one = [&](int64_t ow) {
    for (int64_t c = 0; c < tw[ow].count; ++c) r[tw[ow].first + c] += a[ow];
  };
  for (int64_t ow = 0; ow < in.lo; ++ow) one(ow);
  const int64_t n = in.hi - in.lo;
  T* r0 = r + in.lo * st - p;
  const T* a0 = a + in.lo;
  for (int64_t j = 0; j < k && n > 0; ++j) {
    if (st == 1)
      for (int64_t i = 0; i < n; ++i) r0[i + j] += a0[i];
    else
      for (int64_t i = 0; i < n; ++i) r0[i * st + j] += a0[i];
  }
  for (int64_t ow = in.hi; ow < oW; ++ow) one(ow);
}

// dst[i] (+)= the sum of rows src + first * n ... over count rows of n values.
template <typename T>
void add_rows(T* dst, const T* src, int64_t first, int64_t count, int64_t n, int64_t row_stride) {
  if (count == 0) {
    std::fill(dst, dst + n, T(0));
    return;
  }
  const T* r = src + first * row_stride;
  if (dst != r) std::copy(r, r + n, dst);
  for (int64_t b = 1; b < count; ++b) {
    r += row_stride;
    for (int64_t i = 0; i < n; ++i) dst[i] += r[i];
  }
}

// The per-output divisors of one (od, oh) row: dh * wf[ow] (exact factors, so the product rounds
// as the integer product converted would), or the divisor override.
template <typename T>
struct Divisors {
  std::vector<T> wf;
  int64_t override_;
  bool by_size;
  Divisors(const std::vector<Taps>& tw, bool adaptive, bool cip, int64_t dv) : override_(dv), by_size(adaptive || cip) {
    for (const Taps& t : tw) wf.push_back(T(by_size ? t.size : t.count));
  }
  T row(const Taps& td, const Taps& th) const { return by_size ? T(td.size * th.size) : T(td.count * th.count); }
  void divide(T* y, const T* s, const Taps& td, const Taps& th) const {
    const int64_t n = static_cast<int64_t>(wf.size());
    if (override_) {
      const T d = T(override_);
      for (int64_t i = 0; i < n; ++i) y[i] = s[i] / d;
      return;
    }
    const T dh = row(td, th);
    for (int64_t i = 0; i < n; ++i) y[i] = s[i] / (dh * wf[i]);
  }
};

// Whether every window is whole rows of the plane (a global pool along w): one run per window.
inline bool whole_rows(const PoolGeometry& g, const Taps& tw0) {
  return g.out[2] == 1 && tw0.first == 0 && tw0.count == g.in[2];
}

template <typename T>
void avg_pool_impl(const T* x, T* y, const PoolGeometry& g, bool cip, int64_t dv) {
  const int64_t iD = g.in[0], iH = g.in[1], iW = g.in[2], oD = g.out[0], oH = g.out[1], oW = g.out[2];
  std::vector<Taps> t[3];
  for (int d = 0; d < 3; ++d)
    for (int64_t o = 0; o < g.out[d]; ++o) t[d].push_back(taps(g, d, o, Kind::Avg));
  if (oW > 0 && whole_rows(g, t[2][0])) {
    for_each_output(g, Kind::Avg, [&](int64_t xo, int64_t yo, const Taps& td, const Taps& th, const Taps& tw) {
      T s = 0;
      for (int64_t a = 0; a < td.count; ++a)
        s += run_sum(x + xo + ((td.first + a) * iH + th.first) * iW, th.count * iW);
      y[yo] = s / divisor<T>(td, th, tw, g.adaptive, cip, dv);
    });
    return;
  }
  const Interior in_w = interior(g, 2);
  const Divisors<T> div(t[2], g.adaptive, cip, dv);
  const int64_t in_l = iD * iH * iW, out_l = oD * oH * oW;
  const int64_t work = std::max<int64_t>(1, in_l + out_l * (g.k[0] + g.k[1]));
  parallel_for(0, g.planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t p0, int64_t p1) {
    std::vector<T> rows_w(static_cast<size_t>(iD * iH * oW)), rows_h(static_cast<size_t>(iD * oH * oW));
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * in_l;
      T* yp = y + p * out_l;
      for (int64_t r = 0; r < iD * iH; ++r)
        box_row(xp + r * iW, &rows_w[r * oW], t[2], in_w, g.k[2], g.stride[2], g.pad[2]);
      for (int64_t d = 0; d < iD; ++d)
        for (int64_t oh = 0; oh < oH; ++oh)
          add_rows(&rows_h[(d * oH + oh) * oW], &rows_w[d * iH * oW], t[1][oh].first, t[1][oh].count, oW, oW);
      for (int64_t od = 0; od < oD; ++od)
        for (int64_t oh = 0; oh < oH; ++oh) {
          T* yr = yp + (od * oH + oh) * oW;
          add_rows(yr, &rows_h[oh * oW], t[0][od].first, t[0][od].count, oW, oH * oW);
          div.divide(yr, yr, t[0][od], t[1][oh]);
        }
    }
  });
}

template <typename T>
void avg_pool_backward_impl(const T* gy, T* gx, const PoolGeometry& g, bool cip, int64_t dv) {
  const int64_t iD = g.in[0], iH = g.in[1], iW = g.in[2], oD = g.out[0], oH = g.out[1], oW = g.out[2];
  const int64_t in_l = iD * iH * iW, out_l = oD * oH * oW;
  std::vector<Taps> t[3];
  for (int d = 0; d < 3; ++d)
    for (int64_t o = 0; o < g.out[d]; ++o) t[d].push_back(taps(g, d, o, Kind::Avg));
  const Interior in_w = interior(g, 2);
  const Divisors<T> div(t[2], g.adaptive, cip, dv);
  const int64_t work = std::max<int64_t>(1, in_l + out_l * (g.k[0] + g.k[1]));
  // Each task owns whole planes, so the adds never race.
  parallel_for(0, g.planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t p0, int64_t p1) {
    std::vector<T> z(static_cast<size_t>(oW)), rows_h(static_cast<size_t>(iD * oH * oW)),
        rows_w(static_cast<size_t>(iD * iH * oW));
    for (int64_t p = p0; p < p1; ++p) {
      const T* gyp = gy + p * out_l;
      T* gxp = gx + p * in_l;
      std::fill(rows_h.begin(), rows_h.end(), T(0));
      for (int64_t od = 0; od < oD; ++od)
        for (int64_t oh = 0; oh < oH; ++oh) {
          div.divide(z.data(), gyp + (od * oH + oh) * oW, t[0][od], t[1][oh]);
          for (int64_t a = 0; a < t[0][od].count; ++a) {
            T* hr = &rows_h[((t[0][od].first + a) * oH + oh) * oW];
            for (int64_t i = 0; i < oW; ++i) hr[i] += z[static_cast<size_t>(i)];
          }
        }
      std::fill(rows_w.begin(), rows_w.end(), T(0));
      for (int64_t d = 0; d < iD; ++d)
        for (int64_t oh = 0; oh < oH; ++oh) {
          const T* hr = &rows_h[(d * oH + oh) * oW];
          for (int64_t b = 0; b < t[1][oh].count; ++b) {
            T* wr = &rows_w[(d * iH + t[1][oh].first + b) * oW];
            for (int64_t i = 0; i < oW; ++i) wr[i] += hr[i];
          }
        }
      std::fill(gxp, gxp + in_l, T(0));
      for (int64_t r = 0; r < iD * iH; ++r)
        box_row_adjoint(&rows_w[r * oW], gxp + r * iW, t[2], in_w, g.k[2], g.stride[2], g.pad[2]);
    }
  });
}

}  // namespace

bool max_pool_takes_bf16(const PoolGeometry& g) {
#if defined(__SSE4_1__)
  return is_2x2_pool(g);
#else
  (void)g;
  return false;
#endif
}

void max_pool(ScalarType dtype, const void* x, void* y, int64_t* idx, const PoolGeometry& g) {
  if (dtype == ScalarType::Float32)
    max_pool_impl(static_cast<const float*>(x), static_cast<float*>(y), idx, g);
  else if (dtype == ScalarType::Float64)
    max_pool_impl(static_cast<const double*>(x), static_cast<double*>(y), idx, g);
  else if (dtype == ScalarType::BFloat16 && max_pool_takes_bf16(g))
    max_pool_2x2(static_cast<const BFloat16*>(x), static_cast<BFloat16*>(y), idx, g);
  else
    EMBER_NOT_IMPLEMENTED("max_pool: unsupported dtype ", dtype_name(dtype));
}

void max_pool_backward(ScalarType dtype, const void* gy, const int64_t* idx, void* gx, int64_t planes, int64_t in_l,
                       int64_t out_l) {
  if (dtype == ScalarType::Float32)
    max_pool_backward_impl(static_cast<const float*>(gy), idx, static_cast<float*>(gx), planes, in_l, out_l);
  else if (dtype == ScalarType::Float64)
    max_pool_backward_impl(static_cast<const double*>(gy), idx, static_cast<double*>(gx), planes, in_l, out_l);
  else if (dtype == ScalarType::BFloat16)
    max_pool_backward_impl(static_cast<const BFloat16*>(gy), idx, static_cast<BFloat16*>(gx), planes, in_l, out_l);
  else if (dtype == ScalarType::Float16)
    max_pool_backward_impl(static_cast<const Half*>(gy), idx, static_cast<Half*>(gx), planes, in_l, out_l);
  else
    EMBER_NOT_IMPLEMENTED("max_pool_backward: unsupported dtype ", dtype_name(dtype));
}

void avg_pool(ScalarType dtype, const void* x, void* y, const PoolGeometry& g, bool cip, int64_t dv) {
  if (dtype == ScalarType::Float32)
    avg_pool_impl(static_cast<const float*>(x), static_cast<float*>(y), g, cip, dv);
  else if (dtype == ScalarType::Float64)
    avg_pool_impl(static_cast<const double*>(x), static_cast<double*>(y), g, cip, dv);
  else
    EMBER_NOT_IMPLEMENTED("avg_pool: unsupported dtype ", dtype_name(dtype));
}

void avg_pool_backward(ScalarType dtype, const void* gy, void* gx, const PoolGeometry& g, bool cip, int64_t dv) {
  if (dtype == ScalarType::Float32)
    avg_pool_backward_impl(static_cast<const float*>(gy), static_cast<float*>(gx), g, cip, dv);
  else if (dtype == ScalarType::Float64)
    avg_pool_backward_impl(static_cast<const double*>(gy), static_cast<double*>(gx), g, cip, dv);
  else
    EMBER_NOT_IMPLEMENTED("avg_pool_backward: unsupported dtype ", dtype_name(dtype));
}

}  // namespace ember::cpu

namespace ember::cpu {
namespace {

template <typename T>
void resample_impl(const T* x, T* y, int64_t outer, int64_t in, int64_t out, int64_t inner, int ntaps,
                   const int64_t* idx, const double* w) {
  if (inner == 1) {
    // The last dim: whole rows per task, the weights converted once (a task per output element
    // cost interpolate 1.7x torch's time). The same sums, in the same order, as below.
    std::vector<T> wt(w, w + ntaps * out);
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, out * ntaps)),
                 [&](int64_t b0, int64_t b1) {
                   for (int64_t b = b0; b < b1; ++b) {
                     const T* xb = x + b * in;
                     T* yb = y + b * out;
                     if (ntaps == 2) {
                       const int64_t *i0 = idx, *i1 = idx + out;
                       const T *w0 = wt.data(), *w1 = wt.data() + out;
                       for (int64_t o = 0; o < out; ++o) {
                         T acc = 0;
                         acc += w0[o] * xb[i0[o]];
                         acc += w1[o] * xb[i1[o]];
                         yb[o] = acc;
                       }
                       continue;
                     }
                     for (int64_t o = 0; o < out; ++o) {
                       T acc = 0;
                       for (int j = 0; j < ntaps; ++j) acc += wt[j * out + o] * xb[idx[j * out + o]];
                       yb[o] = acc;
                     }
                   }
                 });
    return;
  }
  parallel_for(0, outer * out, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, inner * ntaps)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   int64_t b = r / out, o = r % out;
                   T* yr = y + r * inner;
                   const T* xb = x + b * in * inner;
                   for (int j = 0; j < ntaps; ++j) {
                     const T wj = T(w[j * out + o]);
                     const T* xr = xb + idx[j * out + o] * inner;
                     if (j == 0)
                       for (int64_t i = 0; i < inner; ++i) yr[i] = wj * xr[i];
                     else
                       for (int64_t i = 0; i < inner; ++i) yr[i] += wj * xr[i];
                   }
                 }
               });
}

template <typename T>
void resample_backward_impl(const T* gy, T* gx, int64_t outer, int64_t in, int64_t out, int64_t inner, int ntaps,
                            const int64_t* idx, const double* w) {
  const std::vector<T> wt(w, w + ntaps * out);
  // Each task owns whole outer slices, so the scattered adds never race.
  parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, (in + out * ntaps) * inner)),
               [&](int64_t b0, int64_t b1) {
                 for (int64_t b = b0; b < b1; ++b) {
                   T* gxb = gx + b * in * inner;
                   std::fill(gxb, gxb + in * inner, T(0));
                   if (inner == 1) {  // the last dim: one element per tap (the same adds as below)
                     const T* gb = gy + b * out;
                     for (int64_t o = 0; o < out; ++o)
                       for (int j = 0; j < ntaps; ++j) gxb[idx[j * out + o]] += wt[j * out + o] * gb[o];
                     continue;
                   }
                   for (int64_t o = 0; o < out; ++o) {
                     const T* gr = gy + (b * out + o) * inner;
                     for (int j = 0; j < ntaps; ++j) {
                       const T wj = wt[j * out + o];
                       T* xr = gxb + idx[j * out + o] * inner;
                       for (int64_t i = 0; i < inner; ++i) xr[i] += wj * gr[i];
                     }
                   }
                 }
               });
}

}  // namespace

void resample(ScalarType dtype, const void* x, void* y, int64_t outer, int64_t in, int64_t out, int64_t inner,
              int ntaps, const int64_t* idx, const double* w) {
  if (dtype == ScalarType::Float32)
    resample_impl(static_cast<const float*>(x), static_cast<float*>(y), outer, in, out, inner, ntaps, idx, w);
  else if (dtype == ScalarType::Float64)
    resample_impl(static_cast<const double*>(x), static_cast<double*>(y), outer, in, out, inner, ntaps, idx, w);
  else
    EMBER_NOT_IMPLEMENTED("resample: unsupported dtype ", dtype_name(dtype));
}

void resample_backward(ScalarType dtype, const void* gy, void* gx, int64_t outer, int64_t in, int64_t out,
                       int64_t inner, int ntaps, const int64_t* idx, const double* w) {
  if (dtype == ScalarType::Float32)
    resample_backward_impl(static_cast<const float*>(gy), static_cast<float*>(gx), outer, in, out, inner, ntaps, idx,
                           w);
  else if (dtype == ScalarType::Float64)
    resample_backward_impl(static_cast<const double*>(gy), static_cast<double*>(gx), outer, in, out, inner, ntaps, idx,
                           w);
  else
    EMBER_NOT_IMPLEMENTED("resample_backward: unsupported dtype ", dtype_name(dtype));
}

}  // namespace ember::cpu
