// F.grid_sample on 4-d input, bilinear or nearest, as one op forward and one backward.
//
// Note [Fused grid_sample]: each output pixel's source point (the grid's (x, y) unnormalized, then
// clipped or reflected by the padding mode) and its taps are computed once, then applied to every
// channel; the backward scatters the output gradient into the input through the same taps and
// gives the grid its gradient from the taps' differences. The composition it replaces (about 40
// elementwise and gather ops in nn/functional.py, which still serves 5-d input) took 4.7x torch's
// time on a 4x16x32x32 input. As torch's, the backward has no derivative of its own.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/grid_sample_kernels.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

// A source coordinate and d(coordinate)/d(grid value).
struct Coord {
  double v, d;
};

// torch's grid_sampler_compute_source_index: unnormalize, then the padding mode's map.
Coord source(double g, int64_t size, int padding, bool align_corners) {
  Coord c = align_corners ? Coord{(g + 1) / 2 * double(size - 1), double(size - 1) / 2}
                          : Coord{((g + 1) * double(size) - 1) / 2, double(size) / 2};
  auto clip = [size](Coord c) {
    const double hi = double(size - 1);
    if (c.v < 0 || c.v > hi) return Coord{c.v < 0 ? 0.0 : hi, 0.0};  // (NaN passes through)
    return c;
  };
  if (padding == 1) return clip(c);
  if (padding == 2) {
    const double twice_low = align_corners ? 0.0 : -1.0,
                 twice_high = align_corners ? 2.0 * double(size - 1) : 2.0 * double(size) - 1;
    if (twice_low == twice_high) return Coord{0.0, 0.0};
    const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
    double dist = c.v - low, d = c.d;
    if (dist < 0) dist = -dist, d = -d;
    const double extra = std::fmod(dist, span);
    const double flips = std::floor(dist / span);
    c = std::fmod(flips, 2.0) == 0 ? Coord{extra + low, d} : Coord{span - extra + low, -d};
    return clip(c);
  }
  return c;
}

// One output pixel's taps: up to 4 input offsets (y * W + x) with weights (0 where out of range),
// the linear weights along x and y, the taps' validity and the grid derivative factors.
struct Taps {
  int64_t at[4];
  double w[4];
  bool ok[4];
  double wx0, wx1, wy0, wy1;  // x1 - x, x - x0, y1 - y, y - y0 (x1 = x0 + 1), as torch forms them
  double dgx, dgy;            // d x / d grid_x, d y / d grid_y
};

Taps taps_of(double gx, double gy, int64_t H, int64_t W, bool nearest, int padding, bool align_corners) {
  const Coord cx = source(gx, W, padding, align_corners), cy = source(gy, H, padding, align_corners);
  Taps t;  // (every field set below: `Taps t{}` compiled to rep stos, a third of the forward's time)
  t.dgx = cx.d, t.dgy = cy.d;
  auto inside = [H, W](double y, double x) { return x >= 0 && x <= double(W - 1) && y >= 0 && y <= double(H - 1); };
  if (nearest) {
    const double x = std::nearbyint(cx.v), y = std::nearbyint(cy.v);  // half to even, as torch
    t.ok[0] = inside(y, x);
    t.at[0] = t.ok[0] ? static_cast<int64_t>(y) * W + static_cast<int64_t>(x) : 0;
    t.w[0] = t.ok[0] ? 1.0 : 0.0;
    for (int k = 1; k < 4; ++k) t.ok[k] = false, t.at[k] = 0, t.w[k] = 0.0;
    t.wx0 = t.wx1 = t.wy0 = t.wy1 = 0.0;
    return t;
  }
  const double x0 = std::floor(cx.v), y0 = std::floor(cy.v);
  t.wx0 = x0 + 1 - cx.v, t.wx1 = cx.v - x0, t.wy0 = y0 + 1 - cy.v, t.wy1 = cy.v - y0;
  const double ys[4] = {y0, y0, y0 + 1, y0 + 1}, xs[4] = {x0, x0 + 1, x0, x0 + 1};
  const double ws[4] = {t.wx0 * t.wy0, t.wx1 * t.wy0, t.wx0 * t.wy1, t.wx1 * t.wy1};
  for (int k = 0; k < 4; ++k) {
    t.ok[k] = inside(ys[k], xs[k]);
    t.at[k] = t.ok[k] ? static_cast<int64_t>(ys[k]) * W + static_cast<int64_t>(xs[k]) : 0;
    t.w[k] = t.ok[k] ? ws[k] : 0.0;
  }
  return t;
}

// The taps of every output pixel of every batch item, [N * Ho * Wo], in a buffer from the caching
// allocator (a std::vector of them was a fresh mapping, page faults and zeroing on every call).
struct TapBuffer {
  Tensor bytes;
  const Taps* data() const { return reinterpret_cast<const Taps*>(bytes.data<uint8_t>()); }
  const Taps& operator[](int64_t p) const { return data()[p]; }
};
static_assert(std::is_trivially_copyable_v<Taps>);
template <typename T>
TapBuffer all_taps(const Tensor& grid, int64_t H, int64_t W, bool nearest, int padding, bool align_corners) {
  const int64_t P = grid.numel() / 2;
  TapBuffer buf{empty({P * static_cast<int64_t>(sizeof(Taps))}, ScalarType::UInt8)};
  Taps* taps = reinterpret_cast<Taps*>(buf.bytes.data<uint8_t>());
  const T* g = grid.data<T>();
  parallel_for(0, P, 2048, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      taps[p] = taps_of(double(g[2 * p]), double(g[2 * p + 1]), H, W, nearest, padding, align_corners);
  });
  return buf;
}

// The backward: grad_input (when wanted) and grad_grid (zeros for nearest, as torch's).
template <typename T>
void backward_into(const Tensor& gout, const Tensor& input, const TapBuffer& taps, bool nearest, Tensor* gin,
                   Tensor* ggrid) {
  const int64_t N = input.size(0), C = input.size(1), HW = input.size(2) * input.size(3);
  const int64_t Q = gout.size(2) * gout.size(3);  // output pixels per batch item
  const T* go = gout.data<T>();
  if (gin) {
    T* gi = gin->data<T>();
    parallel_for(0, N * C, std::max<int64_t>(1, 32768 / std::max<int64_t>(Q, 1)), [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        const Taps* tp = taps.data() + (nc / C) * Q;
        const T* g = go + nc * Q;
        T* plane = gi + nc * HW;
        for (int64_t q = 0; q < Q; ++q)
          for (int k = 0; k < (nearest ? 1 : 4); ++k)
            if (tp[q].ok[k]) plane[tp[q].at[k]] += static_cast<T>(tp[q].w[k] * double(g[q]));
      }
    });
  }
  if (ggrid && !nearest) {
    const T* x = input.data<T>();
    T* gg = ggrid->data<T>();
    parallel_for(0, N * Q, std::max<int64_t>(1, 32768 / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const int64_t n = p / Q, q = p % Q;
        const Taps& t = taps[p];
        double sx = 0, sy = 0;
        for (int64_t c = 0; c < C; ++c) {
          const T* plane = x + (n * C + c) * HW;
          double v[4];
          for (int k = 0; k < 4; ++k) v[k] = t.ok[k] ? double(plane[t.at[k]]) : 0.0;
          const double g = double(go[(n * C + c) * Q + q]);
          sx += g * ((v[1] - v[0]) * t.wy0 + (v[3] - v[2]) * t.wy1);
          sy += g * ((v[2] - v[0]) * t.wx0 + (v[3] - v[1]) * t.wx1);
        }
        gg[2 * p] = static_cast<T>(sx * t.dgx);
        gg[2 * p + 1] = static_cast<T>(sy * t.dgy);
      }
    });
  }
}

// The forward for nearest, reflection padding and planes of 2^31 elements or more: the taps in double.
void grid_sample_scalar(const Tensor& input, const Tensor& grid, Tensor& out, bool nearest, int padding,
                        bool align_corners) {
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t Q = grid.size(1) * grid.size(2), HW = H * W;
  EMBER_DISPATCH_FLOAT(input.dtype(), "grid_sampler_2d", [&] {
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      const scalar_t* x = input.data<scalar_t>();
      const scalar_t* g = grid.data<scalar_t>();
      scalar_t* o = out.data<scalar_t>();
      // Blocks of output pixels: their taps computed into L1, then applied to every channel (a buffer of
      // all taps, 120 bytes a pixel, was written and read back from memory: 6x torch's time at 3
      // channels of 224x224).
      constexpr int64_t kBlock = 128;
      parallel_for(0, N * Q, std::max<int64_t>(kBlock, 16384 / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
        Taps taps[kBlock];
        for (int64_t p0 = b; p0 < e;) {
          const int64_t n = p0 / Q, q0 = p0 % Q, len = std::min({kBlock, e - p0, Q - q0});
          for (int64_t i = 0; i < len; ++i)
            taps[i] =
                taps_of(double(g[2 * (p0 + i)]), double(g[2 * (p0 + i) + 1]), H, W, nearest, padding, align_corners);
          for (int64_t c = 0; c < C; ++c) {
            const scalar_t* plane = x + (n * C + c) * HW;
            scalar_t* orow = o + (n * C + c) * Q + q0;
            // A tap out of range (at = 0) is read but not multiplied in: inf and NaN stay out. Reading it
            // unconditionally keeps the loads free of branches, so they overlap (3x faster on planes
            // past L2 at 3 channels).
            auto tap = [plane](const Taps& t, int k) {
              const double v = double(plane[t.at[k]]);
              return t.ok[k] ? t.w[k] * v : 0.0;
            };
            if (nearest) {
              for (int64_t i = 0; i < len; ++i) orow[i] = static_cast<scalar_t>(tap(taps[i], 0));
            } else {
              for (int64_t i = 0; i < len; ++i)
                orow[i] =
                    static_cast<scalar_t>((tap(taps[i], 0) + tap(taps[i], 1)) + (tap(taps[i], 2) + tap(taps[i], 3)));
            }
          }
          p0 += len;
        }
      });
    }
  });
}

void record_grid_sample(const Tensor& input_, const Tensor& grid_, const Tensor& input, const Tensor& grid,
                        const Tensor& out, bool nearest, int padding, bool align_corners) {
  if (auto node = autograd::make_node<autograd::LambdaBackward>(input_, grid_)) {
    const bool input_grad = autograd::requires_grad(input_), grid_grad = autograd::requires_grad(grid_);
    node->record(
        "GridSampler2DBackward0", {out}, {input, grid}, {},
        [=](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
          const Tensor &x = s[0], &gr = s[1];
          Tensor gout = contiguous(g[0]);
          Tensor gin = input_grad ? zeros(x.sizes(), x.dtype()) : Tensor();
          Tensor ggrid = grid_grad ? zeros(gr.sizes(), gr.dtype()) : Tensor();
          EMBER_DISPATCH_FLOAT(x.dtype(), "grid_sampler_2d_backward", [&] {
            if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
              const TapBuffer taps = all_taps<scalar_t>(gr, x.size(2), x.size(3), nearest, padding, align_corners);
              backward_into<scalar_t>(gout, x, taps, nearest, gin.defined() ? &gin : nullptr,
                                      ggrid.defined() ? &ggrid : nullptr);
            }
          });
          // Under create_graph the gradients get a node that refuses a second derivative, as torch's
          if (auto nn = autograd::make_node<autograd::LambdaBackward>(g[0], x, gr)) {
            std::vector<Tensor> outs;
            if (gin.defined()) outs.push_back(gin);
            if (ggrid.defined()) outs.push_back(ggrid);
            auto refuse = [](const autograd::TensorList&, const autograd::TensorList&) -> autograd::TensorList {
              EMBER_NOT_IMPLEMENTED("the derivative for 'grid_sampler_2d_backward' is not implemented.");
            };
            if (outs.size() == 2)
              nn->record("GridSampler2DBackwardBackward0", {outs[0], outs[1]}, {}, {}, refuse);
            else if (outs.size() == 1)
              nn->record("GridSampler2DBackwardBackward0", {outs[0]}, {}, {}, refuse);
          }
          return {gin, ggrid};
        });
  }
}

}  // namespace

Tensor grid_sample_2d(const Tensor& input_, const Tensor& grid_, bool nearest, int padding, bool align_corners) {
  EMBER_CHECK(input_.dim() == 4 && grid_.dim() == 4 && grid_.size(3) == 2 && grid_.size(0) == input_.size(0),
              "grid_sample_2d: expected input (N, C, H, W) and grid (N, Ho, Wo, 2)");
  EMBER_CHECK(input_.dtype() == grid_.dtype() &&
                  (input_.dtype() == ScalarType::Float32 || input_.dtype() == ScalarType::Float64),
              "grid_sample_2d: float32 or float64 input and grid of one dtype expected");
  EMBER_CHECK(padding >= 0 && padding <= 2, "grid_sample_2d: padding mode 0 (zeros), 1 (border) or 2 (reflection)");
  const Tensor input = contiguous(input_), grid = contiguous(grid_);
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t Ho = grid.size(1), Wo = grid.size(2), Q = Ho * Wo, HW = H * W;
  Tensor out = empty({N, C, Ho, Wo}, input.dtype());
  if (!nearest && padding <= 1 && HW < (int64_t{1} << 31)) {  // Note [Vectorized grid_sample taps]
    cpu::grid_sample_bilinear(input.dtype(), input.data_ptr(), grid.data_ptr(), out.data_ptr(), N, C, H, W, Q, padding,
                              align_corners);
  } else {
    grid_sample_scalar(input, grid, out, nearest, padding, align_corners);
  }
  record_grid_sample(input_, grid_, input, grid, out, nearest, padding, align_corners);
  return out;
}

}  // namespace ember
