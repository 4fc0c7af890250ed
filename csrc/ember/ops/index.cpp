// Advanced indexing and the ops built on it: index / index_put, gather / scatter, index_*,
// masked_*, take / put, nonzero, searchsorted.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <limits>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/mem_overlap.h"
#include "ember/core/parallel.h"
#include "ember/cpu/element_bytes.h"
#include "ember/cpu/index_kernels.h"
#include "ember/ops/complex.h"
#include "ember/ops/ops.h"

namespace ember {
Tensor reduce_identity(ScalarType dt, const std::string& reduce);
namespace {
using namespace autograd;

// A LambdaBackward over a runtime list of inputs (null when nothing needs a gradient).
std::shared_ptr<LambdaBackward> lambda_node(const char* name, const TensorVec& inputs) {
  auto n = make_node_list<LambdaBackward>(inputs);
  if (!n) return nullptr;
  n->name_ = name;
  return n;
}
Tensor cast_to(const Tensor& g, ScalarType dt) { return g.dtype() == dt ? g : to_dtype(g, dt); }
Tensor num0(Scalar s, ScalarType dt) { return full({}, s, dt); }

// Note [Advanced indexing]
// After bool masks become their nonzero() coordinates, the index tensors broadcast to one shape B.
// The result is t's non-indexed dims with B in place of the indexed ones when those are adjacent,
// else B first (PyTorch's and NumPy's rule). Each result element reads t at
// pre_offset + b_offset + post_offset (element strides of t), so t may have any layout, and
// index_put writes through the same offsets into t itself.
struct Plan {
  Shape out_sizes;
  std::vector<int64_t> pre, mid, post;  // element offsets into t
};

std::vector<int64_t> dim_offsets(const Tensor& t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= t.sizes()[d];
  std::vector<int64_t> out(n, 0);
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t k = 0; k < dims.size(); ++k) off += idx[k] * t.strides()[dims[k]];
    out[i] = off;
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
      if (++idx[k] < t.sizes()[dims[k]]) break;
      idx[k] = 0;
    }
  }
  return out;
}

// Bool/uint8 masks -> one int64 tensor per dim they cover; other integer tensors -> int64.
TensorVec expand_masks(const Tensor& t, const TensorVec& indices) {
  TensorVec out;
  for (const Tensor& ix : indices) {
    if (!ix.defined()) {
      out.push_back(ix);
      continue;
    }
    EMBER_CHECK_INDEX(is_integral(ix.dtype(), true), "tensors used as indices must be long, int, byte or bool tensors");
    if (ix.dtype() == ScalarType::Bool || ix.dtype() == ScalarType::UInt8) {
      int64_t d0 = static_cast<int64_t>(out.size());
      EMBER_CHECK_INDEX(d0 + ix.dim() <= t.dim(), "too many indices for tensor of dimension ", t.dim());
      for (int64_t k = 0; k < ix.dim(); ++k)
        EMBER_CHECK_INDEX(ix.sizes()[k] == t.sizes()[d0 + k], "The shape of the mask ", ix.shape_str(), " at index ", k,
                          " does not match the shape of the indexed tensor ", t.shape_str(), " at index ", d0 + k);
      Tensor nz = nonzero(ix);
      for (int64_t k = 0; k < ix.dim(); ++k) out.push_back(select(nz, 1, k));
    } else {
      out.push_back(cast_to(ix, ScalarType::Int64));
    }
  }
  EMBER_CHECK_INDEX(static_cast<int64_t>(out.size()) <= t.dim(), "too many indices for tensor of dimension ", t.dim());
  while (static_cast<int64_t>(out.size()) < t.dim()) out.push_back(Tensor());
  return out;
}

[[noreturn]] void throw_value_shape(const Tensor& values, IntArrayRef out_sizes) {
  throw Error(detail::str_cat("shape mismatch: value tensor of shape ", values.shape_str(),
                              " cannot be broadcast to indexing result of shape ", shape_str(out_sizes)));
}

// `idx` must already be expanded (expand_masks). With `values` (index_put), their shape is checked
// against the result's before any index is: torch reports a shape mismatch first.
Plan make_plan(const Tensor& t, const TensorVec& idx, const Tensor* values = nullptr) {
  std::vector<int64_t> adv, pre_dims, post_dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (idx[d].defined()) adv.push_back(d);
  EMBER_CHECK_INDEX(!adv.empty(), "index: expected at least one index tensor");
  bool adjacent = adv.back() - adv.front() + 1 == static_cast<int64_t>(adv.size());
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (idx[d].defined()) continue;
    (adjacent && d < adv.front() ? pre_dims : post_dims).push_back(d);
  }
  Shape b = idx[adv[0]].sizes();
  for (size_t k = 1; k < adv.size(); ++k) {
    const Shape& s = idx[adv[k]].sizes();
    try {
      b = broadcast_shapes(b, s);
    } catch (const Error&) {
      std::string shapes;
      for (size_t j = 0; j < adv.size(); ++j) shapes += (j ? ", " : "") + idx[adv[j]].shape_str();
      throw IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes " + shapes);
    }
  }
  Plan p;
  for (int64_t d : pre_dims) p.out_sizes.push_back(t.sizes()[d]);
  p.out_sizes.insert(p.out_sizes.end(), b.begin(), b.end());
  for (int64_t d : post_dims) p.out_sizes.push_back(t.sizes()[d]);
  if (values) {
    const Shape& vs = values->sizes();
    size_t nv = vs.size(), no = p.out_sizes.size();
    bool fits = nv <= no;
    for (size_t i = 0; fits && i < nv; ++i) fits = vs[nv - 1 - i] == 1 || vs[nv - 1 - i] == p.out_sizes[no - 1 - i];
    if (!fits) throw_value_shape(*values, p.out_sizes);
  }
  int64_t nb = numel_of(b);
  p.mid.assign(nb, 0);
  for (int64_t d : adv) {
    Tensor ix = contiguous(expand(idx[d], b));
    const int64_t* ip = ix.data<int64_t>();
    int64_t size = t.sizes()[d], stride = t.strides()[d];
    int64_t* mid = p.mid.data();
    // Threads only flag a bad index (no throwing out of OpenMP); the first one is reported below.
    std::atomic<bool> bad{false};
    parallel_for(0, nb, kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        int64_t v = ip[i];
        if (v < -size || v >= size) {
          bad.store(true, std::memory_order_relaxed);
          continue;
        }
        mid[i] += (v < 0 ? v + size : v) * stride;
      }
    });
    if (bad.load())
      for (int64_t i = 0; i < nb; ++i)
        EMBER_CHECK_INDEX(ip[i] >= -size && ip[i] < size, "index ", ip[i], " is out of bounds for dimension ", d,
                          " with size ", size);
  }
  p.pre = dim_offsets(t, pre_dims);
  p.post = dim_offsets(t, post_dims);
  return p;
}

template <typename F>
void for_each_offset(const Plan& p, F f) {
  int64_t k = 0;
  for (int64_t a : p.pre)
    for (int64_t b : p.mid)
      for (int64_t c : p.post) f(k++, a + b + c);
}

// Reads are independent, so the (pre, mid) rows split across threads; each writes its own
// output range, and the result does not depend on the thread count.
template <size_t N>
void gather_bytes(const Plan& p, const char* src, char* dst) {
  const Bytes<N>* s = reinterpret_cast<const Bytes<N>*>(src);
  Bytes<N>* d = reinterpret_cast<Bytes<N>*>(dst);
  int64_t nmid = static_cast<int64_t>(p.mid.size()), npost = static_cast<int64_t>(p.post.size());
  int64_t rows = static_cast<int64_t>(p.pre.size()) * nmid;
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(npost, 1));
  parallel_for(0, rows, grain, [&](int64_t lo, int64_t hi) {
    int64_t a = lo / nmid, m = lo % nmid;  // one division per chunk, then counters
    Bytes<N>* o = d + lo * npost;
    for (int64_t r = lo; r < hi; ++r) {
      const Bytes<N>* row = s + p.pre[a] + p.mid[m];
      if (npost == 1) {
        *o++ = row[p.post[0]];
      } else {
        for (int64_t c = 0; c < npost; ++c) *o++ = row[p.post[c]];
      }
      if (++m == nmid) m = 0, ++a;
    }
  });
}
template <size_t N>
void scatter_bytes(const Plan& p, const char* src, char* dst) {
  const Bytes<N>* s = reinterpret_cast<const Bytes<N>*>(src);
  Bytes<N>* d = reinterpret_cast<Bytes<N>*>(dst);
  for_each_offset(p, [&](int64_t k, int64_t off) { d[off] = s[k]; });
}
void move_elements(size_t esize, const Plan& p, const char* src, char* dst, bool scatter) {
  bool ok = with_element_bytes(esize, [&](auto bytes) {
    constexpr size_t B = decltype(bytes)::value;
    scatter ? scatter_bytes<B>(p, src, dst) : gather_bytes<B>(p, src, dst);
  });
  if (!ok) EMBER_NOT_IMPLEMENTED("index: element size ", esize);
}

// One step of an index/scatter reduction, in T's opmath type (shared by index_put and scatter).
template <typename T>
inline T combine(T dst, T val, IndexReduce mode) {
  using M = opmath_t<T>;
  M a = static_cast<M>(dst), b = static_cast<M>(val);
  M r;
  if constexpr (std::is_same_v<T, bool>) {
    r = mode == IndexReduce::Add || mode == IndexReduce::Max ? (a || b) : (a && b);
  } else {
    switch (mode) {
      case IndexReduce::Add:
        r = static_cast<M>(a + b);
        break;
      case IndexReduce::Mul:
        r = static_cast<M>(a * b);
        break;
      case IndexReduce::Max:
        r = (b > a || b != b) ? b : a;
        break;
      default:
        r = (b < a || b != b) ? b : a;
        break;
    }
  }
  return static_cast<T>(r);
}

template <typename T>
void reduce_into(const Plan& p, const T* v, T* dst, IndexReduce mode) {
  for_each_offset(p, [&](int64_t k, int64_t off) { dst[off] = combine(dst[off], v[k], mode); });
}

// Writes values (broadcast to the index result) into t without autograd.
void put_raw(const Tensor& t, const TensorVec& idx, const Tensor& values, IndexReduce mode) {
  Plan p = make_plan(t, idx, &values);
  if (numel_of(p.out_sizes) == 0) return;
  Tensor v;
  try {
    v = contiguous(cast_to(expand(values, p.out_sizes), t.dtype()));
  } catch (const Error&) {
    throw_value_shape(values, p.out_sizes);
  }
  if (mode == IndexReduce::None) {
    move_elements(t.element_size(), p, static_cast<const char*>(v.data_ptr()), static_cast<char*>(t.data_ptr()), true);
  } else if (is_complex(t.dtype()) && (mode == IndexReduce::Add || mode == IndexReduce::Mul)) {
    EMBER_DISPATCH_COMPLEX(t.dtype(), "index_put", [&] {  // accumulate; complex has no order (no max/min)
      const scalar_t* vp = v.data<scalar_t>();
      scalar_t* dst = t.data<scalar_t>();
      if (mode == IndexReduce::Add)
        for_each_offset(p, [&](int64_t k, int64_t off) { dst[off] += vp[k]; });
      else
        for_each_offset(p, [&](int64_t k, int64_t off) { dst[off] *= vp[k]; });
    });
  } else {
    EMBER_DISPATCH_ALL(t.dtype(), "index_put",
                       [&] { reduce_into<scalar_t>(p, v.data<scalar_t>(), t.data<scalar_t>(), mode); });
  }
}

Tensor index_raw(const Tensor& t, const TensorVec& idx) {
  Plan p = make_plan(t, idx);
  Tensor out = empty(p.out_sizes, t.dtype());
  if (out.numel() > 0)
    move_elements(t.element_size(), p, static_cast<const char*>(t.data_ptr()), static_cast<char*>(out.data_ptr()),
                  false);
  return out;
}

const char* reduce_name(IndexReduce m) {
  switch (m) {
    case IndexReduce::Mul:
      return "multiply";
    case IndexReduce::Max:
      return "amax";
    case IndexReduce::Min:
      return "amin";
    default:
      return "sum";
  }
}

// `raw`, when given, computes the result into the contiguous copy of t in place of the plan
// (scatter's kernels); the recorded node is the same either way.
Tensor index_put_impl(const Tensor& t, const TensorVec& indices, const Tensor& values, IndexReduce mode,
                      const std::function<void(const Tensor&)>& raw = {}) {
  TensorVec idx = expand_masks(t, indices);
  Tensor out;
  {
    NoGradGuard g;
    out = clone(t, MemoryFormat::Contiguous);
    if (raw)
      raw(out);
    else
      put_raw(out, idx, values, mode);
  }
  if (auto n = lambda_node("IndexPutBackward0", {t, values})) {
    Shape vs = values.sizes();
    ScalarType vd = values.dtype(), td = t.dtype();
    n->fn = [idx, vs, vd, td, mode](const TensorList& g, const TensorList&) -> TensorList {
      if (mode != IndexReduce::None && mode != IndexReduce::Add)
        EMBER_NOT_IMPLEMENTED("the derivative of scatter with reduce='", reduce_name(mode), "' is not implemented");
      TensorList r(2);
      r[0] = mode == IndexReduce::Add ? g[0] : index_put(g[0], idx, num0(0, g[0].dtype()));
      r[1] = cast_to(sum_to(index(g[0], idx), vs), vd);
      (void)td;
      return r;
    };
    set_history(out, n);
  }
  return out;
}

// torch's checks of gather/scatter's index: integer dtype, self's rank, no larger than self
// apart from dim.
void check_scatter_index(const Tensor& t, int64_t dim, const Tensor& index, const char* op) {
  EMBER_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, op,
              "(): Expected dtype int64 for index");
  int64_t nd = std::max<int64_t>(t.dim(), 1);
  EMBER_CHECK(std::max<int64_t>(index.dim(), 1) == nd,
              "Index tensor must have the same number of dimensions as input tensor");
  for (int64_t d = 0; d < index.dim(); ++d)
    EMBER_CHECK(d == dim || index.sizes()[d] <= t.sizes()[d], "Size does not match at dimension ", d,
                " expected index ", index.shape_str(), " to be no larger than self ", t.shape_str(),
                " apart from dimension ", dim);
}
// gather/scatter address t with `index` along dim and aranges along the other dims (the
// advanced-indexing form scatter's index_put node differentiates through).
TensorVec scatter_indices(const Tensor& t, int64_t dim, const Tensor& index, const char* op) {
  check_scatter_index(t, dim, index, op);
  TensorVec out;
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d == dim) {
      out.push_back(index);
      continue;
    }
    Shape s(index.dim(), 1);
    s[d] = index.sizes()[d];
    out.push_back(view(arange(0, index.sizes()[d], 1, ScalarType::Int64), s));
  }
  return out;
}
// Note [Gather/scatter kernels]
// gather and scatter* view the index as [O, K, N]: O the positions of the dims before dim, K =
// index.size(dim), N the positions of the dims after it. An (o, i) pair names one position of t's
// other dims (index is no larger than t there), so scatter threads own disjoint (o, i) ranges and
// write disjoint elements, each applying its K updates in increasing k: the order the serial
// index_put plan used, so results match it and do not depend on the thread count. Offsets of a
// tensor for o and i come from tables of size O and N (any strides), or i * stride when the
// inner dims collapse to one stride. Index values must lie in [0, size): negative ones raise, as
// torch's gather/scatter do (advanced indexing wraps them; these ops do not).
struct Side {  // where one tensor's elements lie, for the [O, K, N] walk
  std::vector<int64_t> outer, inner;
  int64_t dim_stride = 0, inner_stride = 0;
  bool linear = false;  // inner[i] == i * inner_stride
};
// Row-major element offsets of the positions of `sizes`' dims [lo, hi) under `strides`.
std::vector<int64_t> span_offsets(const Shape& sizes, const Shape& strides, int64_t lo, int64_t hi) {
  int64_t n = 1;
  for (int64_t d = lo; d < hi; ++d) n *= sizes[d];
  std::vector<int64_t> out(n, 0);
  std::vector<int64_t> pos(hi - lo, 0);
  int64_t off = 0;
  for (int64_t j = 0; j < n; ++j) {
    out[j] = off;
    for (int64_t d = hi - 1; d >= lo; --d) {
      off += strides[d];
      if (++pos[d - lo] < sizes[d]) break;
      off -= strides[d] * sizes[d];
      pos[d - lo] = 0;
    }
  }
  return out;
}
// `sizes` is the index's shape (the walk), `strides` the tensor's own.
Side make_side(const Shape& sizes, const Shape& strides, int64_t dim) {
  Side s;
  int64_t nd = static_cast<int64_t>(sizes.size());
  s.outer = span_offsets(sizes, strides, 0, dim);
  s.inner = span_offsets(sizes, strides, dim + 1, nd);
  s.dim_stride = strides[dim];
  s.inner_stride = s.inner.size() > 1 ? s.inner[1] : 0;
  s.linear = true;
  for (size_t i = 0; i < s.inner.size() && s.linear; ++i)
    s.linear = s.inner[i] == static_cast<int64_t>(i) * s.inner_stride;
  return s;
}
struct Walk {
  int64_t O = 1, K = 1, N = 1, size = 0;  // size: t.size(dim), the bound on index values
  const int64_t* ip = nullptr;            // contiguous int64 index
};
Walk make_walk(const Tensor& t, int64_t dim, const Tensor& ix64) {
  Walk w;
  const Shape& s = ix64.sizes();
  for (int64_t d = 0; d < dim; ++d) w.O *= s[d];
  w.K = s[dim];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(s.size()); ++d) w.N *= s[d];
  w.size = t.sizes()[dim];
  w.ip = ix64.data<int64_t>();
  return w;
}
inline int64_t inner_at(const Side& s, int64_t i) { return s.linear ? i * s.inner_stride : s.inner[i]; }
// v outside [0, size), in one unsigned compare.
inline bool out_of_range(int64_t v, int64_t size) { return static_cast<uint64_t>(v) >= static_cast<uint64_t>(size); }
// The first out-of-range index in row-major order, raised as torch does (RuntimeError).
[[noreturn]] void throw_bad_index(const Walk& w, int64_t dim) {
  int64_t n = w.O * w.K * w.N;
  for (int64_t j = 0; j < n; ++j) {
    int64_t v = w.ip[j];
    if (v < 0 || v >= w.size)
      throw Error(detail::str_cat("index ", v, " is out of bounds for dimension ", dim, " with size ", w.size));
  }
  throw Error("index out of bounds");  // unreachable: a thread flagged a bad index
}

// Whether prefetching the next of `rows` rows of `lines` cache lines pays: only when they come
// from memory. Rows already in cache ran slower with the prefetches (256x1024 float gather along
// dim 1: 2x torch's time; 4 MB of rows: 1.6x faster with them).
bool worth_prefetching(int64_t rows, int64_t lines) { return rows * lines * 64 >= (int64_t{2} << 20); }

// Reads are independent: the (o, k) rows split across threads, each writing its own output range.
template <size_t B, bool Linear>
void gather_walk(const Walk& w, const Side& src, const char* s_, char* d_, std::atomic<bool>& bad) {
  const Bytes<B>* s = reinterpret_cast<const Bytes<B>*>(s_);
  Bytes<B>* d = reinterpret_cast<Bytes<B>*>(d_);
  int64_t rows = w.O * w.K, N = w.N, size = w.size, sd = src.dim_stride;
  int64_t grain = std::max<int64_t>(1, kGrainSize / N);
  parallel_for(0, rows, grain, [&](int64_t lo, int64_t hi) {
    int64_t o = lo / w.K, k = lo % w.K;
    bool b = false;
    if (N == 1) {
      // Random reads within one src row per output row: prefetch the next row in order (see
      // select_walk).
      const int64_t* ip = w.ip;
      const int64_t K = w.K, lines = (size * sd * static_cast<int64_t>(B) + 63) / 64;
      const bool pf = sd * static_cast<int64_t>(B) <= 16 && lines <= K / 8 + 1 && worth_prefetching(w.O, lines);
      const double line_per_k = static_cast<double>(lines) / static_cast<double>(K);  // no division per line
      for (int64_t r = lo, k0 = k; r < hi; ++o, k0 = 0) {
        const Bytes<B>* base = s + src.outer[o];
        const int64_t kend = std::min<int64_t>(K, k0 + (hi - r));
        const int64_t* irow = ip + (r - k0);
        Bytes<B>* out = d + (r - k0);
        const char* next = pf && o + 1 < w.O ? reinterpret_cast<const char*>(s + src.outer[o + 1]) : nullptr;
        for (int64_t kk = k0; kk < kend; ++kk) {
          if (next && (kk & 7) == 0) __builtin_prefetch(next + static_cast<int64_t>(kk * line_per_k) * 64);
          int64_t v = irow[kk];
          if (out_of_range(v, size))
            b = true;
          else
            out[kk] = base[v * sd];
        }
        r += kend - k0;
      }
    } else {
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t* ir = w.ip + r * N;
        Bytes<B>* out = d + r * N;
        const Bytes<B>* base = s + src.outer[o];
        for (int64_t i = 0; i < N; ++i) {
          int64_t v = ir[i];
          if (out_of_range(v, size)) {
            b = true;
            continue;
          }
          int64_t off = v * sd;
          out[i] = base[off + (Linear ? i * src.inner_stride : src.inner[i])];
        }
        if (++k == w.K) k = 0, ++o;
      }
    }
    if (b) bad.store(true, std::memory_order_relaxed);
  });
}

// out[o, index[o, k, i], i] = op(that, v[o, k, i]); threads own disjoint (o, i) ranges. PerK:
// the index holds one value per k (index_add's), else one per (o, k, i) (scatter's).
template <typename T, bool Linear, bool PerK = false, typename Op>
void scatter_walk(const Walk& w, const Side& dst, const Side& val, T* out, const T* v, Op op, std::atomic<bool>& bad) {
  int64_t N = w.N, K = w.K, size = w.size, od = dst.dim_stride, vd = val.dim_stride;
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K, 1));
  parallel_for(0, w.O * N, grain, [&](int64_t lo, int64_t hi) {
    bool b = false;
    if (N == 1) {  // dim is the last non-trivial dim: one (o) per thread-owned row
      // Random updates within one out row: prefetch the next row in order (see select_walk).
      const int64_t lines = (size * od * static_cast<int64_t>(sizeof(T)) + 63) / 64;
      const bool pf = od * static_cast<int64_t>(sizeof(T)) <= 16 && lines <= K / 8 + 1 && worth_prefetching(w.O, lines);
      const double line_per_k = static_cast<double>(lines) / static_cast<double>(K);
      for (int64_t o = lo; o < hi; ++o) {
        T* obase = out + dst.outer[o];
        const T* vrow = v + val.outer[o];
        const int64_t* ir = PerK ? w.ip : w.ip + o * K;
        const char* next = pf && o + 1 < hi ? reinterpret_cast<const char*>(out + dst.outer[o + 1]) : nullptr;
        for (int64_t k = 0; k < K; ++k) {
          if (next && (k & 7) == 0) __builtin_prefetch(next + static_cast<int64_t>(k * line_per_k) * 64, 1);
          int64_t x = ir[k];
          if (out_of_range(x, size)) {
            b = true;
            continue;
          }
          T& slot = obase[x * od];
          slot = op(slot, vrow[k * vd]);
        }
      }
      if (b) bad.store(true, std::memory_order_relaxed);
      return;
    }
    for (int64_t o = lo / N; o * N < hi; ++o) {
      int64_t i0 = std::max<int64_t>(lo - o * N, 0), i1 = std::min<int64_t>(hi - o * N, N);
      T* obase = out + dst.outer[o];
      const T* vrow = v + val.outer[o];
      for (int64_t k = 0; k < K; ++k, vrow += vd) {
        if constexpr (PerK) {
          int64_t x = w.ip[k];
          if (out_of_range(x, size)) {
            b = true;
            continue;
          }
          T* orow = obase + x * od;
          if (Linear && dst.inner_stride == 1 && val.inner_stride == 1) {
            for (int64_t i = i0; i < i1; ++i) orow[i] = op(orow[i], vrow[i]);
          } else {
            for (int64_t i = i0; i < i1; ++i) {
              T& slot = orow[Linear ? i * dst.inner_stride : dst.inner[i]];
              slot = op(slot, vrow[Linear ? i * val.inner_stride : val.inner[i]]);
            }
          }
        } else {
          const int64_t* ir = w.ip + (o * K + k) * N;
          for (int64_t i = i0; i < i1; ++i) {
            int64_t x = ir[i];
            if (out_of_range(x, size)) {
              b = true;
              continue;
            }
            T& slot = obase[x * od + (Linear ? i * dst.inner_stride : dst.inner[i])];
            slot = op(slot, vrow[Linear ? i * val.inner_stride : val.inner[i]]);
          }
        }
      }
    }
    if (b) bad.store(true, std::memory_order_relaxed);
  });
}

// gather's raw compute: out (contiguous, index's shape) = t[..., index, ...] along dim.
Tensor gather_raw(const Tensor& t, int64_t dim, const Tensor& index) {
  Tensor ix = contiguous(cast_to(index, ScalarType::Int64));
  Tensor out = empty(ix.sizes(), t.dtype());
  if (out.numel() == 0) return out;
  Walk w = make_walk(t, dim, ix);
  Side src = make_side(ix.sizes(), t.strides(), dim);
  std::atomic<bool> bad{false};
  const char* s = static_cast<const char*>(t.data_ptr());
  char* d = static_cast<char*>(out.data_ptr());
  bool ok = with_element_bytes(t.element_size(), [&](auto bytes) {
    constexpr size_t B = decltype(bytes)::value;
    src.linear ? gather_walk<B, true>(w, src, s, d, bad) : gather_walk<B, false>(w, src, s, d, bad);
  });
  if (!ok) EMBER_NOT_IMPLEMENTED("gather: element size ", t.element_size());
  if (bad.load()) throw_bad_index(w, dim);
  return out;
}

// The typed scatter_walk over out (values v already in out's dtype) for one reduction mode.
template <bool PerK>
void scatter_kernel(const Tensor& out, const Walk& w, const Side& dst, const Side& val, const Tensor& v,
                    IndexReduce mode, std::atomic<bool>& bad) {
  bool linear = dst.linear && val.linear;
  auto run = [&](auto* o, const auto* vp, auto op) {
    using T = std::remove_pointer_t<decltype(o)>;
    linear ? scatter_walk<T, true, PerK>(w, dst, val, o, vp, op, bad)
           : scatter_walk<T, false, PerK>(w, dst, val, o, vp, op, bad);
  };
  if (mode == IndexReduce::None) {
    auto copy = [](auto, auto b) { return b; };
    bool ok = with_element_bytes(out.element_size(), [&](auto bytes) {
      using E = Bytes<decltype(bytes)::value>;
      run(static_cast<E*>(out.data_ptr()), static_cast<const E*>(v.data_ptr()), copy);
    });
    if (!ok) EMBER_NOT_IMPLEMENTED("scatter: element size ", out.element_size());
  } else if (is_complex(out.dtype()) && (mode == IndexReduce::Add || mode == IndexReduce::Mul)) {
    EMBER_DISPATCH_COMPLEX(out.dtype(), "index_put", [&] {
      if (mode == IndexReduce::Add)
        run(out.data<scalar_t>(), v.data<scalar_t>(), [](scalar_t a, scalar_t b) { return a + b; });
      else
        run(out.data<scalar_t>(), v.data<scalar_t>(), [](scalar_t a, scalar_t b) { return a * b; });
    });
  } else {
    EMBER_DISPATCH_ALL(out.dtype(), "index_put", [&] {  // the name errors always gave
      scalar_t* o = out.data<scalar_t>();
      const scalar_t* vp = v.data<scalar_t>();
      switch (mode) {
        case IndexReduce::Add:
          return run(o, vp, [](scalar_t a, scalar_t b) { return combine(a, b, IndexReduce::Add); });
        case IndexReduce::Mul:
          return run(o, vp, [](scalar_t a, scalar_t b) { return combine(a, b, IndexReduce::Mul); });
        case IndexReduce::Max:
          return run(o, vp, [](scalar_t a, scalar_t b) { return combine(a, b, IndexReduce::Max); });
        default:
          return run(o, vp, [](scalar_t a, scalar_t b) { return combine(a, b, IndexReduce::Min); });
      }
    });
  }
}

// scatter's raw compute into `out` (a fresh contiguous tensor of t's shape): values is a 0-d
// tensor or index's shape, cast to out's dtype here.
void scatter_raw(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& values, IndexReduce mode) {
  Tensor ix = contiguous(cast_to(index, ScalarType::Int64));
  if (ix.numel() == 0) return;
  Tensor v = expand(cast_to(values, out.dtype()), ix.sizes());
  Walk w = make_walk(out, dim, ix);
  Side dst = make_side(ix.sizes(), out.strides(), dim), val = make_side(ix.sizes(), v.strides(), dim);
  std::atomic<bool> bad{false};
  scatter_kernel<false>(out, w, dst, val, v, mode, bad);
  if (bad.load()) throw_bad_index(w, dim);
}

// index_add's raw compute into `out` (a fresh contiguous tensor): out[.., ix[k], ..] += src[.., k, ..]
// along dim, with ix (int64, contiguous) already checked to lie in [0, out.size(dim)).
void index_add_raw(const Tensor& out, int64_t dim, const Tensor& ix, const Tensor& src) {
  if (src.numel() == 0) return;
  Walk w;
  const Shape& s = src.sizes();
  for (int64_t d = 0; d < dim; ++d) w.O *= s[d];
  w.K = s[dim];
  for (int64_t d = dim + 1; d < static_cast<int64_t>(s.size()); ++d) w.N *= s[d];
  w.size = out.sizes()[dim];
  w.ip = ix.data<int64_t>();
  Side dst = make_side(s, out.strides(), dim), val = make_side(s, src.strides(), dim);
  std::atomic<bool> bad{false};
  scatter_kernel<true>(out, w, dst, val, src, IndexReduce::Add, bad);
  EMBER_CHECK(!bad.load(), "index_add: index out of range");  // checked by the caller first
}

// index_select's kernel: out (contiguous, t's shape with K along dim) row (o, k) is t's row
// (o, ip[k]); the (o, k) rows split across threads, each writing its own output range.
template <size_t B>
void select_walk(int64_t O, int64_t K, int64_t N, int64_t size, const Side& src, const int64_t* ip, const char* s_,
                 char* d_) {
  const Bytes<B>* s = reinterpret_cast<const Bytes<B>*>(s_);
  Bytes<B>* d = reinterpret_cast<Bytes<B>*>(d_);
  const int64_t sd = src.dim_stride;
  const bool dense = src.linear && (N == 1 || src.inner_stride == 1);
  int64_t grain = std::max<int64_t>(1, kGrainSize / N);
  if (N == 1) {
    // Each output row reads one t row at random positions, which the hardware prefetcher cannot
    // follow: while copying row o, prefetch row o + 1 in order, one line every 8 elements.
    const int64_t lines = (size * sd * static_cast<int64_t>(B) + 63) / 64;
    const bool pf = sd * static_cast<int64_t>(B) <= 16 && lines <= K / 8 + 1 && worth_prefetching(O, lines);
    const double line_per_k = static_cast<double>(lines) / static_cast<double>(K);
    parallel_for(0, O * K, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo, o = lo / K, k0 = lo % K; r < hi; ++o, k0 = 0) {
        const Bytes<B>* base = s + src.outer[o];
        const int64_t kend = std::min<int64_t>(K, k0 + (hi - r));
        Bytes<B>* out = d + (r - k0);
        if (pf && o + 1 < O) {
          const char* next = reinterpret_cast<const char*>(s + src.outer[o + 1]);
          for (int64_t k = k0; k < kend; ++k) {
            if ((k & 7) == 0) __builtin_prefetch(next + static_cast<int64_t>(k * line_per_k) * 64);
            out[k] = base[ip[k] * sd];
          }
        } else {
          for (int64_t k = k0; k < kend; ++k) out[k] = base[ip[k] * sd];
        }
        r += kend - k0;
      }
    });
    return;
  }
  parallel_for(0, O * K, grain, [&](int64_t lo, int64_t hi) {
    int64_t o = lo / K, k = lo % K;
    const Bytes<B>* base = s + src.outer[o];
    for (int64_t r = lo; r < hi; ++r) {
      const Bytes<B>* row = base + ip[k] * sd;
      Bytes<B>* out = d + r * N;
      if (dense)
        std::memcpy(out, row, static_cast<size_t>(N) * B);
      else
        for (int64_t i = 0; i < N; ++i) out[i] = row[inner_at(src, i)];
      if (++k == K) {
        k = 0;
        if (++o < O) base = s + src.outer[o];
      }
    }
  });
}

// index_select's raw compute for t.dim() >= 1; ix is int64, contiguous and checked.
Tensor index_select_raw(const Tensor& t, int64_t dim, const Tensor& ix) {
  Shape os = t.sizes();
  os[dim] = ix.numel();
  Tensor out = empty(os, t.dtype());
  if (out.numel() == 0) return out;
  Side src = make_side(os, t.strides(), dim);
  int64_t O = static_cast<int64_t>(src.outer.size()), K = os[dim], N = static_cast<int64_t>(src.inner.size());
  const int64_t* ip = ix.data<int64_t>();
  const char* s = static_cast<const char*>(t.data_ptr());
  char* d = static_cast<char*>(out.data_ptr());
  bool ok = with_element_bytes(t.element_size(), [&](auto bytes) {
    select_walk<decltype(bytes)::value>(O, K, N, t.sizes()[dim], src, ip, s, d);
  });
  if (!ok) EMBER_NOT_IMPLEMENTED("index_select: element size ", t.element_size());
  return out;
}
// The first index outside [0, size), or -1 when none is.
int64_t first_bad(const Tensor& ix, int64_t size) {
  const int64_t* p = ix.data<int64_t>();
  for (int64_t i = 0; i < ix.numel(); ++i)
    if (out_of_range(p[i], size)) return i;
  return -1;
}
// index_put_impl over scatter's index list (same node), computed by scatter_raw.
Tensor scatter_put(const Tensor& t, int64_t dim, const Tensor& idx, const TensorVec& ix, const Tensor& values,
                   IndexReduce mode) {
  return index_put_impl(t, ix, values, mode, [&](const Tensor& out) { scatter_raw(out, dim, idx, values, mode); });
}
// A src tensor (not a fill value) must cover the index: same rank, no dim larger than src's.
void check_scatter_src(const Tensor& index, const Tensor& src) {
  if (index.dim() == 0 && src.dim() == 0) return;
  EMBER_CHECK(index.dim() == src.dim(), "Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < index.dim(); ++d)
    EMBER_CHECK(index.sizes()[d] <= src.sizes()[d], "Expected index ", index.shape_str(),
                " to be no larger size than src ", src.shape_str());
}
template <typename F>
auto as_runtime_error(F f) {
  try {
    return f();
  } catch (const IndexError& e) {
    throw Error(e.what());
  }
}
// Gradients of scatter_reduce's prod/amax/amin as torch defines them (s is src cut to index's shape,
// r the result): amax/amin share the gradient evenly among the self and src values equal to the
// result; prod divides the result by the factor, with the product of the others where the factor is
// a lone zero. Built from differentiable ops so double backward works.
TensorList scatter_reduce_grad(const Tensor& g, const Tensor& x, int64_t dim, const Tensor& idx, const Tensor& s,
                               const Tensor& r, const std::string& reduce, bool include_self) {
  ScalarType dt = x.dtype();
  Tensor kept;  // 1 where self takes part in the result: everywhere, or where nothing was scattered
  {
    NoGradGuard ng;
    kept = include_self ? ones(x.sizes(), dt) : scatter(ones(x.sizes(), dt), dim, idx, num0(0, dt));
  }
  if (reduce == "amax" || reduce == "amin") {
    Tensor xm, sm, count;
    {
      NoGradGuard ng;
      xm = to_dtype(eq(x, r), dt);
      sm = to_dtype(eq(s, gather(r, dim, idx)), dt);
      count = scatter_add(xm, dim, idx, sm);  // counts self even when excluded, as torch does
      xm = mul(xm, kept);
    }
    Tensor share = div(g, count);
    return {mul(xm, share), mul(sm, gather(share, dim, idx))};
  }
  Tensor gx;
  if (include_self) {
    Tensor x_one = masked_fill(x, eq(x, num0(0, dt)), num0(1, dt));  // zeros of self replaced by 1
    gx = div(mul(g, scatter_reduce(x_one, dim, idx, s, "prod", true)), x_one);
  } else {
    gx = mul(g, kept);
  }
  Tensor s_zero, lone_zero;
  {
    NoGradGuard ng;
    s_zero = eq(s, num0(0, dt));
    Tensor zeros_per_slot = gather(scatter_add(zeros(x.sizes(), dt), dim, idx, to_dtype(s_zero, dt)), dim, idx);
    lone_zero = logical_and(s_zero, eq(zeros_per_slot, num0(1, dt)));
  }
  Tensor others = scatter_reduce(x, dim, idx, masked_fill(s, lone_zero, num0(1, dt)), "prod", include_self);
  Tensor gs = where(lone_zero, gather(mul(g, others), dim, idx),
                    div(gather(mul(g, r), dim, idx), masked_fill(s, s_zero, num0(1, dt))));
  return {gx, gs};
}

IndexReduce scatter_mode(const std::string& reduce) {
  if (reduce.empty()) return IndexReduce::None;
  if (reduce == "add" || reduce == "sum") return IndexReduce::Add;
  if (reduce == "multiply" || reduce == "prod") return IndexReduce::Mul;
  if (reduce == "amax") return IndexReduce::Max;
  if (reduce == "amin") return IndexReduce::Min;
  throw Error("reduce argument must be either add or multiply. Got " + reduce);
}
Tensor src_window(const Tensor& src, const Tensor& index) {
  if (src.dim() == 0) return src;
  Tensor s = src;
  for (int64_t d = 0; d < index.dim(); ++d) {
    EMBER_CHECK(index.sizes()[d] <= src.sizes()[d], "Expected index ", index.shape_str(), " to be no larger than src ",
                src.shape_str(), " apart from dimension ", d);
    if (s.sizes()[d] != index.sizes()[d]) s = slice(s, d, 0, index.sizes()[d]);
  }
  return s;
}
Tensor dim_index(const Tensor& index, const char* op) {
  EMBER_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
  EMBER_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, op,
              "(): Expected dtype int32/int64 for index");
  return index.dim() == 0 ? reshape(index, {1}) : index;
}
TensorVec at_dim(int64_t dim, const Tensor& index) {
  TensorVec v(dim, Tensor());
  v.push_back(index);
  return v;
}
}  // namespace

// Fixed chunks (independent of the thread count): count the hits of each in parallel, take the
// prefix sums as output offsets, then fill each chunk's rows in parallel, walking its coordinates
// with counters. Rows come out in row-major order as a serial scan gives them.
Tensor nonzero(const Tensor& t) {
  if (is_complex(t.dtype())) return nonzero(ne(t, scalar_tensor(Scalar(0), t.dtype())));
  Tensor c = contiguous(t);
  int64_t n = c.numel(), nd = t.dim();
  const Shape& sz = t.sizes();
  int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(n / kGrainSize, 1024));
  int64_t cs = (n + chunks - 1) / std::max<int64_t>(chunks, 1);
  std::vector<int64_t> start(chunks + 1, 0);
  Tensor out;
  EMBER_DISPATCH_ALL(c.dtype(), "nonzero", [&] {
    const scalar_t* p = c.data<scalar_t>();
    auto hit = [&](int64_t i) { return static_cast<opmath_t<scalar_t>>(p[i]) != opmath_t<scalar_t>(0); };
    parallel_for(0, chunks, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t j = lo; j < hi; ++j) {
        int64_t cnt = 0;
        for (int64_t i = j * cs, e = std::min(n, (j + 1) * cs); i < e; ++i) cnt += hit(i) ? 1 : 0;
        start[j + 1] = cnt;
      }
    });
    for (int64_t j = 0; j < chunks; ++j) start[j + 1] += start[j];
    out = empty({start[chunks], nd}, ScalarType::Int64);
    int64_t* o = out.data<int64_t>();
    parallel_for(0, chunks, 1, [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> pos(nd, 0);
      for (int64_t j = lo; j < hi; ++j) {
        const int64_t b = j * cs;
        if (start[j + 1] == start[j]) continue;
        int64_t rem = b;
        for (int64_t d = nd - 1; d >= 0; --d) {
          pos[d] = rem % sz[d];
          rem /= sz[d];
        }
        // Branchless (a mispredicted branch per hit of a random mask took most of the time): every
        // element's coordinates are written at the next free row, which moves on a hit; the loop ends
        // at the chunk's last hit, so nothing lands past the chunk's rows.
        for (int64_t i = b, k = start[j], kend = start[j + 1]; k < kend; ++i) {
          int64_t* row = o + k * nd;
          for (int64_t d = 0; d < nd; ++d) row[d] = pos[d];
          k += hit(i) ? 1 : 0;
          for (int64_t d = nd - 1; d >= 0; --d) {
            if (++pos[d] < sz[d]) break;
            pos[d] = 0;
          }
        }
      }
    });
  });
  return out;
}

namespace {
// t[mask] for one bool mask over t's leading dims of a contiguous t: count the mask's hits per
// fixed chunk (independent of the thread count) in parallel, take prefix sums as output offsets,
// then copy each chunk's selected rows, instead of nonzero + index tensors + gather. Returns an
// undefined tensor when the case does not apply (the general path then handles it and its errors).
Tensor mask_index_fast(const Tensor& t, const TensorVec& indices) {
  if (indices.empty() || !indices[0].defined() || indices[0].dtype() != ScalarType::Bool) return {};
  for (size_t i = 1; i < indices.size(); ++i)
    if (indices[i].defined()) return {};
  const Tensor& mask = indices[0];
  int64_t nd = mask.dim();
  if (nd == 0 || nd > t.dim() || !t.is_contiguous()) return {};
  for (int64_t d = 0; d < nd; ++d)
    if (mask.sizes()[d] != t.sizes()[d]) return {};
  int64_t inner = 1;
  for (int64_t d = nd; d < t.dim(); ++d) inner *= t.sizes()[d];
  Tensor m = contiguous(mask);
  const uint8_t* mp = static_cast<const uint8_t*>(m.data_ptr());  // bools are stored as 0 / 1
  int64_t n = m.numel();
  int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(n * std::max<int64_t>(inner, 1) / kGrainSize, 1024));
  chunks = std::min(chunks, std::max<int64_t>(n, 1));
  int64_t cs = (n + chunks - 1) / chunks;
  std::vector<int64_t> start(chunks + 1, 0);
  parallel_for(0, chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t j = lo; j < hi; ++j) {
      int64_t cnt = 0;
      for (int64_t i = j * cs, e = std::min(n, (j + 1) * cs); i < e; ++i) cnt += mp[i];
      start[j + 1] = cnt;
    }
  });
  for (int64_t j = 0; j < chunks; ++j) start[j + 1] += start[j];
  Shape os{start[chunks]};
  for (int64_t d = nd; d < t.dim(); ++d) os.push_back(t.sizes()[d]);
  Tensor out = empty(os, t.dtype());
  if (out.numel() == 0) return out;
  size_t es = t.element_size();
  const char* src = static_cast<const char*>(t.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  if (inner == 1 && cpu::compress_rows_kernel(es, mp, src, dst, start, cs, n)) return out;
  size_t row = es * static_cast<size_t>(inner);
  parallel_for(0, chunks, 1, [&](int64_t lo, int64_t hi) {
    const uint8_t* __restrict mk = mp;
    const char* __restrict sp = src;
    for (int64_t j = lo; j < hi; ++j) {
      char* __restrict o = dst + start[j] * row;
      for (int64_t i = j * cs, e = std::min(n, (j + 1) * cs); i < e; ++i)
        if (mk[i]) {
          std::memcpy(o, sp + i * row, row);
          o += row;
        }
    }
  });
  return out;
}

// `raw`, when given, computes the result in place of the plan (gather's kernel); same node.
Tensor index_impl(const Tensor& t, const TensorVec& indices, const std::function<Tensor()>& raw) {
  Tensor out;
  TensorVec idx;
  if (!raw) out = mask_index_fast(t, indices);
  if (out.defined()) {
    idx = indices;  // the backward's index_put expands the mask itself
  } else {
    idx = expand_masks(t, indices);
    if (raw) {
      NoGradGuard g;
      out = raw();
    } else {
      out = index_raw(t, idx);
    }
  }
  if (auto n = lambda_node("IndexBackward0", {t})) {
    Shape ts = t.sizes();
    ScalarType td = t.dtype();
    n->fn = [idx, ts, td](const TensorList& g, const TensorList&) -> TensorList {
      return {index_put(zeros(ts, g[0].dtype()), idx, g[0], true)};
    };
    (void)td;
    set_history(out, n);
  }
  return out;
}
}  // namespace

Tensor index(const Tensor& t, const TensorVec& indices) { return index_impl(t, indices, {}); }

Tensor index_put(const Tensor& t, const TensorVec& indices, const Tensor& values, bool accumulate) {
  return index_put_impl(t, indices, values, accumulate ? IndexReduce::Add : IndexReduce::None);
}
Tensor index_put_reduce(const Tensor& t, const TensorVec& indices, const Tensor& values, IndexReduce mode) {
  return index_put_impl(t, indices, values, mode);
}

Tensor& index_put_(Tensor& t, const TensorVec& indices, const Tensor& values, bool accumulate) {
  // Expanded targets are allowed (torch only warns); aliasing the values or an index is not.
  assert_no_overlap(t, values);
  for (const Tensor& ix : indices) assert_no_overlap(t, ix);
  if (inplace_needs_history(t, {&values})) {
    check_inplace(t, true);
    Tensor r = index_put(clone(t), indices, values, accumulate);
    {
      NoGradGuard g;
      copy_(t, r);
    }
    if (auto fn = grad_fn(r)) rebase_history(t, fn);
    return t;
  }
  put_raw(t, expand_masks(t, indices), values, accumulate ? IndexReduce::Add : IndexReduce::None);
  t.bump_version("index_put_");
  return t;
}

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index_) {
  Tensor ix = contiguous(cast_to(dim_index(index_, "index_select"), ScalarType::Int64));
  if (t.dim() == 0) {  // a 0-d self takes exactly one index, 0, and stays 0-d
    wrap_dim(dim, 0);
    EMBER_CHECK(ix.numel() == 1, "index_select(): Index to scalar can have only 1 value, got ", ix.numel(),
                " value(s)");
    EMBER_CHECK_INDEX(ix.data<int64_t>()[0] == 0, "index out of range in self");
    Tensor out;
    {
      NoGradGuard g;
      out = clone(t);
    }
    if (auto n = lambda_node("IndexSelectBackward0", {t})) {
      n->fn = [](const TensorList& g, const TensorList&) -> TensorList { return {clone(g[0])}; };
      set_history(out, n);
    }
    return out;
  }
  dim = wrap_dim(dim, t.dim());
  const int64_t size = t.sizes()[dim];
  // torch's checks and messages: its dim-1 and empty-self paths raise RuntimeErrors of their own.
  if (ix.numel() > 0) {
    bool multi = t.dim() > 1;
    if (multi && t.numel() == 0) EMBER_CHECK(size > 0, "index_select(): self indexing axis dim should be positive");
    int64_t bad = first_bad(ix, size);
    if (bad >= 0) {
      if (multi && (dim == 1 || t.numel() == 0))
        throw Error(
            detail::str_cat("INDICES element is out of DATA bounds, id=", ix.data<int64_t>()[bad], " axis_dim=", size));
      throw IndexError("index out of range in self");
    }
  }
  Tensor out;
  {
    NoGradGuard g;
    out = index_select_raw(t, dim, ix);
  }
  if (auto n = lambda_node("IndexSelectBackward0", {t})) {
    Shape ts = t.sizes();
    n->fn = [ts, dim, ix](const TensorList& g, const TensorList&) -> TensorList {
      return {index_add(zeros(ts, g[0].dtype()), dim, ix, g[0])};
    };
    set_history(out, n);
  }
  return out;
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& idx) {
  dim = wrap_dim(dim, t.dim());
  if (t.dim() == 0 || idx.dim() == 0) return reshape(gather(reshape(t, {-1}), 0, reshape(idx, {-1})), idx.sizes());
  check_scatter_index(t, dim, idx, "gather");
  Tensor out;
  {
    NoGradGuard g;
    out = idx.numel() == 0 ? empty(idx.sizes(), t.dtype()) : gather_raw(t, dim, idx);
  }
  if (auto n = lambda_node("GatherBackward0", {t})) {  // scatter_add's kernel, not index_put's
    Shape ts = t.sizes();
    n->fn = [ts, dim, idx](const TensorList& g, const TensorList&) -> TensorList {
      return {scatter_add(zeros(ts, g[0].dtype()), dim, idx, g[0])};
    };
    set_history(out, n);
  }
  return out;
}

Tensor scatter(const Tensor& t, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce) {
  dim = wrap_dim(dim, t.dim());
  check_number_fits(src, t.dtype());
  if (t.dim() == 0 || idx.dim() == 0)
    return reshape(scatter(reshape(t, {-1}), 0, reshape(idx, {-1}), src.dim() ? reshape(src, {-1}) : src, reduce),
                   t.sizes());
  TensorVec ix = scatter_indices(t, dim, idx, "scatter");
  if (idx.numel() == 0) return clone(t);
  EMBER_CHECK(src.dim() == 0 || src.dim() == idx.dim(),
              "Index tensor must have the same number of dimensions as src tensor");
  if (reduce.empty())
    return as_runtime_error([&] { return scatter_put(t, dim, idx, ix, src_window(src, idx), IndexReduce::None); });
  // torch has no derivative for scatter with reduce=: the graph records a node that raises on backward.
  Tensor out;
  {
    NoGradGuard g;
    out = as_runtime_error([&] { return scatter_put(t, dim, idx, ix, src_window(src, idx), scatter_mode(reduce)); });
  }
  if (auto n = lambda_node("NotImplemented", {t, src})) {
    n->fn = [](const TensorList&, const TensorList&) -> TensorList {
      throw Error("derivative for aten::scatter is not implemented");
    };
    set_history(out, n);
  }
  return out;
}
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& idx, const Tensor& src) {
  check_scatter_src(idx, src);
  dim = wrap_dim(dim, t.dim());
  if (t.dim() == 0 || idx.dim() == 0)
    return reshape(scatter_add(reshape(t, {-1}), 0, reshape(idx, {-1}), reshape(src, {-1})), t.sizes());
  check_scatter_index(t, dim, idx, "scatter_add");
  if (idx.numel() == 0) return clone(t);
  Tensor s = src_window(src, idx), out;
  {
    NoGradGuard g;
    out = clone(t, MemoryFormat::Contiguous);
    scatter_raw(out, dim, idx, s, IndexReduce::Add);
  }
  if (auto n = lambda_node("ScatterAddBackward0", {t, s})) {
    ScalarType sd = s.dtype();
    n->fn = [dim, idx, sd](const TensorList& g, const TensorList&) -> TensorList {
      return {g[0], cast_to(gather(g[0], dim, idx), sd)};
    };
    set_history(out, n);
  }
  return out;
}

// Note [Index accumulation in place]: scatter_add_ and index_add_ write straight into a contiguous
// self when no autograd history is needed, as torch's in-place kernels do; otherwise (as the
// other in-place index ops) the out-of-place op runs and its result is copied into self. That
// copy path cost two extra passes over self: scatter_add_ of 40k values into a 4096x1000 buffer
// ran 3.2x torch's time.
template <typename OutOfPlace, typename Direct>
Tensor& accumulate_in_place(const char* op, Tensor& t, const Tensor& index, const Tensor& src,
                            const OutOfPlace& out_of_place, const Direct& direct) {
  assert_no_internal_overlap(t);
  assert_no_overlap(t, index);
  assert_no_overlap(t, src);
  if (inplace_needs_history(t, {&src})) {
    check_inplace(t, true);
    Tensor r = out_of_place();
    {
      NoGradGuard g;
      copy_(t, r);
    }
    if (auto fn = grad_fn(r)) rebase_history(t, fn);
    return t;
  }
  if (t.dim() == 0 || index.dim() == 0 || !t.is_contiguous()) {
    Tensor r;
    {
      NoGradGuard g;
      r = out_of_place();
    }
    copy_(t, r);
    return t;
  }
  direct();
  t.bump_version(op);
  return t;
}
Tensor& scatter_add_(Tensor& t, int64_t dim, const Tensor& idx, const Tensor& src) {
  return accumulate_in_place(  // Note [Index accumulation in place]
      "scatter_add_", t, idx, src, [&] { return scatter_add(t, dim, idx, src); },
      [&] {
        check_scatter_src(idx, src);
        const int64_t d = wrap_dim(dim, t.dim());
        check_scatter_index(t, d, idx, "scatter_add");
        if (idx.numel() > 0) scatter_raw(t, d, idx, src_window(src, idx), IndexReduce::Add);
      });
}

Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& idx, const Tensor& src, const std::string& reduce,
                      bool include_self) {
  EMBER_CHECK(reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
              "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  if (is_complex(t.dtype())) {
    if (reduce == "amax" || reduce == "amin")
      EMBER_NOT_IMPLEMENTED("\"scatter_gather_tensor_cpu_reduce_", reduce, "\" not implemented for '",
                            dtype_name(t.dtype()), "'");
    // As torch: no reverse-mode derivative for complex outputs (forward mode works).
    EMBER_CHECK(!(GradMode::is_enabled() && any_requires_grad({&t, &src})),
                "scatter_reduce does not support automatic differentiation for outputs with complex dtype.");
  }
  check_scatter_src(idx, src);
  dim = wrap_dim(dim, t.dim());
  if (t.dim() == 0 || idx.dim() == 0)
    return reshape(scatter_reduce(reshape(t, {-1}), 0, reshape(idx, {-1}), reshape(src, {-1}), reduce, include_self),
                   t.sizes());
  TensorVec ix = scatter_indices(t, dim, idx, "scatter_reduce");
  if (idx.numel() == 0) return clone(t);
  Tensor s = src_window(src, idx);
  if (reduce == "prod" || reduce == "amax" || reduce == "amin") {
    Tensor out;
    {
      NoGradGuard g;
      autograd::forward_ad::HideLevelsGuard raw(0);  // the node below carries the tangent, not these steps
      Tensor base =
          include_self ? t : scatter_put(t, dim, idx, ix, reduce_identity(t.dtype(), reduce), IndexReduce::None);
      out = as_runtime_error([&] { return scatter_put(base, dim, idx, ix, s, scatter_mode(reduce)); });
    }
    if (auto n = lambda_node("ScatterReduceBackward0", {t, s})) {
      set_history(out, n);
      n->saved = {SavedVariable(t, false), SavedVariable(s, false), SavedVariable(out, true)};
      n->fn = [dim, idx, reduce, include_self](const TensorList& g, const TensorList& sv) -> TensorList {
        // Complex (forward AD only): the prod's derivative formula on conjugates (conj convention).
        return scatter_reduce_grad(g[0], conj(sv[0]), dim, idx, conj(sv[1]), conj(sv[2]), reduce, include_self);
      };
    }
    return out;
  }
  return as_runtime_error([&] {
    Tensor base = t;
    if (!include_self)  // scattered slots restart
      base = scatter_put(t, dim, idx, ix, reduce_identity(t.dtype(), reduce), IndexReduce::None);
    if (reduce == "mean") {
      Tensor sumr = scatter_put(base, dim, idx, ix, s, IndexReduce::Add);
      Tensor cnt = ones(t.sizes(), t.dtype());
      if (!include_self) cnt = scatter_put(cnt, dim, idx, ix, num0(0, t.dtype()), IndexReduce::None);
      cnt = scatter_put(cnt, dim, idx, ix, ones(s.sizes(), t.dtype()), IndexReduce::Add);
      return is_floating_point(t.dtype()) || is_complex(t.dtype()) ? div(sumr, cnt) : div(sumr, cnt, "floor");
    }
    return scatter_put(base, dim, idx, ix, s, scatter_mode(reduce));
  });
}

namespace {
template <typename T>
Tensor identity_t(ScalarType dt, const std::string& reduce) {
  T v = reduce == "sum" || reduce == "mean" ? T(0)
        : reduce == "prod"                  ? T(1)
        : reduce == "amax" ? (std::numeric_limits<T>::has_infinity ? T(-std::numeric_limits<T>::infinity())
                                                                   : std::numeric_limits<T>::lowest())
                           : (std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                                   : std::numeric_limits<T>::max());
  Tensor r = empty({}, dt);
  *r.data<T>() = v;
  return r;
}
}  // namespace
Tensor reduce_identity(ScalarType dt, const std::string& reduce) {
  if (is_complex(dt)) return full({}, Scalar(reduce == "prod" ? 1.0 : 0.0), dt);  // sum, mean, prod only
  if (dt == ScalarType::Float16 || dt == ScalarType::BFloat16)
    return to_dtype(identity_t<float>(ScalarType::Float32, reduce), dt);
  return EMBER_DISPATCH_ALL(dt, "scatter_reduce", [&] { return identity_t<scalar_t>(dt, reduce); });
}

namespace {
// torch's source-shape rules for index_add/index_copy: source has self's shape except along dim,
// where it has one slice per index (a 0-d source counts as one slice).
void check_index_source(const Tensor& t, int64_t dim, const Tensor& ix, const Tensor& src, const char* op) {
  EMBER_CHECK(src.dtype() == t.dtype(), op, "(): self (", dtype_name(t.dtype()), ") and source (",
              dtype_name(src.dtype()), ") must have the same scalar type");
  bool copy = std::string_view(op) == "index_copy_";
  if (copy && src.dim() == 0) {  // one slice, which fits a self whose slices are 0-d (a 0-d or 1-d self)
    EMBER_CHECK_INDEX(ix.numel() == 1, "index_copy_(): When source is scalar, index should have one element (got ",
                      ix.numel(), ")");
    std::string slice;
    for (int64_t d = 0; d < t.dim(); ++d)
      if (d != dim) slice += (slice.empty() ? "" : " ") + std::to_string(t.sizes()[d]);
    EMBER_CHECK(slice.empty(),
                "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: ",
                slice, " at dimension ", dim, " and source slice shape:  at dimension 0.");
    return;
  }
  if (t.dim() == 0 || src.dim() == 0) {
    bool ok = t.dim() == 0 && (copy ? src.dim() <= 1 : src.dim() == 0);
    EMBER_CHECK(
        ok, "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = ",
        shape_str(t.sizes()), " source.shape = ", shape_str(src.sizes()));
  } else {
    if (copy)
      EMBER_CHECK_INDEX(src.dim() == t.dim(), op,
                        "(): When source and destination are not scalars, their dimensionality must match. Source "
                        "dimensionality (",
                        src.dim(), "), destination dimensionality (", t.dim(), ")");
    bool same = src.dim() == t.dim();
    for (int64_t d = 0; same && d < t.dim(); ++d) same = d == dim || src.sizes()[d] == t.sizes()[d];
    EMBER_CHECK(
        same, "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = ",
        shape_str(t.sizes()), " source.shape = ", shape_str(src.sizes()));
  }
  // After the shape checks: src has self's dims here (ASan found the read past a shorter src's sizes).
  int64_t slices = src.dim() == 0 ? 1 : src.sizes()[t.dim() == 0 ? 0 : dim];
  if (copy)
    EMBER_CHECK_INDEX(ix.numel() == slices, op, "(): Number of indices (", ix.numel(),
                      ") should be equal to source.size(dim) (", slices, ")");
  else
    EMBER_CHECK(ix.numel() == slices, op, "(): Number of indices (", ix.numel(),
                ") should be equal to source.size(dim): (", slices, "), for dim: ", dim);
}
}  // namespace

namespace {
// index_add's checked operands: the source times alpha in self's dtype, the int64 indices.
std::pair<Tensor, Tensor> index_add_operands(const Tensor& t, int64_t dim, const Tensor& ix, const Tensor& src,
                                             Scalar alpha) {
  check_index_source(t, dim, ix, src, "index_add_");
  // alpha takes self's dtype first (torch: an overflow raises, 2.5 scales an integer source by 2).
  Tensor a = scalar_tensor(alpha, std::nullopt, true);
  check_number_fits(a, t.dtype());
  Tensor v = alpha.to_double() == 1.0 ? src : cast_to(mul(src, cast_to(a, t.dtype())), t.dtype());
  if (t.dim() == 0) return {Tensor(), v};
  Tensor ix64 = contiguous(cast_to(ix, ScalarType::Int64));
  // torch checks the indices unless a >1-d self or source is empty; 1-d selves raise IndexError.
  if (t.dim() <= 1 || (t.numel() > 0 && v.numel() > 0)) {
    int64_t size = t.sizes()[dim], bad = first_bad(ix64, size);
    if (bad >= 0) {
      EMBER_CHECK_INDEX(t.dim() > 1, "index out of range in self");
      throw Error(detail::str_cat("index ", ix64.data<int64_t>()[bad], " is out of bounds for dimension ", dim,
                                  " with size ", size));
    }
  }
  return {ix64, v};
}
}  // namespace

Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha) {
  Tensor ix = dim_index(index, "index_add");
  dim = wrap_dim(dim, t.dim());
  const std::pair<Tensor, Tensor> operands = index_add_operands(t, dim, ix, src, alpha);
  const Tensor ix64 = operands.first, v = operands.second;  // (the lambda below captures ix64)
  if (t.dim() == 0) return reshape(index_add(reshape(t, {1}), 0, ix, reshape(v, {1})), {});
  Tensor out;
  {
    NoGradGuard g;
    out = clone(t, MemoryFormat::Contiguous);
    if (t.numel() > 0) index_add_raw(out, dim, ix64, v);
  }
  if (auto n = lambda_node("IndexAddBackward0", {t, v})) {
    n->fn = [dim, ix64](const TensorList& g, const TensorList&) -> TensorList {
      return {g[0], index_select(g[0], dim, ix64)};
    };
    set_history(out, n);
  }
  return out;
}
Tensor& index_add_(Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha) {
  return accumulate_in_place(  // Note [Index accumulation in place]
      "index_add_", t, index, src, [&] { return index_add(t, dim, index, src, alpha); },
      [&] {
        Tensor ix = dim_index(index, "index_add");
        const int64_t d = wrap_dim(dim, t.dim());
        const std::pair<Tensor, Tensor> operands = index_add_operands(t, d, ix, src, alpha);
        if (t.numel() > 0) index_add_raw(t, d, operands.first, operands.second);
      });
}
Tensor index_copy(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor ix = dim_index(index, "index_copy");
  dim = wrap_dim(dim, t.dim());
  check_index_source(t, dim, ix, src, "index_copy_");
  if (t.numel() > 0) {  // negative indices raise too (advanced indexing would wrap them)
    Tensor ix64 = contiguous(cast_to(ix, ScalarType::Int64));
    int64_t size = t.dim() == 0 ? 1 : t.sizes()[dim], bad = first_bad(ix64, size);
    if (bad >= 0)
      throw IndexError(detail::str_cat("index_copy_(): index ", ix64.data<int64_t>()[bad],
                                       " is out of bounds for dimension ", dim, " with size ", size));
  }
  if (t.dim() == 0) return reshape(index_put(reshape(t, {1}), {ix}, reshape(src, {-1})), {});
  return index_put(t, at_dim(dim, ix), src);
}
Tensor index_fill(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& value) {
  // torch's index_fill checks (and exception classes) differ from the other index_* ops'.
  EMBER_CHECK_INDEX(index.dtype() == ScalarType::Int64, "index_fill_(): Expected dtype int64 for index.");
  EMBER_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  Tensor ix = dim_index(index, "index_fill");
  EMBER_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  dim = wrap_dim(dim, t.dim());
  check_number_fits(value, t.dtype());
  if (t.dim() == 0) return reshape(index_put(reshape(t, {1}), {ix}, value), {});
  return index_put(t, at_dim(dim, ix), value);
}

namespace {
void check_mask(const Tensor& mask, const char* op) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, op, " only supports boolean masks, but got mask with dtype ",
              dtype_name(mask.dtype()));
}
void check_value(const Tensor& value, const char* op) {
  EMBER_CHECK(value.dim() == 0, op, " only supports a 0-dimensional value tensor, but got tensor with ", value.dim(),
              " dimension(s).");
}
}  // namespace

Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value) {
  check_mask(mask, "masked_fill_");
  check_value(value, "masked_fill_");
  check_number_fits(value, t.dtype());
  broadcast_shapes(t.sizes(), mask.sizes(), "masked_fill");
  // An elementwise select (parallel, vectorized) rather than an index_put over nonzero(mask);
  // value takes self's dtype first, as torch's masked_fill casts it.
  return where(mask, cast_to(value, t.dtype()), t);
}
Tensor& masked_fill_(Tensor& t, const Tensor& mask, const Tensor& value) {
  check_mask(mask, "masked_fill_");
  check_value(value, "masked_fill_");
  check_number_fits(value, t.dtype());
  Tensor m = expand(mask, t.sizes());
  if (t.dim() == 0) {
    Tensor flat = view(t, {1});
    index_put_(flat, {reshape(m, {1})}, value);
    return t;
  }
  return index_put_(t, {m}, value);
}

Tensor masked_select(const Tensor& t, const Tensor& mask) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_select: expected BoolTensor for mask");
  Shape s = broadcast_shapes(t.sizes(), mask.sizes(), "masked_select");
  if (s.empty()) return index(reshape(t, {1}), {reshape(mask, {1})});
  return index(expand(t, s), {expand(mask, s)});
}

Tensor masked_scatter(const Tensor& t, const Tensor& mask, const Tensor& source) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              dtype_name(mask.dtype()));
  EMBER_CHECK(source.dtype() == t.dtype(), "masked_scatter: expected self and source to have same dtypes but got ",
              dtype_name(t.dtype()), " and ", dtype_name(source.dtype()));
  Shape s = broadcast_shapes(t.sizes(), mask.sizes(), "masked_scatter");
  Tensor m = reshape(expand(mask, s), {-1});
  Tensor base = reshape(expand(t, s), {-1});
  int64_t n = nonzero(m).sizes()[0];
  EMBER_CHECK(source.numel() >= n, "masked_scatter: expected source to have at least ", n, " elements, but got ",
              source.numel());
  Tensor src = narrow(reshape(source, {-1}), 0, 0, n);
  return reshape(index_put(base, {m}, src), s);
}

Tensor take(const Tensor& t, const Tensor& idx) {
  EMBER_CHECK(idx.dtype() == ScalarType::Int64, "take(): Expected a long tensor for index, but got ",
              dtype_name(idx.dtype()));
  Tensor flat = reshape(t, {-1});
  if (idx.dim() == 0) return reshape(index(flat, {reshape(idx, {1})}), {});
  try {
    return index(flat, {idx});
  } catch (const IndexError&) {
    throw IndexError(detail::str_cat("out of range: tried to access index of a tensor of ", t.numel(), " elements."));
  }
}

Tensor take_along_dim(const Tensor& t, const Tensor& idx, std::optional<int64_t> dim) {
  EMBER_CHECK(idx.dtype() == ScalarType::Int64, "torch.take_along_dim(): dtype of indices should be Long but got ",
              dtype_name(idx.dtype()));
  if (!dim) return gather(reshape(t, {-1}), 0, reshape(idx, {-1}));  // no wrapping: negatives raise
  EMBER_CHECK(t.dim() == idx.dim(),
              "torch.take_along_dim(): input and indices should have the same number of "
              "dimensions, but got ",
              t.dim(), " dimensions for input, and ", idx.dim(), " dimensions for indices");
  int64_t d = wrap_dim(*dim, t.dim(), false);  // after the rank check, as torch
  Shape ts = t.sizes(), is = idx.sizes();
  ts[d] = 1, is[d] = 1;
  Shape b = broadcast_shapes(ts, is, "take_along_dim");
  Shape bt = b, bi = b;
  bt[d] = t.sizes()[d], bi[d] = idx.sizes()[d];
  // torch 2.13 takes indices modulo the size (Python's floor modulo): any value is in range, and a
  // size-0 dim with indices raises integer division by zero.
  const int64_t size = t.sizes()[d];
  Tensor w = idx;
  if (idx.numel() > 0) {
    EMBER_CHECK(size > 0, "ZeroDivisionError");
    Tensor c = contiguous(idx);
    const int64_t* p = c.data<int64_t>();
    bool in_range = true;
    for (int64_t i = 0; i < c.numel() && in_range; ++i) in_range = !out_of_range(p[i], size);
    if (!in_range) w = remainder(idx, full({}, Scalar(size), ScalarType::Int64));
  }
  return gather(expand(t, bt), d, expand(w, bi));
}

Tensor put(const Tensor& t, const Tensor& idx, const Tensor& source, bool accumulate) {
  EMBER_CHECK(t.dtype() == source.dtype(),
              "put_(): self and source expected to have the same dtype, but got self.dtype = ", dtype_name(t.dtype()),
              " and source.dtype = ", dtype_name(source.dtype()));
  EMBER_CHECK(idx.dtype() == ScalarType::Int64, "put_(): Expected a long tensor for index, but got ",
              dtype_name(idx.dtype()));
  EMBER_CHECK_INDEX(idx.numel() == source.numel(),
                    "put_(): Expected source and index to have the same number of elements, "
                    "but got source.numel() = ",
                    source.numel(), ", index.numel() = ", idx.numel());
  Tensor r = index_put(reshape(t, {-1}), {reshape(idx, {-1})}, reshape(source, {-1}), accumulate);
  return reshape(r, t.sizes());
}

namespace {
template <typename T>
void search_kernel(const Tensor& seq, const Tensor& vals, const Tensor& sorter, Tensor& out, bool right) {
  using M = opmath_t<T>;
  int64_t inner = seq.dim() == 0 ? 1 : seq.sizes().back();
  int64_t vin = vals.dim() == 0 ? 1 : vals.sizes().back();
  bool one_d = seq.dim() <= 1;
  const T* s = seq.data<T>();
  const T* v = vals.data<T>();
  const int64_t* so = sorter.defined() ? sorter.data<int64_t>() : nullptr;
  int64_t* o = out.data<int64_t>();
  // Values are independent: split among threads. Each search narrows [lo, lo + n) with selects,
  // not branches, probing what the branchy loop probed (random values mispredicted half of the
  // branches: 1.76x torch's time).
  int64_t steps = 1;
  while ((int64_t{1} << steps) <= inner) ++steps;
  parallel_for(0, vals.numel(), std::max<int64_t>(1, kGrainSize / (4 * steps)), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t row = one_d ? 0 : i / vin;
      const T* base = s + row * inner;
      const int64_t* sb = so ? so + row * inner : nullptr;
      const M x = static_cast<M>(v[i]);
      int64_t lo = 0, n = inner;
      while (n > 0) {
        const int64_t half = n / 2, mid = lo + half;
        const M y = static_cast<M>(base[sb ? sb[mid] : mid]);
        // Written so NaN sorts last, as torch: a NaN value goes past every boundary, NaN boundaries
        // lie past every value.
        const bool go_right = right ? !(y > x) : !(y >= x);
        lo = go_right ? mid + 1 : lo;
        n = go_right ? n - half - 1 : half;
      }
      o[i] = lo;
    }
  });
}
}  // namespace

Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool out_int32, bool right, const Tensor& sorter) {
  EMBER_CHECK(sorted.dim() >= 1,
              "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
              "dimension");
  if (sorted.dim() > 1) {
    bool ok = values.dim() == sorted.dim();
    for (int64_t d = 0; ok && d + 1 < sorted.dim(); ++d) ok = values.sizes()[d] == sorted.sizes()[d];
    EMBER_CHECK(ok,
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                "boundaries tensor and input value tensor must match, but we got boundaries tensor ",
                sorted.shape_str(), " and input value tensor ", values.shape_str());
  }
  if (sorter.defined())
    EMBER_CHECK(sorter.sizes() == sorted.sizes() && sorter.dtype() == ScalarType::Int64,
                "torch.searchsorted(): boundary and sorter must have the same size and sorter must be long");
  ScalarType ct = promote_types(sorted.dtype(), values.dtype());
  Tensor s = contiguous(cast_to(sorted, ct)), v = contiguous(cast_to(values, ct));
  Tensor so = sorter.defined() ? contiguous(sorter) : Tensor();
  if (so.defined()) {  // the kernel reads boundaries through it: every entry must be a valid index
    int64_t inner = sorted.sizes().back();
    const int64_t* p = so.data<int64_t>();
    bool ok = true;
    for (int64_t i = 0; i < so.numel(); ++i) ok &= p[i] >= 0 && p[i] < inner;
    EMBER_CHECK(ok, "torch.searchsorted(): sorter index out of range");
  }
  Tensor out = empty(values.sizes(), ScalarType::Int64);
  EMBER_DISPATCH_NUMERIC(ct, "searchsorted", [&] { search_kernel<scalar_t>(s, v, so, out, right); });
  return out_int32 ? to_dtype(out, ScalarType::Int32) : out;
}

Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsorted(boundaries, values, out_int32, right);
}

}  // namespace ember
