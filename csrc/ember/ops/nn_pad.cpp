// F.pad's reflect, replicate and circular modes as one gather: each of the padded (last k) dims
// has a map from output position to source position, and the op copies rows in one pass. The
// composite of slices, flips and cats it replaces copied the tensor once per padded dim (reflect
// padding 2.5x torch's time). Its adjoint adds each output element into its source; each is the
// other's gradient, so every derivative order reuses the two.
#include "ember/ops/nn_pad.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/checked_math.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/element_bytes.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

// Calls f(W{}) with W the unsigned word of the element size (cpu/element_bytes.h): the pad kernels
// move elements as bits.
template <typename F>
void with_element_word(int64_t element_size, F&& f) {
  const bool ok =
      with_element_bytes(static_cast<size_t>(element_size), [&](auto bytes) { f(Bytes<decltype(bytes)::value>{}); });
  EMBER_CHECK(ok, "pad: unsupported element size ", element_size);
}

// A map of the last padded dim as runs of consecutive sources: out[o0 + t] <- in[s0 + t], t < len.
struct Run {
  int64_t out, src, len;
};

struct PadMaps {
  std::vector<std::vector<int64_t>> maps;  // [padded dim][output position] -> source position
  Shape in, out;                           // the padded dims' sizes
  std::vector<Run> runs;                   // the last map as runs
  int64_t in_rows = 1, out_rows = 1;       // products of all but the last padded dim
};
using PadMapsPtr = std::shared_ptr<const PadMaps>;

// The source row (over the padded dims but the last) of output row r.
int64_t source_row(const PadMaps& m, int64_t r) {
  int64_t src = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(m.maps.size()) - 2; d >= 0; --d) {
    const int64_t o = r % m.out[d];
    r /= m.out[d];
    src += m.maps[d][o] * stride;
    stride *= m.in[d];
  }
  return src;
}

Tensor pad_gather_impl(const Tensor& x, const PadMapsPtr& m, const std::string& name);
Tensor pad_scatter_impl(const Tensor& gy, const PadMapsPtr& m, const std::string& name);

Shape with_padded(const Shape& sizes, const Shape& padded) {
  Shape s(sizes.begin(), sizes.end() - static_cast<int64_t>(padded.size()));
  s.insert(s.end(), padded.begin(), padded.end());
  return s;
}

Tensor pad_gather_impl(const Tensor& x, const PadMapsPtr& m, const std::string& name) {
  Tensor y;
  {
    autograd::NoGradGuard raw;
    Tensor xc = contiguous(x);
    y = empty(with_padded(x.sizes(), m->out), x.dtype(), x.device());
    const int64_t in_w = m->in.back(), out_w = m->out.back();
    const int64_t rows = y.numel() / std::max<int64_t>(out_w, 1), per_plane = m->out_rows;
    // rows of elements copied as same-sized words: a border element is one assignment, not a
    // memcpy call (rows of 36 floats spent most of their time in the calls)
    // each output row's source row within a plane, once per call: per row, the divisions of
    // source_row cost more than copying a 224-wide row (4x3x224x224 reflect: 1.9x torch's time)
    std::vector<int64_t> src_rows(static_cast<size_t>(per_plane));
    for (int64_t r = 0; r < per_plane; ++r) src_rows[static_cast<size_t>(r)] = source_row(*m, r);
    auto copy_rows = [&]<typename W>(W) {
      const W* src = static_cast<const W*>(xc.data_ptr());
      W* dst = static_cast<W*>(y.data_ptr());
      parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(out_w, 1)),
                   [&](int64_t r0, int64_t r1) {
                     int64_t plane = r0 / per_plane, i = r0 % per_plane;
                     for (int64_t r = r0; r < r1; ++r) {
                       const W* s = src + (plane * m->in_rows + src_rows[static_cast<size_t>(i)]) * in_w;
                       W* d = dst + r * out_w;
                       for (const Run& run : m->runs) {
                         if (run.len == 1)
                           d[run.out] = s[run.src];
                         else
                           std::memcpy(d + run.out, s + run.src, static_cast<size_t>(run.len) * sizeof(W));
                       }
                       if (++i == per_plane) i = 0, ++plane;
                     }
                   });
    };
    if (y.numel() > 0) with_element_word(x.element_size(), copy_rows);
  }
  if (auto n = autograd::make_node<autograd::LambdaBackward>(x))
    n->record(name.c_str(), {y}, {}, {}, [m, name](const autograd::TensorList& g, const autograd::TensorList&) {
      return autograd::TensorList{pad_scatter_impl(g[0], m, name + "Backward")};
    });
  return y;
}

Tensor pad_scatter_impl(const Tensor& gy, const PadMapsPtr& m, const std::string& name) {
  Tensor gx;
  {
    autograd::NoGradGuard raw;
    Tensor gc = contiguous(gy);
    gx = zeros(with_padded(gy.sizes(), m->in), gy.dtype(), gy.device());
    const int64_t in_w = m->in.back(), out_w = m->out.back();
    const int64_t planes = gy.numel() / std::max<int64_t>(m->out_rows * out_w, 1);
    if (gx.numel() > 0 && gy.numel() > 0) {
      EMBER_DISPATCH_FLOAT_AND_COMPLEX(gy.dtype(), "pad_backward", [&] {
        using T = scalar_t;
        using M = opmath_t<T>;
        const T* g = gc.data<T>();
        T* out = gx.data<T>();
        // each task owns whole planes, so the adds never race; within a plane they run in output order
        parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(m->out_rows * out_w, 1)),
                     [&](int64_t p0, int64_t p1) {
                       for (int64_t p = p0; p < p1; ++p)
                         for (int64_t r = 0; r < m->out_rows; ++r) {
                           const T* gr = g + (p * m->out_rows + r) * out_w;
                           T* xr = out + (p * m->in_rows + source_row(*m, r)) * in_w;
                           for (const Run& run : m->runs)
                             for (int64_t t = 0; t < run.len; ++t)
                               xr[run.src + t] =
                                   static_cast<T>(static_cast<M>(xr[run.src + t]) + static_cast<M>(gr[run.out + t]));
                         }
                     });
      });
    }
  }
  if (auto n = autograd::make_node<autograd::LambdaBackward>(gy))
    n->record(name.c_str(), {gx}, {}, {}, [m, name](const autograd::TensorList& g, const autograd::TensorList&) {
      return autograd::TensorList{pad_gather_impl(g[0], m, name)};
    });
  return gx;
}

}  // namespace

Tensor pad_gather(const Tensor& input, const std::vector<std::vector<int64_t>>& maps, const std::string& node_name) {
  const int64_t k = static_cast<int64_t>(maps.size());
  EMBER_CHECK(k >= 1 && k <= input.dim(), "pad_gather: expected 1 to ", input.dim(), " maps, got ", k);
  EMBER_CHECK(input.device().is_cpu(), "pad_gather is not implemented on ", input.device().str());
  auto m = std::make_shared<PadMaps>();
  m->maps = maps;
  for (int64_t d = 0; d < k; ++d) {
    const int64_t n = input.size(input.dim() - k + d);
    for (int64_t s : maps[d])
      EMBER_CHECK(s >= 0 && s < n, "pad_gather: source position ", s, " out of range for a dim of size ", n);
    m->in.push_back(n);
    m->out.push_back(static_cast<int64_t>(maps[d].size()));
    if (d + 1 < k) {
      m->in_rows *= n;
      m->out_rows *= m->out.back();
    }
  }
  const std::vector<int64_t>& last = maps.back();
  for (int64_t o = 0; o < static_cast<int64_t>(last.size()); ++o) {
    if (!m->runs.empty() && m->runs.back().src + m->runs.back().len == last[o])
      ++m->runs.back().len;
    else
      m->runs.push_back({o, last[o], 1});
  }
  return pad_gather_impl(input, m, node_name);
}

// Note [Constant pad]
// F.pad's constant mode and torch.constant_pad_nd in one pass over the output: each row of the
// last dim is either all fill (a padded position in an outer padded dim) or fill, a copy of the
// source row's overlap, fill. The slices and cats it replaces wrote the tensor once per padded
// dim (8x64x56x56 by one on each side: 1.76x torch's time). Rows are read through the input's
// strides. Negative pads crop, as a view taken first; the gradient is the same op with the pads
// negated, so every derivative order reuses it.
Tensor constant_pad_nd(const Tensor& input, IntArrayRef pad, const Scalar& value) {
  const int64_t k = static_cast<int64_t>(pad.size()) / 2;
  EMBER_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  EMBER_CHECK(k <= input.dim(),
              "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
              pad.size(), " while the input has ", input.dim(), " dimensions.");
  EMBER_CHECK(input.device().is_cpu(), "constant_pad_nd is not implemented on ", input.device().str());
  Shape out_shape = input.sizes();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = input.dim() - 1 - i, left = pad[2 * i], right = pad[2 * i + 1];
    // torch crops before it pads: cropping more than the dim holds fails even if padding would refill
    // it (so the padded size is never negative)
    const int64_t n0 = input.size(d);  // (compared without sums that could overflow)
    EMBER_CHECK(left >= -n0 && right >= -(n0 + std::min<int64_t>(left, 0)), "narrow(): length must be non-negative.");
    int64_t n = 0;
    EMBER_CHECK(!__builtin_add_overflow(input.size(d), left, &n) && !__builtin_add_overflow(n, right, &n),
                "constant_pad_nd: padded size of dimension ", d, " overflows");
    out_shape[static_cast<size_t>(d)] = n;
  }
  Tensor y;
  if (std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p < 0; })) {
    // Crops first, as a view, so only what is kept is read: the gradient of a sum (an expanded
    // tensor) was made contiguous whole, 3x torch's time.
    autograd::NoGradGuard raw;
    Tensor kept = input;
    Shape grow(pad.begin(), pad.end());
    for (int64_t i = 0; i < k; ++i) {
      const int64_t d = input.dim() - 1 - i, start = std::max<int64_t>(-pad[2 * i], 0);
      kept = narrow(kept, d, start, kept.size(d) - start - std::max<int64_t>(-pad[2 * i + 1], 0));
      grow[2 * i] = std::max<int64_t>(pad[2 * i], 0);
      grow[2 * i + 1] = std::max<int64_t>(pad[2 * i + 1], 0);
    }
    // a crop alone is a copy (the copy kernel's broadcast and strided loops beat the rows below)
    const bool crop_only = std::all_of(grow.begin(), grow.end(), [](int64_t p) { return p == 0; });
    y = crop_only ? clone(kept, MemoryFormat::Contiguous) : constant_pad_nd(kept, grow, value);
  } else {
    autograd::NoGradGuard raw;
    y = empty(out_shape, input.dtype(), input.device());
    if (y.numel() > 0) {
      // Read in place through the input's strides (an expanded gradient is not made contiguous).
      // The padded dims as seen by the rows: the last dim always (unpadded when k is 0).
      const int64_t kd = std::max<int64_t>(k, 1), first = input.dim() - kd;
      auto left_of = [&](int64_t d) { return input.dim() - 1 - d < k ? pad[2 * (input.dim() - 1 - d)] : 0; };
      const int64_t in_w = input.dim() ? input.size(-1) : 1, out_w = input.dim() ? y.size(-1) : 1;
      const int64_t left_w = input.dim() ? left_of(input.dim() - 1) : 0, step = input.dim() ? input.stride(-1) : 1;
      // the source row's offset (within a plane) of each output row within a plane, -1 for an all-fill row
      int64_t per_plane = 1;
      for (int64_t d = first; d < input.dim() - 1; ++d) per_plane *= y.size(d);
      std::vector<int64_t> src_rows(static_cast<size_t>(per_plane));
      for (int64_t r = 0; r < per_plane; ++r) {
        int64_t rest = r, src = 0;
        for (int64_t d = input.dim() - 2; d >= first && src >= 0; --d) {
          const int64_t s = rest % y.size(d) - left_of(d);
          rest /= y.size(d);
          src = s >= 0 && s < input.size(d) ? src + s * input.stride(d) : -1;
        }
        src_rows[static_cast<size_t>(r)] = src;
      }
      auto plane_offset = [&](int64_t plane) {  // over the unpadded leading dims
        int64_t off = 0;
        for (int64_t d = first - 1; d >= 0; --d) {
          off += plane % input.size(d) * input.stride(d);
          plane /= input.size(d);
        }
        return off;
      };
      // a row: fill [0, lo), the source row in [lo, hi), fill [hi, out_w) (no negative pads here)
      const int64_t lo = std::min(left_w, out_w), hi = std::min(left_w + in_w, out_w);
      const Tensor fill = full({}, value, input.dtype());
      const int64_t rows = y.numel() / out_w;
      with_element_word(input.element_size(), [&]<typename W>(W) {
        W word;
        std::memcpy(&word, fill.data_ptr(), sizeof(W));
        const W* src = static_cast<const W*>(input.data_ptr());
        W* dst = static_cast<W*>(y.data_ptr());
        parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / out_w), [&](int64_t r0, int64_t r1) {
          int64_t plane = r0 / per_plane, i = r0 % per_plane, base = plane_offset(plane);
          for (int64_t r = r0; r < r1; ++r) {
            W* d = dst + r * out_w;
            const int64_t s = src_rows[static_cast<size_t>(i)];
            if (s < 0 || hi == lo) {
              std::fill_n(d, out_w, word);
            } else {
              std::fill_n(d, lo, word);
              const W* row = src + base + s;
              if (step == 1)
                std::memcpy(d + lo, row, static_cast<size_t>(hi - lo) * sizeof(W));
              else if (step == 0)
                std::fill_n(d + lo, hi - lo, *row);
              else
                for (int64_t j = 0; j < hi - lo; ++j) d[lo + j] = row[j * step];
              std::fill_n(d + hi, out_w - hi, word);
            }
            if (++i == per_plane) i = 0, base = plane_offset(++plane);
          }
        });
      });
    }
  }
  if (auto n = autograd::make_node<autograd::LambdaBackward>(input)) {
    Shape back(pad.begin(), pad.end());
    for (int64_t& p : back) p = -p;
    n->record("ConstantPadNdBackward0", {y}, {}, {},
              [back](const autograd::TensorList& g, const autograd::TensorList&) {
                return autograd::TensorList{constant_pad_nd(g[0], back, 0)};
              });
  }
  return y;
}

namespace {
// The source position of each output position along a dim of size n padded by (left, right).
std::vector<int64_t> source_positions(int64_t n, int64_t left, int64_t right, std::string_view mode) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n + left + right));
  const int64_t period = 2 * (n - 1);
  for (int64_t i = -left; i < n + right; ++i) {
    if (mode == "reflect") {
      const int64_t j = period ? std::abs(i) % period : 0;
      out.push_back(j < n ? j : period - j);
    } else if (mode == "replicate") {
      out.push_back(std::clamp<int64_t>(i, 0, n - 1));
    } else {  // circular
      out.push_back((i % n + n) % n);
    }
  }
  return out;
}
}  // namespace

Tensor pad(const Tensor& input, IntArrayRef pad, std::string_view mode, const Scalar& value) {
  const int64_t k = static_cast<int64_t>(pad.size()) / 2;
  EMBER_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  EMBER_CHECK(k <= input.dim(),
              "Padding length should be less than or equal to two times the input dimension but got padding length ",
              pad.size(), " and input of dimension ", input.dim());
  if (mode == "constant") return constant_pad_nd(input, pad, value);
  if (mode != "reflect" && mode != "replicate" && mode != "circular")
    EMBER_NOT_IMPLEMENTED("Unrecognised padding mode ", mode);
  EMBER_CHECK(value.to_double() == 0, "Padding mode \"", mode, "\" doesn't take in value argument");
  if (k < 1 || k > 3 || (input.dim() != k + 1 && input.dim() != k + 2))
    EMBER_NOT_IMPLEMENTED(
        "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now (got input "
        "of dim ",
        input.dim(), " and pad of length ", pad.size(), ")");
  // The padded shape is checked before the maps are built (Note [Checked size arithmetic]).
  Shape out_shape = input.sizes();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = input.dim() - 1 - i, left = pad[2 * i], right = pad[2 * i + 1];
    int64_t n = 0;
    EMBER_CHECK(!__builtin_add_overflow(input.size(d), left, &n) && !__builtin_add_overflow(n, right, &n),
                "pad: padded size of dimension ", d, " overflows");
    EMBER_CHECK(n >= 0, "The input size ", input.size(d), ", plus negative padding ", left, " and ", right,
                " resulted in a negative output size, which is invalid. Check dimension ", d, " of your input.");
    out_shape[static_cast<size_t>(d)] = n;
  }
  storage_nbytes_contiguous(out_shape, input.element_size());
  Tensor x = input;
  std::vector<std::vector<int64_t>> maps(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) {
    const int64_t d = input.dim() - 1 - i;
    int64_t left = pad[2 * i], right = pad[2 * i + 1], n = x.size(d);
    EMBER_CHECK(mode != "reflect" || (left < n && right < n),
                "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
                left, ", ", right, ") at dimension ", d, " of input ", shape_str(input.sizes()));
    if (mode == "circular") {
      EMBER_CHECK(left <= n && right <= n, "Padding value causes wrapping around more than once.");
      if (left < 0 || right < 0) {  // torch crops the negative sides first and wraps what is left
        EMBER_CHECK(left >= -n && right >= -(n + std::min<int64_t>(left, 0)), "narrow(): length must be non-negative.");
        x = narrow(x, d, std::max<int64_t>(-left, 0), n + std::min<int64_t>(left, 0) + std::min<int64_t>(right, 0));
        left = std::max<int64_t>(left, 0), right = std::max<int64_t>(right, 0), n = x.size(d);
        EMBER_CHECK(left <= n && right <= n, "Padding value causes wrapping around more than once.");
      }
    }
    EMBER_CHECK(mode != "replicate" || n > 0, "input tensor must have non-zero size in the padded dims");
    if (mode != "circular") {  // torch's check; a side cropping past the dim is refused outright (no overflow)
      const char* name = i == 0 ? "W" : i == 1 ? "H" : "D";
      EMBER_CHECK(out_shape[static_cast<size_t>(d)] >= 1 && left >= -n && right >= -n, "input (", name, ": ", n,
                  ") is too small. Calculated output ", name, ": ", out_shape[static_cast<size_t>(d)]);
    }
    maps[static_cast<size_t>(k - 1 - i)] = source_positions(n, left, right, mode);
  }
  const std::string name =
      mode == "circular" ? std::string("CopySlices")
                         : detail::str_cat(mode == "reflect" ? "Reflection" : "Replication", "Pad", k, "DBackward0");
  return pad_gather(x, maps, name);
}

}  // namespace ember
