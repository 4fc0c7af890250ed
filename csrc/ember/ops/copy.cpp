// Copies and conversions: copy_, to(dtype), clone, contiguous, fill_, resize_, item.
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/checked_math.h"
#include "ember/core/dispatch.h"
#include "ember/core/mem_overlap.h"
#include "ember/core/parallel.h"
#include "ember/cpu/convert_kernels.h"
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

template <typename To, typename From>
inline To convert(From v) {
  using M = opmath_t<From>;
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<From>) {  // complex -> real keeps the real part
    if constexpr (is_complex_v<To>)
      return To(v);
    else if constexpr (std::is_same_v<To, bool>)
      return v != From(0);
    else
      return convert<To>(v.real());
  } else if constexpr (is_complex_v<To>) {
    return To(static_cast<real_t<To>>(static_cast<M>(v)));
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<M>(v) != M(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(static_cast<M>(v)));
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<M>) {
    double d = static_cast<double>(static_cast<M>(v));
    if constexpr (std::is_same_v<To, int64_t> || std::is_same_v<To, uint8_t>)
      return static_cast<To>(cpu::trunc_i64(d));
    else
      return static_cast<To>(cpu::trunc_i32(d));
  } else {
    return static_cast<To>(static_cast<M>(v));
  }
}

// Note [Transposed copy]: rows of the output whose source runs the other way (x.t().contiguous()):
// the source is read down a column at a stride, and columns a power of two apart share cache
// sets (a [64, 4096] transpose thrashed L1: 1.2-2.4x torch's time). So it goes in square blocks of
// kTransposeTile x kTransposeTile elements through a small buffer: each source line of the block is
// read whole into it, then each output line written whole from it, so one line of either side is
// in use at a time whatever the strides. dst row r starts at dst + r * dst_row; element k of
// source row r is at src + r * sizeof(T) + k * src_col.
// Otherwise, row by row, each output row reads its n source lines, which the next rows read
// again from L1; that is faster (an NCHW -> NHWC copy: 0.93x the blocks' time) as long as those
// lines fit in L1 and do not crowd into a few cache sets: n up to 256 and a source stride that is
// not a multiple of 1 KiB.
// The blocks move raw bits, as the contiguous path's memcpy does (a bool byte is never loaded as bool).
constexpr int64_t kTransposeTile = 16;
struct Bits128 {
  uint64_t lo, hi;
};
template <typename T>
using BitsOf =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t,
                                                             std::conditional_t<sizeof(T) == 8, uint64_t, Bits128>>>>;
static_assert(sizeof(Bits128) == 16);
inline bool transposed_copy_pays(int64_t n, int64_t src_col) { return n > 256 || src_col % 1024 == 0; }
template <typename T>
void copy_transposed(char* dst, int64_t dst_row, const char* src, int64_t src_col, int64_t n, int64_t rows) {
  constexpr int64_t B = kTransposeTile;
  const int64_t ld = dst_row / static_cast<int64_t>(sizeof(T));  // element strides (whole elements)
  const int64_t lk = src_col / static_cast<int64_t>(sizeof(T));
  T tile[B][B];
  int64_t r = 0;
  for (; r + B <= rows; r += B) {
    T* out = reinterpret_cast<T*>(dst) + r * ld;
    const T* in = reinterpret_cast<const T*>(src) + r;
    int64_t k = 0;
    for (; k + B <= n; k += B) {
      for (int64_t i = 0; i < B; ++i)
        for (int64_t j = 0; j < B; ++j) tile[j][i] = in[(k + i) * lk + j];
      for (int64_t j = 0; j < B; ++j)
        for (int64_t i = 0; i < B; ++i) out[j * ld + k + i] = tile[j][i];
    }
    for (; k < n; ++k)
      for (int64_t j = 0; j < B; ++j) out[j * ld + k] = in[k * lk + j];
  }
  for (; r < rows; ++r) {
    T* out = reinterpret_cast<T*>(dst + r * dst_row);
    for (int64_t k = 0; k < n; ++k) out[k] = *reinterpret_cast<const T*>(src + k * src_col + r * sizeof(T));
  }
}

void copy_kernel(const TensorIter& it, ScalarType dst_type, ScalarType src_type) {
  // contiguous runs of the hot pairs (16-bit floats <-> float/double, floats -> integers): the
  // multi-ISA kernel of cpu/convert_kernels.h
  const bool vector_run = cpu::convert_run_supported(dst_type, src_type);
  EMBER_DISPATCH_ALL_AND_COMPLEX(dst_type, "copy_", [&] {
    using out_t = scalar_t;
    EMBER_DISPATCH_ALL_AND_COMPLEX(src_type, "copy_", [&] {
      using in_t = scalar_t;
      it.for_each_2d([&](char** d, const int64_t* s, int64_t n, int64_t rows, const int64_t* outer) {
        if constexpr (std::is_same_v<out_t, in_t>) {
          if (s[0] == sizeof(out_t) && outer[1] == sizeof(in_t) && s[1] != sizeof(in_t) && s[1] != 0 &&
              rows >= kTransposeTile && transposed_copy_pays(n, s[1])) {
            copy_transposed<BitsOf<out_t>>(d[0], outer[0], d[1], s[1], n, rows);
            return;
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          char* dst = d[0] + r * outer[0];
          const char* src = d[1] + r * outer[1];
          if (s[0] == sizeof(out_t) && s[1] == sizeof(in_t)) {
            auto* o = reinterpret_cast<out_t*>(dst);
            auto* i = reinterpret_cast<const in_t*>(src);
            if constexpr (std::is_same_v<out_t, in_t>) {
              std::memcpy(o, i, n * sizeof(out_t));
            } else if (vector_run) {
              cpu::convert_run(dst_type, src_type, o, i, n);
            } else {
              for (int64_t k = 0; k < n; ++k) o[k] = convert<out_t>(load_as<in_t>(i + k));
            }
          } else if (s[0] == sizeof(out_t) && s[1] == 0) {  // a broadcast value (expand(...).contiguous())
            std::fill_n(reinterpret_cast<out_t*>(dst), n,
                        convert<out_t>(load_as<in_t>(reinterpret_cast<const in_t*>(src))));
          } else {
            for (int64_t k = 0; k < n; ++k)
              *reinterpret_cast<out_t*>(dst + k * s[0]) =
                  convert<out_t>(load_as<in_t>(reinterpret_cast<const in_t*>(src + k * s[1])));
          }
        }
      });
    });
  });
}

// Copies src (same shape) into a fresh or checked dst without touching versions.
void copy_into(Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (is_complex(src.dtype()) && !is_complex(dst.dtype()))
    warn_once("Casting complex values to real discards the imaginary part");
  TensorIter it(dst, {src}, dst.dtype(), "copy_");
  copy_kernel(it, dst.dtype(), src.dtype());
}

// Strides for a dense tensor whose dims are ordered like t's (Note [Preserve format]).
Shape infer_dense_strides(const Tensor& t) {
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  int64_t n = t.dim();
  // perm[0] is the innermost dim. Start from row-major order; insertion-sort by stride, leaving
  // dims whose order is ambiguous (a zero stride, or equal strides and sizes) where they are.
  Shape perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  auto should_swap = [&](int64_t a, int64_t b) -> int {  // 1: b goes inside a
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] < strides[b] ? -1 : 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (int64_t i = 1; i < n; ++i) {
    int64_t cur = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      int c = should_swap(perm[j], perm[cur]);
      if (c > 0) {
        std::swap(perm[j], perm[cur]);
        cur = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  Shape out(n);
  int64_t acc = 1;
  for (int64_t i = 0; i < n; ++i) {
    out[perm[i]] = acc;
    acc *= std::max<int64_t>(sizes[perm[i]], 1);
  }
  return out;
}

// Channels-last strides as PyTorch computes them (no clamping of zero sizes).
Shape channels_last_strides(IntArrayRef sizes, MemoryFormat format) {
  Shape st(sizes.size());
  if (format == MemoryFormat::ChannelsLast) {
    EMBER_CHECK(sizes.size() == 4, "required rank 4 tensor to use channels_last format");
    st[1] = 1;
    st[3] = sizes[1];
    st[2] = st[3] * sizes[3];
    st[0] = st[2] * sizes[2];
  } else {
    EMBER_CHECK(sizes.size() == 5, "required rank 5 tensor to use channels_last_3d format");
    st[1] = 1;
    st[4] = sizes[1];
    st[3] = st[4] * sizes[4];
    st[2] = st[3] * sizes[3];
    st[0] = st[2] * sizes[2];
  }
  return st;
}

bool is_channels_last(const Tensor& t, std::initializer_list<int64_t> order) {
  int64_t expected = 1;
  for (int64_t d : order) {
    int64_t size = t.sizes()[d];
    if (size == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= size;
  }
  return true;
}

// The C++ spelling PyTorch's overflow message uses for each dtype.
const char* overflow_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8:
      return "uint8_t";
    case ScalarType::Int8:
      return "int8_t";
    case ScalarType::Int16:
      return "int16_t";
    case ScalarType::Int32:
      return "int";
    case ScalarType::Int64:
      return "int64_t";
    case ScalarType::Float16:
      return "Half";
    case ScalarType::BFloat16:
      return "BFloat16";
    case ScalarType::Float32:
      return "float";
    case ScalarType::Float64:
      return "double";
    default:
      return "bool";
  }
}

// Whether a Python number does not fit T (PyTorch's rule: integers may wrap into unsigned types
// from as low as -max, infinities fit floating types, NaN fits no integer type).
template <typename T>
bool overflows(const Scalar& v) {
  if constexpr (std::is_same_v<T, bool> || is_complex_v<T>) {
    return false;
  } else {
    if (v.is_complex() && v.to_complex().imag() != 0) return true;  // as PyTorch: 1j fits no real type
    if (v.is_bool()) return false;
    using Lim = std::numeric_limits<T>;
    double hi;
    if constexpr (std::is_same_v<T, Half>)
      hi = 65504.0;
    else if constexpr (std::is_same_v<T, BFloat16>)
      hi = 3.3895313892515355e38;
    else
      hi = static_cast<double>(Lim::max());
    const double lo = std::is_integral_v<T> ? static_cast<double>(Lim::lowest()) : -hi;
    if (v.is_integral()) {
      int64_t i = v.to_int();
      if constexpr (std::is_integral_v<T>) {
        if constexpr (std::is_unsigned_v<T>)
          return i > static_cast<int64_t>(Lim::max()) || (i < 0 && -static_cast<uint64_t>(i) > Lim::max());
        else
          return i < static_cast<int64_t>(Lim::lowest()) || i > static_cast<int64_t>(Lim::max());
      } else {
        double d = static_cast<double>(i);
        return d < lo || d > hi;
      }
    }
    double d = v.to_double();
    if constexpr (std::is_integral_v<T>) {
      if (std::isnan(d)) return true;
    } else {
      if (std::isinf(d) || std::isnan(d)) return false;
    }
    return d < lo || d > hi;
  }
}

template <typename T>
T scalar_to(const Scalar& v) {
  if constexpr (is_complex_v<T>) {
    return T(v.to_complex());
  } else if constexpr (std::is_same_v<T, bool>) {
    return v.to_bool();
  } else if constexpr (std::is_integral_v<T>) {
    return !v.is_integral() ? convert<T>(v.to_double()) : static_cast<T>(v.to_int());
  } else {
    return !v.is_integral() ? T(static_cast<opmath_t<T>>(v.to_double())) : T(static_cast<opmath_t<T>>(v.to_int()));
  }
}

template <typename T>
void fill_raw(Tensor& t, T v) {
  if (t.numel() == 0) return;
  if (t.is_contiguous()) {
    T* p = t.data<T>();
    parallel_for(0, t.numel(), 4 * kGrainSize, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
  } else {
    TensorIter it(t, {}, t.dtype(), "fill_", false, /*check_mem_overlap=*/false);
    it.for_each([v](char** d, const int64_t* s, int64_t n) {
      T* p = reinterpret_cast<T*>(d[0]);
      if (s[0] == static_cast<int64_t>(sizeof(T)))  // a dense row (a slice of columns): vectorized
        std::fill(p, p + n, v);
      else
        for (int64_t k = 0; k < n; ++k) *reinterpret_cast<T*>(d[0] + k * s[0]) = v;
    });
  }
}

template <typename T>
Scalar scalar_of(T v) {
  if constexpr (is_complex_v<T>)
    return Scalar(std::complex<double>(v));
  else if constexpr (std::is_same_v<T, bool>)
    return Scalar(v);
  else if constexpr (std::is_integral_v<T>)
    return Scalar(static_cast<int64_t>(v));
  else
    return Scalar(static_cast<double>(static_cast<opmath_t<T>>(v)));
}

}  // namespace

std::string_view memory_format_name(MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::Preserve:
      return "preserve_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    case MemoryFormat::ChannelsLast3d:
      return "channels_last_3d";
  }
  return "?";
}

// Note [Preserve format]
// clone(), to() and every copy that "keeps the layout" allocate like PyTorch's preserve_format:
// a dense non-overlapping input's strides are reused as they are; any other input gets dense
// strides that keep its dim order (infer_dense_strides), so a transposed or sliced input copies
// into a transposed layout and an expanded one into a row-major one.
Tensor empty_like(const Tensor& t, ScalarType dtype, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::Contiguous:
      return empty(t.sizes(), dtype, t.device());
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d:
      return empty_strided(t.sizes(), channels_last_strides(t.sizes(), format), dtype, t.device());
    case MemoryFormat::Preserve:
      break;
  }
  if (is_non_overlapping_and_dense(t)) return empty_strided(t.sizes(), t.strides(), dtype, t.device());
  return empty_strided(t.sizes(), infer_dense_strides(t), dtype, t.device());
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  EMBER_CHECK(src.device() == dst.device() || src.device().is_cpu(), "copy_: device mismatch");
  // Same elements, same type: nothing to move (PyTorch still counts it as a write).
  bool grad = autograd::inplace_needs_grad(dst, {&src});
  if (grad) autograd::check_inplace(dst, true);
  bool same_data = dst.is_same(src) || (dst.impl()->storage().get() == src.impl()->storage().get() &&
                                        dst.storage_offset() == src.storage_offset() && dst.sizes() == src.sizes() &&
                                        dst.strides() == src.strides() && dst.dtype() == src.dtype());
  if (!same_data) {
    Shape b = broadcast_shapes(dst.sizes(), src.sizes(), "copy_");
    EMBER_CHECK(b == dst.sizes(), "output with shape ", dst.shape_str(), " doesn't match the broadcast shape ",
                shape_str(b));
    assert_no_internal_overlap(dst);
    MemOverlapStatus ov = get_overlap_status(dst, src);
    if (ov == MemOverlapStatus::Partial) detail::throw_partial_overlap();
    Tensor s = src;
    if (ov == MemOverlapStatus::TooHard) {
      // PyTorch does not look further here and the result depends on its loop order; ember
      // reads through a copy when the byte ranges meet, which gives the element-wise result.
      auto [d0, d1] = byte_range(dst);
      auto [s0, s1] = byte_range(src);
      if (d0 < s1 && s0 < d1) s = clone(src);
    }
    Tensor expanded = s.sizes() == dst.sizes() ? s : expand(s, dst.sizes());
    copy_into(dst, expanded);
  }
  dst.bump_version("copy_");
  if (grad) {
    auto n = std::make_shared<autograd::CopyBackwards>();
    n->next_edges = {autograd::gradient_edge(dst), autograd::gradient_edge(src)};
    n->src_sizes = src.sizes();
    n->src_dtype = src.dtype();
    autograd::rebase_history(dst, n);
  }
  if (autograd::forward_ad::is_active()) autograd::forward_ad::on_copy(dst, src);
  return dst;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = empty_like(t, dtype, MemoryFormat::Preserve);
  copy_into(out, t);
  if (t.dtype() != dtype) {
    // A cast to an integer or bool dtype ends the graph, as in torch (such tensors never require grad).
    if (!is_floating_point(dtype) && !is_complex(dtype)) return out;
    if (auto n = autograd::make_node<autograd::ToCopyBackward0>(t)) {
      n->self_dtype = t.dtype();
      autograd::set_history(out, n);
    }
  } else if (auto n = autograd::make_node<autograd::CloneBackward0>(t)) {
    autograd::set_history(out, n);
  }
  return out;
}

bool is_contiguous(const Tensor& t, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::ChannelsLast:
      return t.dim() == 4 && is_channels_last(t, {1, 3, 2, 0});
    case MemoryFormat::ChannelsLast3d:
      return t.dim() == 5 && is_channels_last(t, {1, 4, 3, 2, 0});
    default:
      return t.is_contiguous();
  }
}

Tensor contiguous(const Tensor& t, MemoryFormat format) {
  if (is_contiguous(t, format)) return t;
  EMBER_CHECK(format != MemoryFormat::Preserve, "preserve memory format is unsupported by the contiguous operator");
  return clone(t, format);
}

Tensor clone(const Tensor& t, MemoryFormat format) {
  Tensor out = empty_like(t, t.dtype(), format);
  copy_into(out, t);
  if (auto n = autograd::make_node<autograd::CloneBackward0>(t)) autograd::set_history(out, n);
  return out;
}

namespace {
// PyTorch's RuntimeError for a Python number that does not fit `dtype` (see overflows()).
void check_scalar_fits(const Scalar& v, ScalarType dtype, const char* name) {
  EMBER_DISPATCH_ALL_AND_COMPLEX(dtype, name, [&] {
    EMBER_CHECK(!overflows<scalar_t>(v), "value cannot be converted to type ", overflow_type_name(dtype),
                " without overflow");
  });
}
}  // namespace

Tensor& fill_(Tensor& t, Scalar value) {
  bool grad = autograd::inplace_needs_grad(t, {});
  if (grad) autograd::check_inplace(t, false);
  check_scalar_fits(value, t.dtype(), "fill_");
  EMBER_DISPATCH_ALL_AND_COMPLEX(t.dtype(), "fill_", [&] { fill_raw<scalar_t>(t, scalar_to<scalar_t>(value)); });
  t.bump_version("fill_");
  if (grad) {
    auto n = std::make_shared<autograd::FillBackward0>();
    n->next_edges = {autograd::gradient_edge(t)};
    autograd::rebase_history(t, n);
  }
  if (autograd::forward_ad::is_active()) autograd::forward_ad::on_copy(t, Tensor());
  return t;
}

void check_number_fits(const Tensor& value, ScalarType dtype) {
  if (!value.defined() || !is_wrapped_number(value) || is_complex(dtype)) return;
  check_scalar_fits(item(value), dtype, "check_number_fits");
}

Tensor& fill_(Tensor& t, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  assert_no_internal_overlap(t);
  Tensor v = to_dtype(value, t.dtype());  // converts like copy_ (wrapping), not like a number
  EMBER_DISPATCH_ALL_AND_COMPLEX(t.dtype(), "fill_", [&] { fill_raw<scalar_t>(t, *v.data<scalar_t>()); });
  t.bump_version();
  if (autograd::forward_ad::is_active()) autograd::forward_ad::on_copy(t, value);
  return t;
}

Tensor& resize_(Tensor& t, IntArrayRef sizes) {
  for (int64_t s : sizes) EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s);
  if (t.sizes() == sizes) return t;  // keeps the strides, as PyTorch
  TensorImpl* impl = t.impl();
  size_t need = storage_nbytes_contiguous(sizes, t.element_size());  // Note [Checked size arithmetic]
  need = static_cast<size_t>(
      checked_add(static_cast<int64_t>(need),
                  checked_mul(impl->storage_offset(), static_cast<int64_t>(t.element_size()), "resize_"), "resize_"));
  if (need > impl->storage()->nbytes()) {
    // The storage grows in place (views of it see the new memory, as in PyTorch); memory borrowed
    // from NumPy cannot.
    StorageImpl& st = *impl->storage();
    EMBER_CHECK(st.resizable(), "Trying to resize storage that is not resizable");
    DataPtr fresh = cpu_allocator()->allocate(need);
    std::memcpy(fresh.ptr, st.data(), st.nbytes());
    st.set_data(std::move(fresh), need);
  }
  impl->set_geometry(Shape(sizes.begin(), sizes.end()), contiguous_strides(sizes), impl->storage_offset());
  return t;
}

Scalar item(const Tensor& t) {
  EMBER_CHECK(t.numel() == 1, "a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
  return EMBER_DISPATCH_ALL_AND_COMPLEX(t.dtype(), "item", [&] { return scalar_of(*t.data<scalar_t>()); });
}

bool is_wrapped_number(const Tensor& t) { return t.impl()->wrapped_number; }

}  // namespace ember
