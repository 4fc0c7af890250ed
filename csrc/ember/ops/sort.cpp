// Sorting and selection along a dim (sort, argsort, topk, kthvalue, median, nanmedian, mode),
// quantiles, and counting (unique, unique_consecutive, bincount, histc).
//
// Every slice along the dim is copied into a buffer of (value, index) pairs and sorted or
// partitioned there; the order puts NaN above +inf (first when descending) and breaks ties by
// index, so results never depend on the algorithm or the thread count.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/allocator.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;
using reduce_detail::Layout;

template <typename M>
bool is_nan(M v) {
  return v != v;
}
// a before b in ascending order: NaN is the largest value.
template <typename M>
bool less_nan(M a, M b) {
  return a < b || (!is_nan(a) && is_nan(b));
}

template <typename M>
struct Item {
  M v;
  int64_t i;
};

// Ascending (or descending) by value, ties by index: a strict total order.
template <typename M>
struct ItemOrder {
  bool descending = false;
  bool operator()(const Item<M>& a, const Item<M>& b) const {
    bool ab = descending ? less_nan(b.v, a.v) : less_nan(a.v, b.v);
    if (ab) return true;
    bool ba = descending ? less_nan(a.v, b.v) : less_nan(b.v, a.v);
    return !ba && a.i < b.i;
  }
};

// An unsigned key (32 bits for types of up to 4 bytes) whose order is ItemOrder's ascending order of
// values: integers with the sign bit flipped; floats by their bits (negative ones complemented, the
// others with the sign bit set), -0 as +0 (they are equal, so index order decides) and every NaN as
// the largest key.
template <typename M>
using RadixKey = std::conditional_t<sizeof(M) <= 4, uint32_t, uint64_t>;
template <typename M>
RadixKey<M> radix_key(M v) {
  using U = RadixKey<M>;
  constexpr U kSign = U(1) << (8 * sizeof(U) - 1);
  if constexpr (std::is_integral_v<M>) {
    const U k = static_cast<U>(static_cast<std::make_signed_t<U>>(v));
    return std::is_signed_v<M> ? k ^ kSign : k;
  } else {
    // Selects, not branches, so a loop of keys vectorizes (random signs mispredicted a branch).
    U bits;
    std::memcpy(&bits, &v, sizeof bits);
    using S = std::make_signed_t<U>;
    const U flip = static_cast<U>(static_cast<S>(bits) >> (8 * sizeof(U) - 1)) | kSign;  // all ones when negative
    const U k = v == M(0) ? kSign : bits ^ flip;
    return v != v ? ~U(0) : k;
  }
}

// LSD radix sort of (key, position) records by their keys' low n_bytes bytes, a pass per byte that
// not every key shares; returns the sorted records (rec or tmp).
template <typename K>
struct KeyPos {  // one record per element: a scatter pass writes one stream per bucket
  K key;
  uint32_t pos;
};
template <typename K>
KeyPos<K>* radix_pass_all(KeyPos<K>* rec, KeyPos<K>* tmp, int64_t n, int n_bytes) {
  std::array<std::array<uint32_t, 256>, sizeof(K)> hist{};
  for (int64_t i = 0; i < n; ++i)
    for (int b = 0; b < n_bytes; ++b) ++hist[b][(rec[i].key >> (8 * b)) & 0xff];
  for (int b = 0; b < n_bytes; ++b) {
    auto& h = hist[b];
    if (h[(rec[0].key >> (8 * b)) & 0xff] == n) continue;  // every key has this byte
    uint32_t offset = 0;
    for (auto& c : h) {
      const uint32_t count = c;
      c = offset;
      offset += count;
    }
    for (int64_t i = 0; i < n; ++i) tmp[h[(rec[i].key >> (8 * b)) & 0xff]++] = rec[i];
    std::swap(rec, tmp);
  }
  return rec;
}

// Types the radix sort takes (bool and complex go through std::sort).
template <typename M>
constexpr bool kRadixSortable = (std::is_integral_v<M> && !std::is_same_v<M, bool>) || std::is_floating_point_v<M>;
// Whether a slice of n is radix sorted: from 64 elements (rows of 64 took 0.7x std::sort's time, of
// 128 0.46x, of 32 1.5x: clearing and summing the 256-entry histograms is the fixed cost) to 2^32
// (the records' positions are 32-bit).
constexpr bool radix_length(int64_t n) { return n >= 64 && n <= std::numeric_limits<uint32_t>::max(); }

// The value whose radix_key is k, where that is one value (not for -0/+0's key or NaN's).
template <typename M>
M value_of_key(RadixKey<M> k) {
  using U = RadixKey<M>;
  constexpr U kSign = U(1) << (8 * sizeof(U) - 1);
  if constexpr (std::is_integral_v<M>) {
    return static_cast<M>(static_cast<std::make_signed_t<U>>(std::is_signed_v<M> ? k ^ kSign : k));
  } else {
    const U bits = (k & kSign) ? (k ^ kSign) : ~k;
    M v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
}

// Sorts the n values read(r), r < n (radix_length(n)), by ItemOrder{descending} with a least-significant-
// digit radix sort of radix_key's bytes, which is stable, so ties keep index order as ItemOrder asks
// (torch sorts integers by radix too: std::sort of 100k int64 ran 2.5-4x its time; of float rows of
// 2048, 3.6x), and calls write(i, value, r) for the i-th in order. Keys are taken relative to the
// smallest, so values in a narrow range cost few passes, and records are 8 bytes where that range fits
// 32 bits. Values come back from their keys (no gather from the input), but for zeros and NaNs, which
// share keys (their sign and payload are read again).
template <typename M, typename Read, typename Write>
void radix_slice(int64_t n, bool descending, const Read& read, const Write& write) {
  using K = RadixKey<M>;
  constexpr K kZeroKey = K(1) << (8 * sizeof(K) - 1);  // a float zero's (radix_key)
  constexpr K kNanKey = ~K(0);
  auto key_of = [descending](M v) {
    const K k = radix_key(v);
    return descending ? ~k : k;
  };
  K lo = std::numeric_limits<K>::max(), hi = 0;
  for (int64_t r = 0; r < n; ++r) {
    const K k = key_of(read(r));
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  const uint64_t range = static_cast<uint64_t>(hi - lo);
  int n_bytes = 0;
  while (n_bytes < 8 && (range >> (8 * n_bytes)) != 0) ++n_bytes;
  auto run = [&](auto key_zero) {
    using Rel = decltype(key_zero);
    using Rec = KeyPos<Rel>;
    // Scratch from the caching allocator (Note [CPU caching]): fresh pages on every call (page
    // faults) took most of a 1M-element sort's time.
    DataPtr mem = cpu_allocator()->allocate(2 * n * sizeof(Rec));
    Rec* rec = static_cast<Rec*>(mem.ptr);
    for (int64_t r = 0; r < n; ++r) rec[r] = {static_cast<Rel>(key_of(read(r)) - lo), static_cast<uint32_t>(r)};
    const Rec* out = radix_pass_all(rec, rec + n, n, n_bytes);
    for (int64_t i = 0; i < n; ++i) {
      const K stored = static_cast<K>(out[i].key + lo);
      const K k = descending ? ~stored : stored;
      const bool shared = std::is_floating_point_v<M> && (k == kZeroKey || k == kNanKey);
      write(i, shared ? read(out[i].pos) : value_of_key<M>(k), out[i].pos);
    }
  };
  if (range <= std::numeric_limits<uint32_t>::max())
    run(uint32_t(0));
  else
    run(uint64_t(0));
}

// Note [Radix select]: the position of rank k (0-based) among keys[0..n) in (key, position) order,
// ItemOrder's order when the keys are radix_key's. Most significant digit first, 11 bits at a time:
// a histogram of the digit finds the bucket holding rank k and only that bucket's (key, position)
// records are kept, in index order, for the next digit; once few are left, nth_element on the
// records. Two or three passes over the slice whatever the values (equal keys end when the digits
// run out, their records in index order). Slices of under 2048 go to nth_element at once (the
// 2048-entry histograms cost more than they save). nth_element on (value, index) items of 1M floats
// took 1.5x torch's median, partial_sort 1.2x its topk(100).
constexpr int64_t kRadixSelectFew = 2048;
template <typename K>
int64_t radix_select(const K* keys, int64_t n, int64_t k, KeyPos<K>* cand) {
  constexpr int kDigit = 11;
  constexpr int64_t kFew = kRadixSelectFew;
  using Hist = std::array<uint32_t, 1 << kDigit>;
  int shift = 8 * static_cast<int>(sizeof(K));  // bits of the keys not yet split on
  int64_t m = 0;                                // records in cand
  Hist hist;
  auto bucket_of_k = [&]() {  // the bucket holding rank k; k becomes its rank there
    uint32_t b = 0;
    while (k >= hist[b]) k -= hist[b++];
    return static_cast<K>(b);
  };
  if (n < kFew) {
    for (int64_t r = 0; r < n; ++r) cand[m++] = {keys[r], static_cast<uint32_t>(r)};
  } else {
    shift -= kDigit;
    auto digit = [shift](K key) { return static_cast<uint32_t>(key >> shift); };
    // Four histograms: values bunch in a few buckets, and increments of one counter wait on each
    // other through memory.
    std::array<Hist, 3> part;
    hist.fill(0);
    for (auto& p : part) p.fill(0);
    int64_t r = 0;
    for (; r + 4 <= n; r += 4) {
      ++hist[digit(keys[r])];
      ++part[0][digit(keys[r + 1])];
      ++part[1][digit(keys[r + 2])];
      ++part[2][digit(keys[r + 3])];
    }
    for (; r < n; ++r) ++hist[digit(keys[r])];
    for (size_t b = 0; b < hist.size(); ++b) hist[b] += part[0][b] + part[1][b] + part[2][b];
    const K want = bucket_of_k();
    for (r = 0; r < n; ++r)
      if (digit(keys[r]) == want) cand[m++] = {keys[r], static_cast<uint32_t>(r)};
    while (m > kFew / 8 && shift > 0) {
      const int next = std::max(shift - kDigit, 0);
      const K mask = static_cast<K>((K(1) << (shift - next)) - 1);
      auto sub = [next, mask](K key) { return static_cast<uint32_t>((key >> next) & mask); };
      hist.fill(0);
      for (int64_t i = 0; i < m; ++i) ++hist[sub(cand[i].key)];
      const K want_sub = bucket_of_k();
      int64_t kept = 0;
      for (int64_t i = 0; i < m; ++i)
        if (sub(cand[i].key) == want_sub) cand[kept++] = cand[i];
      m = kept;
      shift = next;
    }
    if (shift == 0) return cand[k].pos;  // all keys equal: index order
  }
  std::nth_element(cand, cand + k, cand + m, [](const KeyPos<K>& a, const KeyPos<K>& b) {
    return a.key < b.key || (a.key == b.key && a.pos < b.pos);
  });
  return cand[k].pos;
}

// Scratch for selecting in slices of up to n: keys and radix_select's records, from the caching
// allocator (Note [CPU caching]): fresh vectors faulted 4 MB of pages in on every call over 1M values.
template <typename K>
struct SelectScratch {
  DataPtr mem;
  K* keys;
  KeyPos<K>* cand;
  explicit SelectScratch(int64_t n) : mem(cpu_allocator()->allocate(n * (sizeof(K) + sizeof(KeyPos<K>)))) {
    keys = static_cast<K*>(mem.ptr);
    cand = reinterpret_cast<KeyPos<K>*>(keys + n);
  }
};

// Sorts buf (filled in index order) by ItemOrder{descending}: long slices by radix_slice.
template <typename M>
void sort_items(std::vector<Item<M>>& buf, bool descending) {
  const int64_t n = static_cast<int64_t>(buf.size());
  if constexpr (kRadixSortable<M>) {
    if (radix_length(n)) {
      DataPtr mem = cpu_allocator()->allocate(n * sizeof(M));  // the values, as buf is rewritten
      M* vals = static_cast<M*>(mem.ptr);
      for (int64_t i = 0; i < n; ++i) vals[i] = buf[i].v;
      radix_slice<M>(
          n, descending, [vals](int64_t r) { return vals[r]; },
          [&buf](int64_t i, M v, uint32_t r) {
            buf[i] = {v, static_cast<int64_t>(r)};
          });
      return;
    }
  }
  std::sort(buf.begin(), buf.end(), ItemOrder<M>{descending});
}

// sort() of long slices straight from the input to the results by radix_slice (no buffer of items);
// false where the type or length does not take it.
template <typename T>
bool radix_sort_slices(const Layout& l, bool descending, T* values, int64_t* indices) {
  using M = opmath_t<T>;
  if constexpr (!kRadixSortable<M>) {
    return false;
  } else {
    const int64_t R = l.R, inner = l.inner;
    if (!radix_length(R)) return false;
    const T* x = l.x.data<T>();
    parallel_for(0, l.outer * inner, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
      for (int64_t w = b; w < e; ++w) {
        const int64_t o = w / inner, j = w % inner;
        const T* src = x + o * R * inner + j;
        T* v = values + o * R * inner + j;
        int64_t* ix = indices + o * R * inner + j;
        radix_slice<M>(
            R, descending, [src, inner](int64_t r) { return static_cast<M>(src[r * inner]); },
            [v, ix, inner](int64_t i, M value, uint32_t r) {
              v[i * inner] = static_cast<T>(value);
              ix[i * inner] = r;
            });
      }
    });
    return true;
  }
}

// sort() of slices shorter than radix_length's 64 with 32-bit keys: each element as one word, its
// radix_key (complemented for descending) above its index, so plain integer order is ItemOrder's
// and the index breaks ties; values read back at the sorted indices. std::sort of (value, index)
// items ran rows of 16 and 32 floats at 1.08-1.14x torch's time.
template <typename T>
bool short_sort_slices(const Layout& l, bool descending, T* values, int64_t* indices) {
  using M = opmath_t<T>;
  if constexpr (!kRadixSortable<M> || sizeof(RadixKey<M>) != 4) {
    return false;
  } else {
    const int64_t R = l.R, inner = l.inner;
    if (R >= 64) return false;
    const T* x = l.x.data<T>();
    const uint32_t flip = descending ? ~0u : 0u;
    parallel_for(0, l.outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)),
                 [&](int64_t b, int64_t e) {
                   uint64_t word[64];
                   for (int64_t w = b; w < e; ++w) {
                     const int64_t o = w / inner, j = w % inner;
                     const T* src = x + o * R * inner + j;
                     for (int64_t r = 0; r < R; ++r)
                       word[r] = uint64_t(radix_key(static_cast<M>(src[r * inner])) ^ flip) << 32 | uint64_t(r);
                     std::sort(word, word + R);
                     for (int64_t i = 0; i < R; ++i) {
                       const int64_t r = static_cast<int64_t>(word[i] & 0xffffffffu), at = (o * R + i) * inner + j;
                       values[at] = src[r * inner];
                       indices[at] = r;
                     }
                   }
                 });
    return true;
  }
}

// Runs f(slice, buf) for every slice along the layout's R; slice(r) reads element r, and
// out_index(r) is where position r of that slice lives in a contiguous tensor shaped like the
// input (or like the input with R replaced by `out_R`).
template <typename T, typename F>
void for_each_slice(const Layout& l, const F& f) {
  const T* x = l.x.data<T>();
  int64_t R = l.R, inner = l.inner;
  parallel_for(0, l.outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<Item<opmath_t<T>>> buf(R);
                 for (int64_t w = b; w < e; ++w) {
                   int64_t o = w / inner, j = w % inner;
                   const T* src = x + o * R * inner + j;
                   for (int64_t r = 0; r < R; ++r) buf[r] = {static_cast<opmath_t<T>>(src[r * inner]), r};
                   f(o, j, buf);
                 }
               });
}

// Writes buf[0..n) into values/indices of a contiguous (outer, n, inner) result at (o, j).
template <typename T, typename M>
void write_slice(const std::vector<Item<M>>& buf, int64_t n, T* values, int64_t* indices, int64_t o, int64_t j,
                 int64_t inner) {
  for (int64_t r = 0; r < n; ++r) {
    int64_t at = (o * n + r) * inner + j;
    if (values) values[at] = static_cast<T>(buf[r].v);
    if (indices) indices[at] = buf[r].i;
  }
}

// topk for small k: one pass over each slice keeping its k best items sorted, each value tested
// against the k-th best (one comparison rejects most) and inserted only when it wins. Values come
// in index order, so a value equal to one already kept ranks after it (ItemOrder's ties) and never
// displaces it. std::partial_sort over a copied buffer of (value, index) items ran 1.3-1.4x torch's
// time (1024 rows of 1024, k = 10).
template <typename T>
void top_k_scan(const Layout& l, int64_t k, bool largest, T* values, int64_t* indices) {
  using M = opmath_t<T>;
  const T* x = l.x.data<T>();
  const int64_t R = l.R, inner = l.inner;
  auto beats = [largest](M a, M b) { return largest ? less_nan(b, a) : less_nan(a, b); };  // a strictly first
  parallel_for(0, l.outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)),
               [&](int64_t b, int64_t e) {
                 std::vector<Item<M>> top(k);
                 for (int64_t w = b; w < e; ++w) {
                   const int64_t o = w / inner, j = w % inner;
                   const T* src = x + o * R * inner + j;
                   for (int64_t r = 0; r < k; ++r) top[r] = {static_cast<M>(src[r * inner]), r};
                   std::sort(top.begin(), top.end(), ItemOrder<M>{largest});
                   M worst = top[k - 1].v;
                   for (int64_t r = k; r < R; ++r) {
                     const M v = static_cast<M>(src[r * inner]);
                     if (!beats(v, worst)) continue;
                     int64_t p = k - 1;
                     for (; p > 0 && beats(v, top[p - 1].v); --p) top[p] = top[p - 1];
                     top[p] = {v, r};
                     worst = top[k - 1].v;
                   }
                   write_slice(top, k, values, indices, o, j, inner);
                 }
               });
}

// topk for larger k: each slice's values as order-preserving keys (radix_key, complemented for
// largest, so the best key is the smallest), the k-th best key found by radix_select, then the winners collected in
// index order (keys better than it, then ties with it until there are k) and sorted by (key, index): ItemOrder's order.
// std::partial_sort on 16-byte (value, index) items ran k = 64 of rows of 1024 at 1.26-1.40x torch's time.
template <typename T>
void top_k_select(const Layout& l, int64_t k, bool largest, T* values, int64_t* indices) {
  using M = opmath_t<T>;
  using K = RadixKey<M>;
  const T* x = l.x.data<T>();
  const int64_t R = l.R, inner = l.inner;
  parallel_for(0, l.outer * inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)),
               [&](int64_t b, int64_t e) {
                 SelectScratch<K> scratch(R);
                 K* keys = scratch.keys;
                 std::vector<K> kth;
                 std::vector<std::pair<K, int64_t>> win(k);
                 for (int64_t w = b; w < e; ++w) {
                   const int64_t o = w / inner, j = w % inner;
                   const T* src = x + o * R * inner + j;
                   for (int64_t r = 0; r < R; ++r) {
                     const K key = radix_key(static_cast<M>(src[r * inner]));
                     keys[r] = largest ? static_cast<K>(~key) : key;
                   }
                   K cut;
                   if (R < kRadixSelectFew) {  // nth_element on the keys alone, half the bytes of records
                     kth.assign(keys, keys + R);
                     std::nth_element(kth.begin(), kth.begin() + (k - 1), kth.end());
                     cut = kth[k - 1];
                   } else {
                     cut = keys[radix_select(keys, R, k - 1, scratch.cand)];
                   }
                   int64_t n = 0;
                   for (int64_t r = 0; r < R; ++r)
                     if (keys[r] < cut) win[n++] = {keys[r], r};
                   for (int64_t r = 0; r < R && n < k; ++r)
                     if (keys[r] == cut) win[n++] = {keys[r], r};
                   std::sort(win.begin(), win.end());
                   for (int64_t q = 0; q < k; ++q) {
                     const int64_t at = (o * k + q) * inner + j, r = win[q].second;
                     values[at] = src[r * inner];
                     indices[at] = r;
                   }
                 }
               });
}

Shape with_size(const Tensor& t, int64_t dim, int64_t n) {
  Shape s = t.sizes();
  if (!s.empty()) s[dim] = n;
  return s;
}

// History for a (values, indices) result whose values were taken from t at indices along dim.
void record_selection(const Tensor& t, Tensor& values, const Tensor& indices, int64_t dim, bool keepdim,
                      const char* name) {
  if (auto n = autograd::make_node<LambdaBackward>(t))
    n->record(name, {values}, {indices}, {},
              [dim, sizes = t.sizes(), keepdim](const TensorList& g, const TensorList& s) -> TensorList {
                return {reduce_detail::select_backward(g[0], dim, s[0], sizes, keepdim)};
              });
}

// Which element of a slice of n values (n_nan of them NaN, the first at first_nan) a selection
// takes: the one of rank `rank` in ItemOrder's ascending order, or, where pos >= 0, the one at pos.
struct SliceRank {
  int64_t rank = 0;
  int64_t pos = -1;
};

// Selects one element per slice of radix-sortable values by rank_of(n, n_nan, first_nan) ->
// SliceRank, through radix_select on the slice's keys (Note [Radix select]).
template <typename T, typename RankOf>
void select_by_keys(const Layout& l, T* values, int64_t* indices, const RankOf& rank_of) {
  using M = opmath_t<T>;
  using K = RadixKey<M>;
  const T* x = l.x.data<T>();
  const int64_t R = l.R, inner = l.inner;
  parallel_for(0, l.outer * inner, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
    SelectScratch<K> scratch(R);
    K* keys = scratch.keys;
    for (int64_t w = b; w < e; ++w) {
      const int64_t o = w / inner, j = w % inner;
      const T* src = x + o * R * inner + j;
      for (int64_t r = 0; r < R; ++r) keys[r] = radix_key(static_cast<M>(src[r * inner]));
      int64_t n_nan = 0, first_nan = -1;
      if constexpr (std::is_floating_point_v<M>) {  // NaN's key, ~0, is no other value's
        for (int64_t r = 0; r < R; ++r) n_nan += keys[r] == ~K(0);
        if (n_nan) first_nan = std::find(keys, keys + R, ~K(0)) - keys;
      }
      const SliceRank want = rank_of(R, n_nan, first_nan);
      const int64_t pos = want.pos >= 0 ? want.pos : radix_select(keys, R, want.rank, scratch.cand);
      values[o * inner + j] = src[pos * inner];
      indices[o * inner + j] = pos;
    }
  });
}

// Selects one element per slice with pick(buf) -> position in buf after arranging it, or for
// long slices of radix-sortable values by rank_of (select_by_keys); returns (values, indices) with
// the dim reduced (kept as 1 with keepdim).
template <typename Pick, typename RankOf = std::nullptr_t>
TensorPair select_one(const Tensor& t, int64_t dim, bool keepdim, const char* name, const Pick& pick,
                      const RankOf& rank_of = nullptr) {
  auto mask = reduce_detail::reduce_mask(t, dim);
  Tensor values = empty(with_size(t, dim, 1), t.dtype());
  Tensor indices = empty(with_size(t, dim, 1), ScalarType::Int64);
  if (values.numel() > 0) {
    autograd::NoGradGuard raw;
    Layout l = reduce_detail::dim_layout(t, dim);
    EMBER_DISPATCH_ALL(t.dtype(), name, [&] {
      using T = scalar_t;
      using M = opmath_t<T>;
      T* v = values.data<T>();
      int64_t* ix = indices.data<int64_t>();
      if constexpr (kRadixSortable<M> && !std::is_same_v<RankOf, std::nullptr_t>) {
        if (radix_length(l.R)) return select_by_keys<T>(l, v, ix, rank_of);
      }
      for_each_slice<T>(l, [&](int64_t o, int64_t j, std::vector<Item<M>>& buf) {
        Item<M> it = pick(buf);
        v[o * l.inner + j] = static_cast<T>(it.v);
        ix[o * l.inner + j] = it.i;
      });
    });
  }
  if (!keepdim) {
    Shape s = reduce_detail::reduced_shape(t, mask, false);
    values = reshape(values, s);
    indices = reshape(indices, s);
  }
  return {values, indices};
}

// The k-th smallest item (0-based) of the first n items of buf, NaN largest, ties by index.
template <typename M>
Item<M> kth_item(std::vector<Item<M>>& buf, int64_t n, int64_t k) {
  std::nth_element(buf.begin(), buf.begin() + k, buf.begin() + n, ItemOrder<M>{});
  return buf[k];
}

template <typename M>
int64_t first_nan(const std::vector<Item<M>>& buf) {
  for (const auto& it : buf)
    if (is_nan(it.v)) return it.i;
  return -1;
}

// Median along dim: with `ignore_nan` NaNs are dropped (all-NaN gives NaN at index 0);
// otherwise any NaN makes the result that NaN, at its first position.
TensorPair median_dim(const Tensor& t, int64_t dim, bool keepdim, bool ignore_nan) {
  if (t.dtype() == ScalarType::Bool) EMBER_NOT_IMPLEMENTED("\"median_cpu\" not implemented for 'Bool'");
  const char* name = ignore_nan ? "nanmedian" : "median";
  dim = wrap_dim(dim, t.dim());
  reduce_detail::check_nonempty(t, reduce_detail::reduce_mask(t, dim), true, name);
  auto r = select_one(
      t, dim, keepdim, name,
      [ignore_nan]<typename M>(std::vector<Item<M>>& buf) -> Item<M> {
        if (!ignore_nan) {
          int64_t nan_at = first_nan(buf);
          if (nan_at >= 0) return buf[nan_at];
          return kth_item(buf, static_cast<int64_t>(buf.size()), (static_cast<int64_t>(buf.size()) - 1) / 2);
        }
        auto end = std::partition(buf.begin(), buf.end(), [](const Item<M>& it) { return !is_nan(it.v); });
        int64_t n = end - buf.begin();
        if (n == 0) return {buf[0].v, 0};
        return kth_item(buf, n, (n - 1) / 2);
      },
      [ignore_nan](int64_t n, int64_t n_nan, int64_t first_nan) -> SliceRank {
        if (!ignore_nan) return n_nan ? SliceRank{0, first_nan} : SliceRank{(n - 1) / 2};
        return n == n_nan ? SliceRank{0, 0} : SliceRank{(n - n_nan - 1) / 2};
      });
  record_selection(t, std::get<0>(r), std::get<1>(r), dim, keepdim,
                   ignore_nan ? "NanmedianBackward1" : "MedianBackward1");
  return r;
}

Tensor median_all(const Tensor& t, bool ignore_nan) {
  if (t.dtype() == ScalarType::Bool) EMBER_NOT_IMPLEMENTED("\"median_cpu\" not implemented for 'Bool'");
  Tensor flat = reshape(t, {-1});
  Tensor r;
  {
    autograd::NoGradGuard raw;
    if (t.numel() == 0) {
      r = full({}, std::numeric_limits<double>::quiet_NaN(), t.dtype());
    } else {
      r = reshape(std::get<0>(median_dim(flat, 0, false, ignore_nan)), {});
    }
  }
  if (auto n = autograd::make_node<LambdaBackward>(t)) {
    std::vector<bool> mask(std::max<int64_t>(t.dim(), 1), true);
    n->record(ignore_nan ? "NanmedianBackward0" : "MedianBackward0", {r}, {t}, {r},
              [mask](const TensorList& g, const TensorList& s) -> TensorList {
                return {reduce_detail::evenly_distribute(g[0], s[0], s[1], mask)};
              });
  }
  return r;
}

// ---- quantile ----

enum class Interp { Linear, Lower, Higher, Midpoint, Nearest };

Interp parse_interp(const std::string& s, const char* name) {
  if (s == "linear") return Interp::Linear;
  if (s == "lower") return Interp::Lower;
  if (s == "higher") return Interp::Higher;
  if (s == "midpoint") return Interp::Midpoint;
  if (s == "nearest") return Interp::Nearest;
  throw Error(
      detail::str_cat(name, "() interpolation must be one of linear, lower, higher, midpoint or nearest. Got ", s));
}

Tensor quantile_impl(const Tensor& t, const Tensor& q_in, bool q_scalar, std::optional<int64_t> dim, bool keepdim,
                     const std::string& interpolation, bool ignore_nan) {
  const char* name = ignore_nan ? "nanquantile" : "quantile";
  EMBER_CHECK(t.numel() > 0, name, "() input tensor must be non-empty");
  EMBER_CHECK(q_in.dim() <= 1, name, "() q must be a scalar or 1D tensor");
  EMBER_CHECK(t.dtype() == ScalarType::Float32 || t.dtype() == ScalarType::Float64, name,
              "() input tensor must be either float or double dtype");
  EMBER_CHECK(q_in.dtype() == t.dtype(), name, "() q tensor must be same dtype as the input tensor");
  Interp interp = parse_interp(interpolation, name);
  Tensor q = contiguous(to_dtype(q_in, ScalarType::Float64));
  const double* qp = q.data<double>();
  for (int64_t i = 0; i < q.numel(); ++i)
    EMBER_CHECK(qp[i] >= 0 && qp[i] <= 1, name, "() q values must be in the range [0, 1]");

  Tensor x = dim ? t : reshape(t, {-1});
  int64_t d = dim ? wrap_dim(*dim, t.dim()) : 0;
  if (x.dim() == 0) x = reshape(x, {1});
  Shape perm;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i != d) perm.push_back(i);
  perm.push_back(d);
  Tensor sorted = std::get<0>(sort(permute(x, perm), -1));  // (batch..., n), NaN last
  int64_t n = sorted.sizes().back(), batch = sorted.numel() / std::max<int64_t>(n, 1), nq = q.numel();

  // Per slice and q: the two sorted positions to interpolate between, the weight, and NaN.
  Shape idx_shape = sorted.sizes();
  idx_shape.back() = nq;
  Tensor lo = empty(idx_shape, ScalarType::Int64), hi = empty(idx_shape, ScalarType::Int64);
  Tensor weight = empty(idx_shape, ScalarType::Float64), is_nan_out = empty(idx_shape, ScalarType::Bool);
  {
    autograd::NoGradGuard ng;
    Tensor sd = contiguous(to_dtype(sorted, ScalarType::Float64));
    const double* sp = sd.data<double>();
    int64_t *lp = lo.data<int64_t>(), *hp = hi.data<int64_t>();
    double* wp = weight.data<double>();
    bool* np = is_nan_out.data<bool>();
    // Ranks are computed in the input's precision, as torch does (0.6f * 5 is exactly 3).
    auto fill = [&]<typename R>() {
      for (int64_t b = 0; b < batch; ++b) {
        int64_t valid = 0;
        while (valid < n && !std::isnan(sp[b * n + valid])) ++valid;
        int64_t m = ignore_nan ? valid : n;
        bool nan_result = ignore_nan ? valid == 0 : valid < n;
        for (int64_t k = 0; k < nq; ++k) {
          int64_t at = b * nq + k;
          R rank = static_cast<R>(qp[k]) * static_cast<R>(std::max<int64_t>(m - 1, 0));
          int64_t l = static_cast<int64_t>(std::floor(rank)), h = static_cast<int64_t>(std::ceil(rank));
          R w = rank - static_cast<R>(l);
          if (interp == Interp::Lower) h = l, w = 0;
          if (interp == Interp::Higher) l = h, w = 0;
          if (interp == Interp::Nearest) l = h = static_cast<int64_t>(std::nearbyint(rank)), w = 0;
          if (interp == Interp::Midpoint) w = l == h ? R(0) : R(0.5);
          lp[at] = l, hp[at] = h, wp[at] = w, np[at] = nan_result;
        }
      }
    };
    if (t.dtype() == ScalarType::Float32)
      fill.template operator()<float>();
    else
      fill.template operator()<double>();
  }
  Tensor v_lo = gather(sorted, -1, lo), v_hi = gather(sorted, -1, hi);
  Tensor w = to_dtype(weight, t.dtype());
  // torch's lerp: exact at both ends.
  Tensor diff = sub(v_hi, v_lo);
  Tensor res = where(lt(w, reduce_detail::num(0.5)), add(v_lo, mul(w, diff)),
                     sub(v_hi, mul(diff, sub(reduce_detail::num(1.0), w))));
  res = where(is_nan_out, reduce_detail::num(std::numeric_limits<double>::quiet_NaN()), res);
  // (batch..., nq) -> (nq, batch...) or (batch...) for a scalar q, then keepdim.
  int64_t bdims = res.dim() - 1;
  if (q_scalar) {
    res = reshape(res, Shape(res.sizes().begin(), res.sizes().end() - 1));
  } else {
    Shape p{bdims};
    for (int64_t i = 0; i < bdims; ++i) p.push_back(i);
    res = permute(res, p);
  }
  int64_t lead = q_scalar ? 0 : 1;
  if (keepdim) {
    if (dim && t.dim() == 0) {  // a 0-d input keeps no dims: the result is q's shape
      res = reshape(res, q_scalar ? Shape{} : Shape{nq});
    } else if (dim) {
      res = unsqueeze(res, lead + d);
    } else {
      Shape s(t.dim(), 1);
      if (!q_scalar) s.insert(s.begin(), nq);
      res = reshape(res, s);
    }
  } else if (!dim && t.dim() == 0 && !q_scalar) {
    res = reshape(res, {nq});
  }
  return contiguous(res);
}

// ---- unique ----

// Ordering and equality of rows (dim-wise unique) of a contiguous (n, m) block.
template <typename T>
struct Rows {
  const T* p;
  int64_t m;
  bool less(int64_t a, int64_t b) const {
    using M = opmath_t<T>;
    for (int64_t k = 0; k < m; ++k) {
      M x = static_cast<M>(p[a * m + k]), y = static_cast<M>(p[b * m + k]);
      if (less_nan(x, y)) return true;
      if (less_nan(y, x)) return false;
    }
    return false;
  }
  bool equal(int64_t a, int64_t b) const {
    using M = opmath_t<T>;
    for (int64_t k = 0; k < m; ++k)
      if (!(static_cast<M>(p[a * m + k]) == static_cast<M>(p[b * m + k]))) return false;
    return true;
  }
};

// Groups the n rows (elements when m == 1) of x, sorted first or in order, into unique rows:
// returns the representative row of each group, each row's group, and the group sizes.
//
// Elements (m == 1) sorted first take two faster roads, with the same groups, representatives
// (the first index of each value) and counts as the stable sort of indices (4.4x torch's time on
// 100k int64 labels): integers whose range is within a few times n are counted in buckets, and
// everything else sorts (value, index) pairs.
template <typename T>
bool group_elements(const T* p, int64_t n, std::vector<int64_t>& reps, std::vector<int64_t>& group,
                    std::vector<int64_t>& counts) {
  using M = opmath_t<T>;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (n == 0) return false;
    const auto [lo_it, hi_it] = std::minmax_element(p, p + n);
    // the range as an unsigned difference: int64's full range would overflow a signed one
    const uint64_t range =
        static_cast<uint64_t>(static_cast<int64_t>(*hi_it)) - static_cast<uint64_t>(static_cast<int64_t>(*lo_it));
    if (range < static_cast<uint64_t>(std::max<int64_t>(4 * n, 1 << 16))) {
      const int64_t lo = static_cast<int64_t>(*lo_it), buckets = static_cast<int64_t>(range) + 1;
      std::vector<int64_t> first(static_cast<size_t>(buckets), -1), size(static_cast<size_t>(buckets), 0);
      auto bucket = [&](int64_t i) {
        return static_cast<int64_t>(static_cast<uint64_t>(static_cast<int64_t>(p[i])) - static_cast<uint64_t>(lo));
      };
      for (int64_t i = 0; i < n; ++i) {
        const int64_t b = bucket(i);
        if (size[b]++ == 0) first[b] = i;
      }
      for (int64_t b = 0; b < buckets; ++b)  // reuse `first` as the bucket's group number
        if (size[b]) {
          reps.push_back(first[b]);
          counts.push_back(size[b]);
          first[b] = static_cast<int64_t>(reps.size()) - 1;
        }
      group.resize(n);
      for (int64_t i = 0; i < n; ++i) group[i] = first[bucket(i)];
      return true;
    }
  }
  std::vector<Item<M>> items(n);
  for (int64_t i = 0; i < n; ++i) items[i] = {load_as<M>(p + i), i};
  sort_items(items, false);
  group.assign(n, 0);
  reps.reserve(static_cast<size_t>(n));  // (growing them took a fifth of unique's time on 1M distinct floats)
  counts.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    if (k == 0 || !(items[k - 1].v == items[k].v)) {
      reps.push_back(items[k].i);
      counts.push_back(0);
    }
    group[items[k].i] = static_cast<int64_t>(reps.size()) - 1;
    ++counts.back();
  }
  return true;
}

template <typename T>
void group_rows(const Tensor& x, int64_t n, int64_t m, bool sort_first, std::vector<int64_t>& reps,
                std::vector<int64_t>& group, std::vector<int64_t>& counts) {
  if (m == 1 && sort_first && group_elements(x.data<T>(), n, reps, group, counts)) return;
  Rows<T> rows{x.data<T>(), m};
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (sort_first) std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return rows.less(a, b); });
  group.assign(n, 0);
  for (int64_t k = 0; k < n; ++k) {
    if (k == 0 || !rows.equal(order[k - 1], order[k])) {
      reps.push_back(order[k]);
      counts.push_back(0);
    }
    group[order[k]] = static_cast<int64_t>(reps.size()) - 1;
    ++counts.back();
  }
}

std::tuple<Tensor, Tensor, Tensor> unique_impl(const Tensor& t, bool sort_first, std::optional<int64_t> dim) {
  autograd::NoGradGuard raw;
  Tensor x;
  int64_t n, m, d = 0;
  if (dim) {
    d = wrap_dim(*dim, t.dim());
    EMBER_CHECK(t.dim() > 0, "unique: a 0-d tensor has no dim to take unique slices along");
    Shape perm{d};
    for (int64_t i = 0; i < t.dim(); ++i)
      if (i != d) perm.push_back(i);
    x = contiguous(permute(t, perm));
    n = t.sizes()[d];
    m = n ? x.numel() / n : 0;
  } else {
    x = contiguous(reshape(t, {-1}));
    n = x.numel();
    m = 1;
  }
  std::vector<int64_t> reps, group, counts;
  EMBER_DISPATCH_ALL(x.dtype(), "unique", [&] { group_rows<scalar_t>(x, n, m, sort_first, reps, group, counts); });
  int64_t u = static_cast<int64_t>(reps.size());
  Tensor rep_idx = empty({u}, ScalarType::Int64), inverse = empty({n}, ScalarType::Int64),
         cnt = empty({u}, ScalarType::Int64);
  std::copy(reps.begin(), reps.end(), rep_idx.data<int64_t>());
  std::copy(group.begin(), group.end(), inverse.data<int64_t>());
  std::copy(counts.begin(), counts.end(), cnt.data<int64_t>());
  Tensor values;
  if (!dim) {
    values = gather(x, 0, rep_idx);
    inverse = reshape(inverse, t.sizes());
  } else {
    Tensor rows2d = reshape(x, {n, m});
    Tensor idx2d = contiguous(expand(unsqueeze(rep_idx, 1), {u, m}));
    Shape vshape = x.sizes();
    vshape[0] = u;
    Tensor picked = reshape(gather(rows2d, 0, idx2d), vshape);
    Shape back(t.dim());  // inverse permutation of (d, others...)
    back[d] = 0;
    for (int64_t i = 0, k = 1; i < t.dim(); ++i)
      if (i != d) back[i] = k++;
    values = contiguous(permute(picked, back));
  }
  return {values, inverse, cnt};
}

}  // namespace

// ---- sort family ----

TensorPair sort(const Tensor& t, int64_t dim, bool descending, bool stable) {
  (void)stable;  // always stable
  EMBER_CHECK(!is_complex(t.dtype()), " Sort does not support complex dtypes on CPU");
  dim = wrap_dim(dim, t.dim());
  Tensor values = empty(t.sizes(), t.dtype()), indices = empty(t.sizes(), ScalarType::Int64);
  if (t.numel() > 0) {
    autograd::NoGradGuard raw;
    Layout l = reduce_detail::dim_layout(t, dim);
    EMBER_DISPATCH_ALL(t.dtype(), "sort", [&] {
      using T = scalar_t;
      using M = opmath_t<T>;
      T* v = values.data<T>();
      int64_t* ix = indices.data<int64_t>();
      if (radix_sort_slices(l, descending, v, ix) || short_sort_slices(l, descending, v, ix)) return;
      for_each_slice<T>(l, [&](int64_t o, int64_t j, std::vector<Item<M>>& buf) {
        sort_items(buf, descending);
        write_slice(buf, l.R, v, ix, o, j, l.inner);
      });
    });
  }
  record_selection(t, values, indices, dim, true, "SortBackward0");
  return {values, indices};
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending, bool stable) {
  autograd::NoGradGuard ng;
  return std::get<1>(sort(t, dim, descending, stable));
}

TensorPair topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
  (void)sorted;  // results always come sorted, which torch allows for sorted=False
  EMBER_CHECK(!is_complex(t.dtype()), "topk does not support complex dtypes on CPU");
  EMBER_CHECK(t.dtype() != ScalarType::Bool, "topk does not support bool dtypes on CPU");
  dim = wrap_dim(dim, t.dim());
  int64_t size = t.dim() ? t.sizes()[dim] : 1;
  EMBER_CHECK(k >= 0 && k <= size, "selected index k out of range");
  // A 0-d input gives a 0-d result holding its element for k = 0 as for k = 1 (torch's); the
  // kernels below would keep k = 0 items and leave that element unwritten.
  if (t.dim() == 0) k = 1;
  Tensor values = empty(with_size(t, dim, k), t.dtype()), indices = empty(with_size(t, dim, k), ScalarType::Int64);
  if (values.numel() > 0) {
    autograd::NoGradGuard raw;
    Layout l = reduce_detail::dim_layout(t, dim);
    EMBER_DISPATCH_ALL(t.dtype(), "topk", [&] {
      using T = scalar_t;
      using M = opmath_t<T>;
      T* v = values.data<T>();
      int64_t* ix = indices.data<int64_t>();
      if (k <= 32 && k * 8 <= l.R) {  // insertion costs up to k moves: small k only
        top_k_scan<T>(l, k, largest, v, ix);
        return;
      }
      if constexpr (kRadixSortable<M>) {
        if (radix_length(l.R)) {
          top_k_select<T>(l, k, largest, v, ix);
          return;
        }
      }
      for_each_slice<T>(l, [&](int64_t o, int64_t j, std::vector<Item<M>>& buf) {
        std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), ItemOrder<M>{largest});
        write_slice(buf, k, v, ix, o, j, l.inner);
      });
    });
  }
  record_selection(t, values, indices, dim, true, "TopkBackward0");
  return {values, indices};
}

TensorPair kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  if (t.dtype() == ScalarType::Bool || is_complex(t.dtype()))
    EMBER_NOT_IMPLEMENTED("\"kthvalue_cpu\" not implemented for '", dtype_name(t.dtype()), "'");
  dim = wrap_dim(dim, t.dim());
  int64_t size = t.dim() ? t.sizes()[dim] : 1;
  reduce_detail::check_nonempty(t, reduce_detail::reduce_mask(t, dim), true, "kthvalue");
  EMBER_CHECK(k >= 1 && k <= size, "kthvalue(): selected number k out of range for dimension ", dim);
  auto r = select_one(
      t, dim, keepdim, "kthvalue",
      [k]<typename M>(std::vector<Item<M>>& buf) { return kth_item(buf, static_cast<int64_t>(buf.size()), k - 1); },
      [k](int64_t, int64_t, int64_t) { return SliceRank{k - 1}; });
  record_selection(t, std::get<0>(r), std::get<1>(r), dim, keepdim, "KthvalueBackward0");
  return r;
}

Tensor median(const Tensor& t) { return median_all(t, false); }
TensorPair median(const Tensor& t, int64_t dim, bool keepdim) { return median_dim(t, dim, keepdim, false); }
Tensor nanmedian(const Tensor& t) { return median_all(t, true); }
TensorPair nanmedian(const Tensor& t, int64_t dim, bool keepdim) { return median_dim(t, dim, keepdim, true); }

TensorPair mode(const Tensor& t, int64_t dim, bool keepdim) {
  dim = wrap_dim(dim, t.dim());
  reduce_detail::check_nonempty(t, reduce_detail::reduce_mask(t, dim), true, "mode");
  // The most frequent value, the smallest among equally frequent ones, at its last position.
  auto r = select_one(t, dim, keepdim, "mode", []<typename M>(std::vector<Item<M>>& buf) {
    std::sort(buf.begin(), buf.end(), ItemOrder<M>{});
    Item<M> best = buf[0];
    int64_t best_count = 0, n = static_cast<int64_t>(buf.size());
    for (int64_t s = 0; s < n;) {
      int64_t e = s + 1;
      while (e < n && buf[e].v == buf[s].v) ++e;
      if (e - s > best_count) best_count = e - s, best = buf[e - 1];
      s = e;
    }
    return best;
  });
  record_selection(t, std::get<0>(r), std::get<1>(r), dim, keepdim, "ModeBackward0");
  return r;
}

Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                const std::string& interpolation) {
  return quantile_impl(t, q, q.dim() == 0, dim, keepdim, interpolation, false);
}
Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) {
  EMBER_CHECK(q >= 0 && q <= 1, "quantile() q must be in the range [0, 1] but got ", q);
  return quantile_impl(t, full({}, q, t.dtype()), true, dim, keepdim, interpolation, false);
}
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return quantile_impl(t, q, q.dim() == 0, dim, keepdim, interpolation, true);
}
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  EMBER_CHECK(q >= 0 && q <= 1, "nanquantile() q must be in the range [0, 1] but got ", q);
  return quantile_impl(t, full({}, q, t.dtype()), true, dim, keepdim, interpolation, true);
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted, bool return_inverse, bool return_counts,
                                          std::optional<int64_t> dim) {
  (void)sorted, (void)return_inverse, (void)return_counts;  // always sorted; inverse and counts are cheap
  return unique_impl(t, true, dim);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  (void)return_inverse, (void)return_counts;
  return unique_impl(t, false, dim);
}

// ---- counting ----

Tensor bincount(const Tensor& t, const Tensor& weights, int64_t minlength) {
  if (!is_integral(t.dtype(), false))
    EMBER_NOT_IMPLEMENTED("\"bincount_cpu\" not implemented for '", dtype_name(t.dtype()), "'");
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  EMBER_CHECK(t.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  if (weights.defined())
    EMBER_CHECK(weights.dim() == 1 && weights.numel() == t.numel(),
                "weights should be 1-d and have the same length as input");
  Tensor x = contiguous(to_dtype(t, ScalarType::Int64));
  const int64_t* xp = x.data<int64_t>();
  const int64_t n = x.numel();
  int64_t low = 0, top = -1;  // one branch-free pass; a negative value raises after it
  for (int64_t i = 0; i < n; ++i) low = std::min(low, xp[i]), top = std::max(top, xp[i]);
  EMBER_CHECK(low >= 0, "bincount only supports 1-d non-negative integral inputs.");
  EMBER_CHECK(top < std::numeric_limits<int64_t>::max(), "bincount: a value of ", top, " needs too many bins");
  const int64_t len = std::max(minlength, top + 1);
  Tensor w = weights.defined() ? contiguous(to_dtype(weights, ScalarType::Float64)) : Tensor();
  Tensor out = zeros({len}, weights.defined() ? ScalarType::Float64 : ScalarType::Int64);
  // Note [bincount]: fixed chunks of the input count into their own histograms in parallel, then
  // each bin adds its chunks in chunk order, so the weighted sums do not depend on the thread count.
  // Only when the histograms are small next to the input (one serial pass ran at half torch's speed).
  constexpr int64_t kChunk = int64_t{1} << 15;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const bool split = chunks > 1 && len * chunks <= n / 4;
  auto count = [&]<typename A>(A* acc) {
    const double* wp = w.defined() ? w.data<double>() : nullptr;
    auto run = [&](A* h, int64_t i0, int64_t i1) {
      if (wp)
        for (int64_t i = i0; i < i1; ++i) h[xp[i]] += static_cast<A>(wp[i]);
      else
        for (int64_t i = i0; i < i1; ++i) ++h[xp[i]];
    };
    if (!split) return run(acc, 0, n);
    const int64_t stride = (len + 7) / 8 * 8;  // whole cache lines: threads never share one
    std::vector<A> part(static_cast<size_t>(chunks * stride), A(0));
    parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) run(part.data() + c * stride, c * kChunk, std::min(n, (c + 1) * kChunk));
    });
    parallel_for(0, len, std::max<int64_t>(1, kGrainSize / chunks), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        for (int64_t c = 0; c < chunks; ++c) acc[b] += part[static_cast<size_t>(c * stride + b)];
    });
  };
  if (!weights.defined()) {
    count(out.data<int64_t>());
    return out;
  }
  count(out.data<double>());
  return to_dtype(out, weights.dtype() == ScalarType::Float32 ? ScalarType::Float32 : ScalarType::Float64);
}

Tensor histc(const Tensor& t, int64_t bins, double min, double max) {
  if (!is_floating_point(t.dtype()))
    EMBER_NOT_IMPLEMENTED("\"histogram_cpu\" not implemented for '", dtype_name(t.dtype()), "'");
  EMBER_CHECK(bins > 0, "torch.histc(): bins must be > 0, but got ", bins, " for bins");
  Tensor x = contiguous(t);
  Tensor out = zeros({bins}, t.dtype());
  EMBER_DISPATCH_FLOAT(t.dtype(), "histc", [&] {
    using T = scalar_t;
    using M = opmath_t<T>;
    const T* p = x.data<T>();
    int64_t n = x.numel();
    M lo = static_cast<M>(min), hi = static_cast<M>(max);
    if (lo == hi && n > 0) {  // the data's range
      lo = std::numeric_limits<M>::infinity(), hi = -lo;
      for (int64_t i = 0; i < n; ++i) {
        M v = static_cast<M>(p[i]);
        if (v != v) {  // NaN makes the range NaN (torch's min/max propagate it): the check below raises
          lo = hi = v;
          break;
        }
        lo = std::min(lo, v), hi = std::max(hi, v);
      }
    }
    if (lo == hi) lo -= 1, hi += 1;
    EMBER_CHECK(!(lo > hi), "torch.histc(): max must be larger than min");
    EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc(): range of [", lo, ", ", hi, "] is not finite");
    std::vector<double> counts(bins, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      M v = static_cast<M>(p[i]);
      if (!(v >= lo && v <= hi)) continue;
      int64_t b = static_cast<int64_t>((v - lo) * static_cast<M>(bins) / (hi - lo));
      counts[std::min(b, bins - 1)] += 1;
    }
    T* op = out.data<T>();
    for (int64_t b = 0; b < bins; ++b) op[b] = static_cast<T>(counts[b]);
  });
  return out;
}

}  // namespace ember
