// F.pad's reflect, replicate and circular modes as one gather: each of the padded (last k) dims
// has a map from output position to source position, and the op copies rows in one pass. The
// composite of slices, flips and cats it replaces copied the tensor once per padded dim (reflect
// padding 2.5x torch's time). Its adjoint adds each output element into its source; each is the
// other's gradient, so every derivative order reuses the two.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

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
    struct Bytes16 {
      uint64_t lo, hi;
    };
    if (y.numel() > 0) {
      switch (x.element_size()) {
        case 1:
          copy_rows(uint8_t{});
          break;
        case 2:
          copy_rows(uint16_t{});
          break;
        case 4:
          copy_rows(uint32_t{});
          break;
        case 8:
          copy_rows(uint64_t{});
          break;
        case 16:
          copy_rows(Bytes16{});
          break;
        default:
          EMBER_CHECK(false, "pad: unsupported element size ", x.element_size());
      }
    }
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

}  // namespace ember
