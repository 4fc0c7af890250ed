// F.interpolate's modes as one C++ op. Note [Separable resampling]: nearest, linear and cubic
// resampling act on each spatial dim independently, so the op resamples one dim at a time: the
// output along that dim is sum_j w_j[o] * x[idx_j[o]] (1, 2 or 4 taps). That map and its adjoint
// (cpu::resample / resample_backward) are each the other's gradient, so every derivative order
// reuses them. 'area' is adaptive average pooling.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"
#include "ember/cpu/pool_kernels.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

// The source-pixel scale of one dim (torch's area_pixel_compute_scale).
double pixel_scale(int64_t in, int64_t out, bool align_corners, double scale) {  // scale <= 0: none
  if (align_corners) return out > 1 ? double(in - 1) / double(out - 1) : 0.0;
  if (scale > 0) return 1.0 / scale;
  return double(in) / double(out);
}

struct Taps {
  int ntaps = 1;
  std::vector<std::vector<int64_t>> idx;  // [tap][o]
  std::vector<std::vector<double>> w;     // [tap][o]
};

double cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }        // |x| <= 1
double cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }  // 1 < |x| < 2

Taps taps_for(const std::string& mode, int64_t in, int64_t out, bool align_corners, double scale) {
  Taps t;
  auto clampi = [in](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  if (mode == "nearest" || mode == "nearest-exact") {
    // Nearest modes ignore align_corners; the scale is the given one or in/out.
    double s = scale > 0 ? 1.0 / scale : double(in) / double(out);
    bool exact = mode == "nearest-exact";
    t.idx.assign(1, std::vector<int64_t>(out));
    t.w.assign(1, std::vector<double>(out, 1.0));
    for (int64_t o = 0; o < out; ++o) {
      double src = exact ? std::floor((double(o) + 0.5) * s) : std::floor(double(o) * s);
      t.idx[0][o] = std::min<int64_t>(static_cast<int64_t>(src), in - 1);
    }
    return t;
  }
  double s = pixel_scale(in, out, align_corners, scale);
  if (mode == "linear") {
    t.ntaps = 2;
    t.idx.assign(2, std::vector<int64_t>(out));
    t.w.assign(2, std::vector<double>(out));
    for (int64_t o = 0; o < out; ++o) {
      double real = align_corners ? s * double(o) : s * (double(o) + 0.5) - 0.5;
      if (real < 0) real = 0;
      int64_t i0 = static_cast<int64_t>(real);
      int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      double l1 = real - double(i0);
      t.idx[0][o] = i0;
      t.idx[1][o] = i1;
      t.w[0][o] = 1.0 - l1;
      t.w[1][o] = l1;
    }
    return t;
  }
  // cubic (bicubic): 4 taps, A = -0.75, borders clamped.
  const double A = -0.75;
  t.ntaps = 4;
  t.idx.assign(4, std::vector<int64_t>(out));
  t.w.assign(4, std::vector<double>(out));
  for (int64_t o = 0; o < out; ++o) {
    double real = align_corners ? s * double(o) : s * (double(o) + 0.5) - 0.5;
    double fl = std::floor(real);
    int64_t i = static_cast<int64_t>(fl);
    double x = real - fl;
    double w[4] = {cubic2(x + 1, A), cubic1(x, A), cubic1(1 - x, A), cubic2(2 - x, A)};
    for (int j = 0; j < 4; ++j) {
      t.idx[j][o] = clampi(i - 1 + j);
      t.w[j][o] = w[j];
    }
  }
  return t;
}

// Composition for dtypes without a kernel (nearest on integer tensors): index_select per tap.
Tensor resample_composed(const Tensor& x, int64_t dim, const Taps& t) {
  const int64_t out = static_cast<int64_t>(t.idx[0].size());
  Shape wshape(x.dim(), 1);
  wshape[dim] = out;
  Tensor r;
  for (int j = 0; j < t.ntaps; ++j) {
    Tensor idx = empty({out}, ScalarType::Int64);
    std::copy(t.idx[j].begin(), t.idx[j].end(), idx.data<int64_t>());
    Tensor g = index_select(x, dim, idx);
    if (t.ntaps > 1) {
      Tensor w = empty({out}, ScalarType::Float64);
      std::copy(t.w[j].begin(), t.w[j].end(), w.data<double>());
      {
        autograd::NoGradGuard raw;
        w = view(to_dtype(w, x.dtype()), wshape);
      }
      g = mul(g, w);
    }
    r = j == 0 ? g : add(r, g);
  }
  return r;
}

// The taps of one dim, flattened for the kernel ([tap * out + o]) and shared by the nodes.
struct FlatTaps {
  int ntaps = 1;
  int64_t in = 0, out = 0;
  std::vector<int64_t> idx;
  std::vector<double> w;
};
using TapsPtr = std::shared_ptr<const FlatTaps>;

TapsPtr flatten_taps(const Taps& t, int64_t in) {
  auto f = std::make_shared<FlatTaps>();
  f->ntaps = t.ntaps;
  f->in = in;
  f->out = static_cast<int64_t>(t.idx[0].size());
  for (int j = 0; j < t.ntaps; ++j) {
    f->idx.insert(f->idx.end(), t.idx[j].begin(), t.idx[j].end());
    f->w.insert(f->w.end(), t.w[j].begin(), t.w[j].end());
  }
  return f;
}

ScalarType kernel_dtype(ScalarType t) { return t == ScalarType::Float64 ? t : ScalarType::Float32; }

void outer_inner(IntArrayRef sizes, int64_t dim, int64_t& outer, int64_t& inner) {
  outer = inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= sizes[i];
  for (size_t i = dim + 1; i < sizes.size(); ++i) inner *= sizes[i];
}

// The resampling of one dim and its adjoint: two linear maps, each the other's gradient.
Tensor resample_bwd(const Tensor& gy, int64_t dim, const TapsPtr& t, const char* name);

Tensor resample_fwd(const Tensor& x, int64_t dim, const TapsPtr& t, const char* name) {
  EMBER_CHECK(x.device().is_cpu(), "upsample is not implemented on ", x.device().str());
  Shape ys = x.sizes();
  ys[dim] = t->out;
  Tensor y;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = kernel_dtype(x.dtype());
    Tensor xc = contiguous(x.dtype() == ct ? x : to_dtype(x, ct));
    y = empty(ys, ct, x.device());
    int64_t outer, inner;
    outer_inner(ys, dim, outer, inner);
    if (y.numel() > 0)
      cpu::resample(ct, xc.data_ptr(), y.data_ptr(), outer, t->in, t->out, inner, t->ntaps, t->idx.data(), t->w.data());
    if (y.dtype() != x.dtype()) y = to_dtype(y, x.dtype());
  }
  if (auto n = autograd::make_node<autograd::LambdaBackward>(x))
    n->record(name, {y}, {}, {}, [dim, t](const autograd::TensorList& g, const autograd::TensorList&) {
      return autograd::TensorList{resample_bwd(g[0], dim, t, "UpsampleBackwardBackward0")};
    });
  return y;
}

Tensor resample_bwd(const Tensor& gy, int64_t dim, const TapsPtr& t, const char* name) {
  Shape xs = gy.sizes();
  xs[dim] = t->in;
  Tensor gx;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = kernel_dtype(gy.dtype());
    Tensor gc = contiguous(gy.dtype() == ct ? gy : to_dtype(gy, ct));
    gx = empty(xs, ct, gy.device());
    int64_t outer, inner;
    outer_inner(xs, dim, outer, inner);
    if (gx.numel() > 0)
      cpu::resample_backward(ct, gc.data_ptr(), gx.data_ptr(), outer, t->in, t->out, inner, t->ntaps, t->idx.data(),
                             t->w.data());
    if (gx.dtype() != gy.dtype()) gx = to_dtype(gx, gy.dtype());
  }
  if (auto n = autograd::make_node<autograd::LambdaBackward>(gy))
    n->record(name, {gx}, {}, {}, [dim, t](const autograd::TensorList& g, const autograd::TensorList&) {
      return autograd::TensorList{resample_fwd(g[0], dim, t, "UpsampleBackwardBackward0")};
    });
  return gx;
}

const char* node_name(const std::string& mode_in, int64_t nd) {
  static const char* names[][3] = {
      {"UpsampleNearest1DBackward0", "UpsampleNearest2DBackward0", "UpsampleNearest3DBackward0"},
      {"UpsampleNearestExact1DBackward0", "UpsampleNearestExact2DBackward0", "UpsampleNearestExact3DBackward0"},
      {"UpsampleLinear1DBackward0", "UpsampleBilinear2DBackward0", "UpsampleTrilinear3DBackward0"},
      {"UpsampleBicubic2DBackward0", "UpsampleBicubic2DBackward0", "UpsampleBicubic2DBackward0"}};
  int m = mode_in == "nearest" ? 0 : mode_in == "nearest-exact" ? 1 : mode_in == "bicubic" ? 3 : 2;
  return names[m][nd - 1];
}

}  // namespace

Tensor upsample(const Tensor& input, std::string_view mode_in, IntArrayRef output_size,
                const std::vector<std::optional<double>>& scales, bool align_corners) {
  std::string mode(mode_in);
  const int64_t nd = static_cast<int64_t>(output_size.size());
  EMBER_CHECK(nd >= 1 && nd <= 3 && input.dim() == nd + 2, "upsample: expected a ", nd + 2, "-D input for ", nd,
              " output sizes, but got input of size ", input.shape_str());
  EMBER_CHECK(scales.empty() || static_cast<int64_t>(scales.size()) == nd, "upsample: expected ", nd, " scales, got ",
              scales.size());
  for (int64_t i = 0; i < nd; ++i) {
    EMBER_CHECK(input.size(2 + i) > 0 && output_size[i] > 0,
                "Input and output sizes should be greater than 0, but got input (", input.shape_str(), ") and output ",
                shape_str(output_size));
  }
  if (!is_floating_point(input.dtype()) && mode != "nearest" && mode != "nearest-exact")
    EMBER_NOT_IMPLEMENTED("upsample_", mode, ": not implemented for '", dtype_name(input.dtype()), "'");
  if (mode == "area") return adaptive_avg_pool(input, nd, output_size);
  if (mode == "bilinear" || mode == "trilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  EMBER_CHECK(mode == "nearest" || mode == "nearest-exact" || mode == "linear" || mode == "cubic",
              "upsample: unknown mode '", std::string(mode_in), "'");
  Tensor x = input;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t in = input.size(2 + i), out = output_size[i];
    double sc = scales.empty() ? 0.0 : scales[i].value_or(0.0);
    if (in == out && sc <= 0) continue;  // every mode maps o -> o exactly then (cubic weights 0, 1, 0, 0)
    Taps t = taps_for(mode, in, out, align_corners, sc);
    if (is_floating_point(x.dtype()))
      x = resample_fwd(x, 2 + i, flatten_taps(t, in), node_name(std::string(mode_in), nd));
    else
      x = resample_composed(x, 2 + i, t);
  }
  return x.is_same(input) ? clone(input) : x;
}

}  // namespace ember
