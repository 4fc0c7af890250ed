// F.interpolate's modes as one C++ op. Note [Separable resampling]: nearest, linear and cubic
// resampling act on each spatial dim independently, so the op resamples one dim at a time: the
// output along that dim is sum_j w_j[o] * x[idx_j[o]] (1, 2 or 4 taps), built from index_select
// and mul, so the gradient (index_add of the weighted gradient) and every higher derivative come
// from those ops. 'area' is adaptive average pooling.
#include <cmath>
#include <string>
#include <vector>

#include "ember/autograd/grad_mode.h"
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

Tensor resample_dim(const Tensor& x, int64_t dim, const Taps& t) {
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
    x = resample_dim(x, 2 + i, taps_for(mode, in, out, align_corners, sc));
  }
  return x.is_same(input) ? clone(input) : x;
}

}  // namespace ember
