// Convolution ops: argument checks and output shapes as torch.convolution, autograd records;
// the arithmetic is in cpu/conv_kernels.cpp behind a per-device entry.
//
// Note [Convolution autograd]: three differentiable primitives, each the adjoint of the others
// in one argument, so every order of derivative reuses them:
//   y  = conv_fwd(x, w)            grad: x <- conv_bwd_input(gy, w), w <- conv_bwd_weight(x, gy)
//   x' = conv_bwd_input(gy, w)     grad: gy <- conv_fwd(gx', w),     w <- conv_bwd_weight(gx', gy)
//   w' = conv_bwd_weight(x, gy)    grad: x <- conv_bwd_input(gy, gw'), gy <- conv_fwd(x, gw')
// A transposed convolution is conv_bwd_input (plus its bias).
#include <algorithm>
#include <string>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/autocast.h"
#include "ember/cpu/conv_kernels.h"
#include "ember/cpu/onednn.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

// Geometry of a convolution over nd spatial dims (Note [Conv geometry]); pad_after is the
// padding after each dim (equal to pad except for 'same' with an odd total).
struct ConvArgs {
  int64_t nd = 2, groups = 1;
  Shape stride, pad, pad_after, dil;
};

// ---- per-device entries (as PyTorch's DispatchStub): one function per kernel, switching on the device ----
void conv_forward_stub(Device dev, ScalarType dt, const void* x, const void* w, const void* b, void* y,
                       const cpu::ConvGeometry& g) {
  if (!dev.is_cpu()) EMBER_NOT_IMPLEMENTED("convolution is not implemented on ", dev.str());
  cpu::conv_forward(dt, x, w, b, y, g);
}
void conv_backward_input_stub(Device dev, ScalarType dt, const void* gy, const void* w, const void* b, void* gx,
                              const cpu::ConvGeometry& g) {
  if (!dev.is_cpu()) EMBER_NOT_IMPLEMENTED("convolution is not implemented on ", dev.str());
  cpu::conv_backward_input(dt, gy, w, b, gx, g);
}
void conv_backward_weight_stub(Device dev, ScalarType dt, const void* x, const void* gy, void* gw,
                               const cpu::ConvGeometry& g) {
  if (!dev.is_cpu()) EMBER_NOT_IMPLEMENTED("convolution is not implemented on ", dev.str());
  cpu::conv_backward_weight(dt, x, gy, gw, g);
}

cpu::ConvGeometry geometry(const ConvArgs& a, IntArrayRef x_sizes, IntArrayRef y_sizes, IntArrayRef w_sizes) {
  cpu::ConvGeometry g;
  g.batch = x_sizes[0];
  g.c_in = x_sizes[1];
  g.c_out = y_sizes[1];
  g.groups = a.groups;
  int64_t off = 3 - a.nd;
  for (int64_t i = 0; i < a.nd; ++i) {
    g.in[off + i] = x_sizes[2 + i];
    g.out[off + i] = y_sizes[2 + i];
    g.k[off + i] = w_sizes[2 + i];
    g.stride[off + i] = a.stride[i];
    g.pad[off + i] = a.pad[i];
    g.dil[off + i] = a.dil[i];
  }
  return g;
}

// The dtype the kernels compute in: float for 16-bit floats (converted in and out), except
// bfloat16 where oneDNN has bfloat16 kernels (Note [bfloat16 convolution] in cpu/onednn.cpp).
ScalarType compute_dtype(ScalarType t) {
  if (t == ScalarType::Float32 || t == ScalarType::Float64) return t;
  if (t == ScalarType::BFloat16 && cpu::onednn_bf16_available()) return t;
  if (t == ScalarType::Float16 || t == ScalarType::BFloat16) return ScalarType::Float32;
  EMBER_NOT_IMPLEMENTED("convolution is not implemented for '", dtype_name(t), "'");
}
Tensor prepared(const Tensor& t, ScalarType ct) {
  if (!t.defined()) return t;
  return contiguous(t.dtype() == ct ? t : to_dtype(t, ct));
}
Tensor finished(const Tensor& r, ScalarType dt) { return r.dtype() == dt ? r : to_dtype(r, dt); }

Tensor conv_fwd(const Tensor& x, const Tensor& w, const Tensor& b, const ConvArgs& a, const char* name);
Tensor conv_bwd_input(const Tensor& gy, const Tensor& w, const Tensor& b, IntArrayRef x_sizes, const ConvArgs& a,
                      const char* name);
Tensor conv_bwd_weight(const Tensor& x, const Tensor& gy, IntArrayRef w_sizes, const ConvArgs& a, const char* name);

constexpr const char* kBackwardBackward = "ConvolutionBackwardBackward0";

Tensor bias_grad(const Tensor& g) {
  std::vector<int64_t> dims{0};
  for (int64_t i = 2; i < g.dim(); ++i) dims.push_back(i);
  return sum(g, dims);
}

Tensor conv_fwd(const Tensor& x, const Tensor& w, const Tensor& b, const ConvArgs& a, const char* name) {
  Shape ys{x.size(0), w.size(0)};
  for (int64_t i = 0; i < a.nd; ++i)
    ys.push_back((x.size(2 + i) + a.pad[i] + a.pad_after[i] - a.dil[i] * (w.size(2 + i) - 1) - 1) / a.stride[i] + 1);
  Tensor y;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = compute_dtype(x.dtype());
    Tensor xc = prepared(x, ct), wc = prepared(w, ct), bc = prepared(b, ct);
    y = empty(ys, ct, x.device());
    if (y.numel() > 0)
      conv_forward_stub(x.device(), ct, xc.data_ptr(), wc.data_ptr(), bc.defined() ? bc.data_ptr() : nullptr,
                        y.data_ptr(), geometry(a, x.sizes(), ys, w.sizes()));
    y = finished(y, x.dtype());
  }
  if (auto n = autograd::make_node<LambdaBackward>(x, w, b)) {
    bool need_x = autograd::requires_grad(x), need_w = autograd::requires_grad(w),
         need_b = b.defined() && autograd::requires_grad(b);
    Shape xs = x.sizes(), wsz = w.sizes();
    n->record(name, {y}, {x, w}, {}, [=](const TensorList& g, const TensorList& s) -> TensorList {
      TensorList r(3);
      if (need_x) r[0] = conv_bwd_input(g[0], s[1], Tensor(), xs, a, kBackwardBackward);
      if (need_w) r[1] = conv_bwd_weight(s[0], g[0], wsz, a, kBackwardBackward);
      if (need_b) r[2] = bias_grad(g[0]);
      return r;
    });
  }
  return y;
}

Tensor conv_bwd_input(const Tensor& gy, const Tensor& w, const Tensor& b, IntArrayRef x_sizes, const ConvArgs& a,
                      const char* name) {
  Tensor gx;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = compute_dtype(gy.dtype());
    Tensor gyc = prepared(gy, ct), wc = prepared(w, ct), bc = prepared(b, ct);
    gx = empty(x_sizes, ct, gy.device());
    if (gx.numel() > 0) {
      if (gy.numel() == 0 && !bc.defined())
        fill_(gx, 0);
      else if (gy.numel() == 0) {  // no input channels: the output is the bias alone
        Shape bshape(x_sizes.size(), 1);
        bshape[1] = -1;
        copy_(gx, view(bc, bshape));
      } else
        conv_backward_input_stub(gy.device(), ct, gyc.data_ptr(), wc.data_ptr(), bc.defined() ? bc.data_ptr() : nullptr,
                                 gx.data_ptr(), geometry(a, x_sizes, gy.sizes(), w.sizes()));
    }
    gx = finished(gx, gy.dtype());
  }
  if (auto n = autograd::make_node<LambdaBackward>(gy, w, b)) {
    bool need_gy = autograd::requires_grad(gy), need_w = autograd::requires_grad(w),
         need_b = b.defined() && autograd::requires_grad(b);
    Shape wsz = w.sizes();
    n->record(name, {gx}, {gy, w}, {}, [=](const TensorList& g, const TensorList& s) -> TensorList {
      TensorList r(3);
      if (need_gy) r[0] = conv_fwd(g[0], s[1], Tensor(), a, kBackwardBackward);
      if (need_w) r[1] = conv_bwd_weight(g[0], s[0], wsz, a, kBackwardBackward);
      if (need_b) r[2] = bias_grad(g[0]);
      return r;
    });
  }
  return gx;
}

Tensor conv_bwd_weight(const Tensor& x, const Tensor& gy, IntArrayRef w_sizes, const ConvArgs& a, const char* name) {
  Tensor gw;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = compute_dtype(x.dtype());
    Tensor xc = prepared(x, ct), gyc = prepared(gy, ct);
    gw = empty(w_sizes, ct, x.device());
    if (gw.numel() > 0) {
      if (gy.numel() == 0)
        fill_(gw, 0);
      else
        conv_backward_weight_stub(x.device(), ct, xc.data_ptr(), gyc.data_ptr(), gw.data_ptr(),
                                  geometry(a, x.sizes(), gy.sizes(), w_sizes));
    }
    gw = finished(gw, x.dtype());
  }
  if (auto n = autograd::make_node<LambdaBackward>(x, gy)) {
    bool need_x = autograd::requires_grad(x), need_gy = autograd::requires_grad(gy);
    Shape xs = x.sizes();
    n->record(name, {gw}, {x, gy}, {}, [=](const TensorList& g, const TensorList& s) -> TensorList {
      TensorList r(2);
      if (need_x) r[0] = conv_bwd_input(s[1], g[0], Tensor(), xs, a, kBackwardBackward);
      if (need_gy) r[1] = conv_fwd(s[0], g[0], Tensor(), a, kBackwardBackward);
      return r;
    });
  }
  return gw;
}

// ---- argument checks (torch's messages) ----

std::string join_x(IntArrayRef v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

Shape expand_param(IntArrayRef v, int64_t nd, const char* name) {
  if (v.size() == 1) return Shape(nd, v[0]);
  EMBER_CHECK(static_cast<int64_t>(v.size()) == nd, "expected ", name, " to be a single integer value or a list of ",
              nd, " values to match the convolution dimensions, but got ", name, "=", shape_str(v));
  return v.vec();
}

// Checks shared by every entry point; returns (input batched, unbatched flag).
Tensor checked_input(const Tensor& input, const Tensor& weight, int64_t nd, const char* op, bool& unbatched) {
  EMBER_CHECK(input.dim() == nd + 1 || input.dim() == nd + 2, "Expected ", nd + 1, "D (unbatched) or ", nd + 2,
              "D (batched) input to ", op, ", but got input of size: ", input.shape_str());
  unbatched = input.dim() == nd + 1;
  (void)weight;
  return unbatched ? unsqueeze(input, 0) : input;
}

Tensor convolution_impl(const Tensor& input_in, const Tensor& weight, const Tensor& bias, IntArrayRef stride_in,
                        IntArrayRef padding_in, IntArrayRef dilation_in, bool transposed, IntArrayRef output_padding_in,
                        int64_t groups, bool same_padding, const char* op) {
  if (autocast::active_for({&input_in, &weight, &bias})) {  // Note [Autocast]
    autocast::ExcludeGuard exclude;
    return convolution_impl(autocast::to_lower(input_in), autocast::to_lower(weight), autocast::to_lower(bias),
                            stride_in, padding_in, dilation_in, transposed, output_padding_in, groups, same_padding,
                            op);
  }
  EMBER_CHECK(weight.dim() >= 3 && weight.dim() <= 5, op, ": expected weight to be 3-, 4- or 5-dimensional, but got ",
              weight.dim(), "-dimensional weight of size ", weight.shape_str());
  const int64_t nd = weight.dim() - 2;
  bool unbatched = false;
  Tensor input = checked_input(input_in, weight, nd, op, unbatched);
  Shape stride = expand_param(stride_in, nd, "stride");
  Shape padding = same_padding ? Shape(nd, 0) : expand_param(padding_in, nd, "padding");
  Shape dilation = expand_param(dilation_in, nd, "dilation");
  Shape output_padding = expand_param(output_padding_in, nd, "output_padding");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");
  for (int64_t v : stride) EMBER_CHECK(v > 0, "non-positive stride is not supported");
  for (int64_t v : padding) EMBER_CHECK(v >= 0, "negative padding is not supported");
  for (int64_t v : output_padding) EMBER_CHECK(v >= 0, "negative output_padding is not supported");
  for (int64_t v : dilation) EMBER_CHECK(v > 0, "non-positive dilation is not supported");
  if (same_padding)
    for (int64_t v : stride) EMBER_CHECK(v == 1, "padding='same' is not supported for strided convolutions");
  // dtypes and devices
  if (input.dtype() != weight.dtype()) {
    EMBER_CHECK(false, "Input type (", dtype_name(input.dtype()), ") and weight type (", dtype_name(weight.dtype()),
                ") should be the same");
  }
  if (bias.defined())
    EMBER_CHECK(bias.dtype() == input.dtype(), "Input type (", dtype_name(input.dtype()), ") and bias type (",
                dtype_name(bias.dtype()), ") should be the same");
  EMBER_CHECK(input.device() == weight.device() && (!bias.defined() || bias.device() == input.device()),
              "Expected all tensors to be on the same device, but found input on ", input.device().str(),
              " and weight on ", weight.device().str());
  // channels
  const Shape& ws = weight.sizes();
  const int64_t c_in = input.size(1);
  EMBER_CHECK(ws[0] % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size [", shape_str(ws), "] instead");
  int64_t c_out;
  if (!transposed) {
    EMBER_CHECK(c_in == ws[1] * groups, "Given groups=", groups, ", weight of size ", shape_str(ws), ", expected input",
                input.shape_str(), " to have ", ws[1] * groups, " channels, but got ", c_in, " channels instead");
    c_out = ws[0];
    if (bias.defined())
      EMBER_CHECK(bias.dim() == 1 && bias.size(0) == c_out, "Given weight of size ", shape_str(ws),
                  ", expected bias to be 1-dimensional with ", c_out, " elements, but got bias of size ",
                  bias.shape_str(), " instead");
  } else {
    EMBER_CHECK(c_in == ws[0], "Given transposed=1, weight of size ", shape_str(ws), ", expected input",
                input.shape_str(), " to have ", ws[0], " channels, but got ", c_in, " channels instead");
    c_out = ws[1] * groups;
    if (bias.defined())
      EMBER_CHECK(bias.dim() == 1 && bias.size(0) == c_out, "Given transposed=1, weight of size ", shape_str(ws),
                  ", expected bias to be 1-dimensional with ", c_out, " elements, but got bias of size ",
                  bias.shape_str(), " instead");
  }
  ConvArgs a;
  a.nd = nd;
  a.groups = groups;
  a.stride = stride;
  a.dil = dilation;
  a.pad = padding;
  a.pad_after = padding;
  Tensor out;
  if (!transposed) {
    if (same_padding)
      for (int64_t i = 0; i < nd; ++i) {
        int64_t total = dilation[i] * (ws[2 + i] - 1);
        a.pad[i] = total / 2;
        a.pad_after[i] = total - total / 2;
      }
    Shape padded(nd), kernel(nd);
    bool too_big = false;
    for (int64_t i = 0; i < nd; ++i) {
      padded[i] = input.size(2 + i) + a.pad[i] + a.pad_after[i];
      kernel[i] = dilation[i] * (ws[2 + i] - 1) + 1;
      too_big = too_big || padded[i] < kernel[i];
    }
    EMBER_CHECK(!too_big, "Calculated padded input size per channel: (", join_x(padded), "). Kernel size: (",
                join_x(kernel), "). Kernel size can't be greater than actual input size");
    out = conv_fwd(input, weight, bias, a, "ConvolutionBackward0");
  } else {
    bool bad_op = false;
    for (int64_t i = 0; i < nd; ++i)
      bad_op = bad_op || (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i]);
    if (bad_op) {
      std::string msg = "output padding must be smaller than either stride or dilation, but got";
      const char* names[3] = {"depth", "height", "width"};
      auto part = [&](const char* what, const Shape& v) {
        for (int64_t i = 0; i < nd; ++i)
          msg += std::string(" ") + what + "_" + names[3 - nd + i] + ": " + std::to_string(v[i]);
      };
      part("output_padding", output_padding);
      part("stride", stride);
      part("dilation", dilation);
      EMBER_CHECK(false, msg);
    }
    Shape xs{input.size(0), c_out}, in_sp, out_sp;
    bool too_small = false;
    for (int64_t i = 0; i < nd; ++i) {
      int64_t o =
          (input.size(2 + i) - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ws[2 + i] - 1) + output_padding[i] + 1;
      in_sp.push_back(input.size(2 + i));
      out_sp.push_back(o);
      too_small = too_small || o <= 0;
      xs.push_back(o);
    }
    EMBER_CHECK(!too_small, "Given input size per channel: (", join_x(in_sp),
                "). Calculated output size per channel: (", join_x(out_sp), "). Output size is too small");
    out = conv_bwd_input(input, weight, bias, xs, a, "ConvolutionBackward0");
  }
  return unbatched ? squeeze(out, Shape{0}) : out;
}

const char* conv_name(int64_t nd, bool transposed) {
  static const char* names[2][3] = {{"conv1d", "conv2d", "conv3d"},
                                    {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}};
  return names[transposed][nd - 1];
}

Tensor conv_nd(int64_t nd, const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
               IntArrayRef padding, IntArrayRef dilation, int64_t groups, bool same) {
  const char* op = conv_name(nd, false);
  EMBER_CHECK(input.dim() == nd + 1 || input.dim() == nd + 2, "Expected ", nd + 1, "D (unbatched) or ", nd + 2,
              "D (batched) input to ", op, ", but got input of size: ", input.shape_str());
  EMBER_CHECK(weight.dim() == nd + 2, op, ": expected weight to be ", nd + 2, "-dimensional, but got ", weight.dim(),
              "-dimensional weight of size ", weight.shape_str());
  return convolution_impl(input, weight, bias, stride, padding, dilation, false, {0}, groups, same, op);
}

Tensor conv_nd_str(int64_t nd, const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   std::string_view padding, IntArrayRef dilation, int64_t groups) {
  if (padding == "valid") return conv_nd(nd, input, weight, bias, stride, {0}, dilation, groups, false);
  EMBER_CHECK(padding == "same", "Invalid padding string: '", std::string(padding), "'");
  return conv_nd(nd, input, weight, bias, stride, {0}, dilation, groups, true);
}

Tensor conv_transpose_nd(int64_t nd, const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                         IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  const char* op = conv_name(nd, true);
  EMBER_CHECK(input.dim() == nd + 1 || input.dim() == nd + 2, "Expected ", nd + 1, "D (unbatched) or ", nd + 2,
              "D (batched) input to ", op, ", but got input of size: ", input.shape_str());
  EMBER_CHECK(weight.dim() == nd + 2, op, ": expected weight to be ", nd + 2, "-dimensional, but got ", weight.dim(),
              "-dimensional weight of size ", weight.shape_str());
  return convolution_impl(input, weight, bias, stride, padding, dilation, true, output_padding, groups, false, op);
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  return convolution_impl(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, false,
                          "convolution");
}

Tensor conv1d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, IntArrayRef p, IntArrayRef d,
              int64_t g) {
  return conv_nd(1, i, w, b, s, p, d, g, false);
}
Tensor conv2d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, IntArrayRef p, IntArrayRef d,
              int64_t g) {
  return conv_nd(2, i, w, b, s, p, d, g, false);
}
Tensor conv3d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, IntArrayRef p, IntArrayRef d,
              int64_t g) {
  return conv_nd(3, i, w, b, s, p, d, g, false);
}
Tensor conv1d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, std::string_view p, IntArrayRef d,
              int64_t g) {
  return conv_nd_str(1, i, w, b, s, p, d, g);
}
Tensor conv2d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, std::string_view p, IntArrayRef d,
              int64_t g) {
  return conv_nd_str(2, i, w, b, s, p, d, g);
}
Tensor conv3d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, std::string_view p, IntArrayRef d,
              int64_t g) {
  return conv_nd_str(3, i, w, b, s, p, d, g);
}
Tensor conv_transpose1d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, IntArrayRef p, IntArrayRef op,
                        int64_t g, IntArrayRef d) {
  return conv_transpose_nd(1, i, w, b, s, p, op, g, d);
}
Tensor conv_transpose2d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, IntArrayRef p, IntArrayRef op,
                        int64_t g, IntArrayRef d) {
  return conv_transpose_nd(2, i, w, b, s, p, op, g, d);
}
Tensor conv_transpose3d(const Tensor& i, const Tensor& w, const Tensor& b, IntArrayRef s, IntArrayRef p, IntArrayRef op,
                        int64_t g, IntArrayRef d) {
  return conv_transpose_nd(3, i, w, b, s, p, op, g, d);
}

}  // namespace ember
