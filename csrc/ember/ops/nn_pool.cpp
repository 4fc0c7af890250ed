// Pooling ops, F.unfold/F.fold: argument checks and shapes as torch, autograd records; the
// arithmetic is in cpu/pool_kernels.cpp and cpu/conv_kernels.cpp (im2col) behind per-device
// entries. Inputs are (leading dims..., spatial...) with the leading dims flattened into
// independent planes, so batched and unbatched inputs take the same path.
//
// Backward formulas: avg pools and im2col/col2im are linear, each pair the other's adjoint
// (so every derivative order reuses them); max pools scatter the gradient to the argmax with
// scatter_add, whose own gradient (a gather) gives double backward; with no graph recorded they
// run cpu::max_pool_backward, one pass per plane.
#include <algorithm>
#include <string>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/cpu/conv_kernels.h"
#include "ember/cpu/pool_kernels.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

void check_cpu(const Tensor& t, const char* op) {
  if (!t.device().is_cpu()) EMBER_NOT_IMPLEMENTED(op, " is not implemented on ", t.device().str());
}

ScalarType compute_dtype(ScalarType t, const char* op) {
  if (t == ScalarType::Float32 || t == ScalarType::Float64) return t;
  if (t == ScalarType::Float16 || t == ScalarType::BFloat16) return ScalarType::Float32;
  EMBER_NOT_IMPLEMENTED("\"", op, "\" not implemented for '", dtype_name(t), "'");
}
Tensor prepared(const Tensor& t, ScalarType ct) { return contiguous(t.dtype() == ct ? t : to_dtype(t, ct)); }
Tensor finished(const Tensor& r, ScalarType dt) { return r.dtype() == dt ? r : to_dtype(r, dt); }

// Pool parameters, expanded to nd values each.
struct PoolArgs {
  int64_t nd = 2;
  Shape k, stride, pad, dil, out;  // out: adaptive output size
  bool adaptive = false, ceil_mode = false, count_include_pad = true;
  int64_t divisor = 0;
};

int64_t planes_of(IntArrayRef sizes, int64_t nd) {
  int64_t p = 1;
  for (size_t i = 0; i + nd < sizes.size(); ++i) p *= sizes[i];
  return p;
}

cpu::PoolGeometry geometry(const PoolArgs& a, IntArrayRef x_sizes, IntArrayRef y_sizes) {
  cpu::PoolGeometry g;
  const int64_t nd = a.nd, lead = static_cast<int64_t>(x_sizes.size()) - nd, off = 3 - nd;
  g.planes = planes_of(x_sizes, nd);
  g.adaptive = a.adaptive;
  for (int64_t i = 0; i < nd; ++i) {
    g.in[off + i] = x_sizes[lead + i];
    g.out[off + i] = y_sizes[lead + i];
    if (!a.adaptive) {
      g.k[off + i] = a.k[i];
      g.stride[off + i] = a.stride[i];
      g.pad[off + i] = a.pad[i];
      g.dil[off + i] = a.dil.empty() ? 1 : a.dil[i];
    }
  }
  return g;
}

Shape out_sizes(const Tensor& x, const PoolArgs& a, IntArrayRef spatial) {
  Shape s(x.sizes().begin(), x.sizes().end() - a.nd);
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

// ---- max pools (strided and adaptive) ----

Tensor max_pool_backward(const Tensor& g, const Tensor& idx, const Shape& x_sizes, int64_t nd) {
  int64_t planes = planes_of(x_sizes, nd), in_l = 1;
  for (int64_t i = 0; i < nd; ++i) in_l *= x_sizes[x_sizes.size() - nd + i];
  if (!autograd::GradMode::is_enabled() && is_floating_point(g.dtype()) && g.device().is_cpu()) {
    Tensor gc = contiguous(g), ic = contiguous(idx);
    Tensor gx = empty(x_sizes, g.dtype(), g.device());
    if (gx.numel() > 0)
      cpu::max_pool_backward(g.dtype(), gc.data_ptr(), ic.data<int64_t>(), gx.data_ptr(), planes, in_l,
                             planes > 0 ? gc.numel() / planes : 0);
    return gx;
  }
  Tensor z = zeros({planes, in_l}, g.dtype(), g.device());
  return view(scatter_add(z, 1, reshape(idx, {planes, -1}), reshape(g, {planes, -1})), x_sizes);
}

std::tuple<Tensor, Tensor> max_pool_run(const Tensor& x, const PoolArgs& a, const Shape& ys, const char* node_name,
                                        const char* op) {
  check_cpu(x, op);
  Tensor y, idx;
  {
    autograd::NoGradGuard raw;
    const auto geo = geometry(a, x.sizes(), ys);
    ScalarType ct =
        x.dtype() == ScalarType::BFloat16 && cpu::max_pool_takes_bf16(geo) ? x.dtype() : compute_dtype(x.dtype(), op);
    Tensor xc = prepared(x, ct);
    y = empty(ys, ct, x.device());
    idx = empty(ys, ScalarType::Int64, x.device());
    if (y.numel() > 0) cpu::max_pool(ct, xc.data_ptr(), y.data_ptr(), idx.data<int64_t>(), geo);
    y = finished(y, x.dtype());
  }
  if (auto n = autograd::make_node<LambdaBackward>(x)) {
    Shape xs = x.sizes();
    int64_t nd = a.nd;
    n->record(node_name, {y}, {idx}, {}, [xs, nd](const TensorList& g, const TensorList& s) -> TensorList {
      return {max_pool_backward(g[0], s[0], xs, nd)};
    });
  }
  return {y, idx};
}

// ---- avg pools (strided and adaptive): two linear maps, each the other's adjoint ----

Tensor avg_pool_bwd(const Tensor& gy, const Shape& xs, const PoolArgs& a, const char* node_name);

Tensor avg_pool_fwd(const Tensor& x, const PoolArgs& a, const Shape& ys, const char* node_name) {
  const char* op = a.adaptive ? "adaptive_avg_pool" : "avg_pool";
  check_cpu(x, op);
  Tensor y;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = compute_dtype(x.dtype(), op);
    Tensor xc = prepared(x, ct);
    y = empty(ys, ct, x.device());
    if (y.numel() > 0)
      cpu::avg_pool(ct, xc.data_ptr(), y.data_ptr(), geometry(a, x.sizes(), ys), a.count_include_pad, a.divisor);
    y = finished(y, x.dtype());
  }
  if (auto n = autograd::make_node<LambdaBackward>(x)) {
    Shape xs = x.sizes();
    n->record(node_name, {y}, {}, {}, [xs, a](const TensorList& g, const TensorList&) -> TensorList {
      return {avg_pool_bwd(g[0], xs, a, a.adaptive ? "AdaptiveAvgPoolBackwardBackward0" : "AvgPoolBackwardBackward0")};
    });
  }
  return y;
}

Tensor avg_pool_bwd(const Tensor& gy, const Shape& xs, const PoolArgs& a, const char* node_name) {
  Tensor gx;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = compute_dtype(gy.dtype(), "avg_pool_backward");
    Tensor gyc = prepared(gy, ct);
    gx = empty(xs, ct, gy.device());
    if (gx.numel() > 0) {
      if (gy.numel() == 0)
        fill_(gx, 0);
      else
        cpu::avg_pool_backward(ct, gyc.data_ptr(), gx.data_ptr(), geometry(a, xs, gy.sizes()), a.count_include_pad,
                               a.divisor);
    }
    gx = finished(gx, gy.dtype());
  }
  if (auto n = autograd::make_node<LambdaBackward>(gy)) {
    Shape ys = gy.sizes();
    n->record(node_name, {gx}, {}, {}, [ys, a](const TensorList& g, const TensorList&) -> TensorList {
      return {avg_pool_fwd(g[0], a, ys, a.adaptive ? "AdaptiveAvgPoolBackwardBackward0" : "AvgPoolBackwardBackward0")};
    });
  }
  return gx;
}

// ---- argument checks (torch's messages) ----

const char* dim_names[3] = {"D", "H", "W"};

Shape expand(IntArrayRef v, int64_t nd, const char* op, const char* what, bool allow_empty) {
  if (allow_empty && v.empty()) return {};
  if (v.size() == 1) return Shape(nd, v[0]);
  EMBER_CHECK(static_cast<int64_t>(v.size()) == nd, op, ": ", what, " must either be ",
              allow_empty ? "omitted, a single int, or a tuple of " : "a single int, or a tuple of ", nd, " ints");
  return v.vec();
}

void check_input(const Tensor& x, int64_t nd, const char* op) {
  EMBER_CHECK(x.dim() == nd + 1 || x.dim() == nd + 2, op, ": Expected ", nd + 1, "D or ", nd + 2,
              "D (batch mode) tensor with optional 0 dim batch size for input, but got:", x.shape_str());
  for (int64_t i = x.dim() == nd + 2 ? 1 : 0; i < x.dim(); ++i)
    EMBER_CHECK(x.size(i) > 0, op, ": Expected ", nd + 1, "D or ", nd + 2,
                "D (batch mode) tensor with optional 0 dim batch size for input, but got:", x.shape_str());
}

// Output sizes of a strided pool; checks kernel/stride/padding/dilation as torch.
Shape pool_out(const Tensor& x, PoolArgs& a, const char* op, bool dilated) {
  const int64_t nd = a.nd, lead = x.dim() - nd;
  std::string kstr, dstr;
  for (int64_t i = 0; i < nd; ++i) {
    kstr += std::string(i ? " " : "") + "k" + dim_names[3 - nd + i] + ": " + std::to_string(a.k[i]);
    dstr += std::string(i ? " " : "") + "dilation" + dim_names[3 - nd + i] + ": " + std::to_string(a.dil[i]);
  }
  for (int64_t v : a.k) EMBER_CHECK(v > 0, "kernel size should be greater than zero, but got ", kstr);
  for (int64_t v : a.stride) EMBER_CHECK(v > 0, "stride should not be zero");
  for (int64_t v : a.pad) EMBER_CHECK(v >= 0, "pad must be non-negative");
  for (int64_t v : a.dil) EMBER_CHECK(v > 0, "dilation should be greater than zero, but got ", dstr);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t eff = dilated ? a.dil[i] * (a.k[i] - 1) + 1 : a.k[i];
    if (dilated)
      EMBER_CHECK(a.pad[i] <= eff / 2, "pad should be at most half of effective kernel size, but got pad=", a.pad[i],
                  ", kernel_size=", a.k[i], " and dilation=", a.dil[i]);
    else
      EMBER_CHECK(a.pad[i] <= a.k[i] / 2, "pad should be at most half of effective kernel size, but got pad=", a.pad[i],
                  ", kernel_size=", a.k[i], " and dilation=1");
  }
  Shape out(nd);
  bool bad = false;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t in = x.size(lead + i), s = a.stride[i];
    int64_t span = in + 2 * a.pad[i] - a.dil[i] * (a.k[i] - 1) - 1;
    int64_t o = (span + (a.ceil_mode ? s - 1 : 0)) / s + 1;
    if (span < 0) o = span / s + 1 - (span % s != 0 ? 1 : 0);  // floor division for negative spans
    if (a.ceil_mode && (o - 1) * s >= in + a.pad[i]) --o;
    out[i] = o;
    bad = bad || o < 1;
  }
  if (bad) {
    std::string ins = std::to_string(x.size(lead - 1 >= 0 ? lead - 1 : 0)), outs = ins;
    if (lead == 0) ins = outs = "1";
    for (int64_t i = 0; i < nd; ++i) {
      ins += 'x';
      ins += std::to_string(x.size(lead + i));
      outs += 'x';
      outs += std::to_string(out[i]);
    }
    EMBER_CHECK(false, "Given input size: (", ins, "). Calculated output size: (", outs, "). Output size is too small");
  }
  (void)op;
  return out;
}

const char* pool_name(const char* base, int64_t nd) {
  static std::string names[8][3];
  static const char* bases[] = {"max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool",
                                "MaxPool",  "AvgPool",  "AdaptiveAvgPool",   "AdaptiveMaxPool"};
  for (int b = 0; b < 8; ++b)
    if (std::string(base) == bases[b]) {
      std::string& s = names[b][nd - 1];
      if (s.empty())
        s = b < 4 ? std::string(base) + std::to_string(nd) + "d"
                  : std::string(base) + std::to_string(nd) + (b == 4 ? "DWithIndicesBackward0" : "DBackward0");
      return s.c_str();
    }
  return base;
}

PoolArgs adaptive_args(const Tensor& x, int64_t nd, IntArrayRef output_size, const char* op) {
  EMBER_CHECK(x.dim() == nd + 1 || x.dim() == nd + 2, op, "(): Expected ", nd + 1, "D or ", nd + 2,
              "D tensor, but got ", x.shape_str());
  EMBER_CHECK(static_cast<int64_t>(output_size.size()) == nd, op, ": output_size must be ", nd);
  for (int64_t v : output_size) {
    std::string got;
    for (size_t i = 0; i < output_size.size(); ++i) got += (i ? ", " : "") + std::to_string(output_size[i]);
    EMBER_CHECK(v >= 0, op, ": elements of output_size must be greater than or equal to 0 but received {", got, "}");
  }
  for (int64_t i = x.dim() == nd + 2 ? 1 : 0; i < x.dim(); ++i)
    EMBER_CHECK(x.size(i) > 0, op,
                "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                x.shape_str(), " with dimension ", i, " being empty");
  PoolArgs a;
  a.nd = nd;
  a.adaptive = true;
  a.out = output_size.vec();
  return a;
}

int64_t spatial_volume(IntArrayRef sizes, int64_t nd) {
  int64_t v = 1;
  for (int64_t i = 0; i < nd; ++i) v *= sizes[sizes.size() - nd + i];
  return v;
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool_with_indices(const Tensor& input, int64_t nd, IntArrayRef kernel_size,
                                                 IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                 bool ceil_mode) {
  EMBER_CHECK(nd >= 1 && nd <= 3, "max_pool: expected 1 to 3 spatial dims, got ", nd);
  const char* op = pool_name("max_pool", nd);
  PoolArgs a;
  a.nd = nd;
  a.k = expand(kernel_size, nd, op, "kernel_size", false);
  a.stride = expand(stride, nd, op, "stride", true);
  if (a.stride.empty()) a.stride = a.k;
  a.pad = expand(padding, nd, op, "padding", false);
  a.dil = expand(dilation, nd, op, "dilation", false);
  a.ceil_mode = ceil_mode;
  check_input(input, nd, op);
  Shape out = pool_out(input, a, op, true);
  return max_pool_run(input, a, out_sizes(input, a, out), pool_name("MaxPool", nd), op);
}

Tensor avg_pool(const Tensor& input, int64_t nd, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  EMBER_CHECK(nd >= 1 && nd <= 3, "avg_pool: expected 1 to 3 spatial dims, got ", nd);
  const char* op = pool_name("avg_pool", nd);
  PoolArgs a;
  a.nd = nd;
  a.k = expand(kernel_size, nd, op, "kernel_size", false);
  a.stride = expand(stride, nd, op, "stride", true);
  if (a.stride.empty()) a.stride = a.k;
  a.pad = expand(padding, nd, op, "padding", false);
  a.dil = Shape(nd, 1);
  a.ceil_mode = ceil_mode;
  a.count_include_pad = count_include_pad;
  if (divisor_override) {
    EMBER_CHECK(*divisor_override != 0, "divisor must be not zero");
    a.divisor = *divisor_override;
  }
  check_input(input, nd, op);
  Shape out = pool_out(input, a, op, false);
  return avg_pool_fwd(input, a, out_sizes(input, a, out), pool_name("AvgPool", nd));
}

Tensor adaptive_avg_pool(const Tensor& input, int64_t nd, IntArrayRef output_size) {
  EMBER_CHECK(nd >= 1 && nd <= 3, "adaptive_avg_pool: expected 1 to 3 spatial dims, got ", nd);
  const char* op = pool_name("adaptive_avg_pool", nd);
  PoolArgs a = adaptive_args(input, nd, output_size, op);
  // Global average pooling (ResNet's head) is the mean over the spatial dims, as in torch (its
  // grad_fn is MeanBackward1 too): the reduction's row sums beat a pooling window per plane
  // (2-2.5x torch's time before).
  if (std::all_of(a.out.begin(), a.out.end(), [](int64_t o) { return o == 1; }) && input.numel() > 0 &&
      is_floating_point(input.dtype()) && input.device().is_cpu()) {
    std::vector<int64_t> dims;
    for (int64_t d = input.dim() - nd; d < input.dim(); ++d) dims.push_back(d);
    return mean(input, dims, true);
  }
  return avg_pool_fwd(input, a, out_sizes(input, a, a.out), pool_name("AdaptiveAvgPool", nd));
}

std::tuple<Tensor, Tensor> adaptive_max_pool(const Tensor& input, int64_t nd, IntArrayRef output_size) {
  EMBER_CHECK(nd >= 1 && nd <= 3, "adaptive_max_pool: expected 1 to 3 spatial dims, got ", nd);
  const char* op = pool_name("adaptive_max_pool", nd);
  PoolArgs a = adaptive_args(input, nd, output_size, op);
  return max_pool_run(input, a, out_sizes(input, a, a.out), pool_name("AdaptiveMaxPool", nd), op);
}

Tensor max_unpool(const Tensor& input, const Tensor& indices, IntArrayRef output_size) {
  const int64_t nd = static_cast<int64_t>(output_size.size());
  EMBER_CHECK(nd >= 1 && nd <= 3, "max_unpool: output_size must have 1 to 3 elements, got ", nd);
  EMBER_CHECK(indices.dtype() == ScalarType::Int64,
              "elements in indices should be type int64 but got: ", dtype_name(indices.dtype()));
  EMBER_CHECK(input.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
              input.shape_str(), ") but got indices tensor with shape: ", indices.shape_str());
  EMBER_CHECK(input.dim() == nd + 1 || input.dim() == nd + 2, "max_unpool", nd, "d: Input to max_unpooling", nd,
              "d should be a ", nd + 1, "d or ", nd + 2, "d Tensor, but got a tensor with ", input.dim(),
              " dimensions.");
  const int64_t planes = planes_of(input.sizes(), nd), out_l = spatial_volume(output_size, nd);
  Shape ys(input.sizes().begin(), input.sizes().end() - nd);
  ys.insert(ys.end(), output_size.begin(), output_size.end());
  if (indices.numel() > 0) {
    int64_t hi = item(amax(indices)).to_int(), lo = item(amin(indices)).to_int();
    if (hi >= out_l || lo < 0) {
      std::string sz;
      for (int64_t i = 0; i < nd; ++i) {
        if (i) sz += 'x';
        sz += std::to_string(output_size[i]);
      }
      EMBER_CHECK(false, "Found an invalid max index: ", hi >= out_l ? hi : lo, " (output volumes are of size ", sz,
                  ")");
    }
  }
  Tensor z = zeros({planes, out_l}, input.dtype(), input.device());
  return view(scatter(z, 1, reshape(indices, {planes, -1}), reshape(input, {planes, -1})), ys);
}

// ---- F.unfold / F.fold (im2col / col2im), 2-d blocks ----

namespace {
cpu::ConvGeometry block_geometry(int64_t batch, int64_t channels, IntArrayRef spatial, IntArrayRef blocks,
                                 IntArrayRef k, IntArrayRef dil, IntArrayRef pad, IntArrayRef stride) {
  cpu::ConvGeometry g;
  g.batch = batch;
  g.c_in = channels;
  for (int i = 0; i < 2; ++i) {
    g.in[1 + i] = spatial[i];
    g.out[1 + i] = blocks[i];
    g.k[1 + i] = k[i];
    g.dil[1 + i] = dil[i];
    g.pad[1 + i] = pad[i];
    g.stride[1 + i] = stride[i];
  }
  return g;
}

struct BlockArgs {
  Shape k, dil, pad, stride;
};

BlockArgs block_args(IntArrayRef k, IntArrayRef dil, IntArrayRef pad, IntArrayRef stride, const char* op) {
  BlockArgs b{expand(k, 2, op, "kernel_size", false), expand(dil, 2, op, "dilation", false),
              expand(pad, 2, op, "padding", false), expand(stride, 2, op, "stride", false)};
  for (int i = 0; i < 2; ++i) {
    EMBER_CHECK(b.k[i] > 0, "kernel size should be greater than zero, but got kernel_height: ", b.k[0],
                " kernel_width: ", b.k[1]);
    EMBER_CHECK(b.dil[i] > 0, "dilation should be greater than zero, but got dilation_height: ", b.dil[0],
                " dilation_width: ", b.dil[1]);
    EMBER_CHECK(b.pad[i] >= 0, "padding should be non-negative, but got pad_height: ", b.pad[0],
                " pad_width: ", b.pad[1]);
    EMBER_CHECK(b.stride[i] > 0, "stride should be greater than zero, but got stride_height: ", b.stride[0],
                " stride_width: ", b.stride[1]);
  }
  return b;
}

Shape blocks_of(IntArrayRef spatial, const BlockArgs& b) {
  Shape n(2);
  for (int i = 0; i < 2; ++i) n[i] = (spatial[i] + 2 * b.pad[i] - (b.dil[i] * (b.k[i] - 1) + 1)) / b.stride[i] + 1;
  return n;
}

std::string pair_str(IntArrayRef v) { return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")"; }

Tensor im2col_raw(const Tensor& x, const BlockArgs& b);
Tensor col2im_raw(const Tensor& col, IntArrayRef out_spatial, const BlockArgs& b);

// x (N, C, H, W) contiguous-able, batched.
Tensor im2col_raw(const Tensor& x, const BlockArgs& b) {
  check_cpu(x, "im2col");
  Shape sp{x.size(2), x.size(3)}, nb = blocks_of(sp, b);
  Tensor col;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = compute_dtype(x.dtype(), "im2col");
    Tensor xc = prepared(x, ct);
    col = empty({x.size(0), x.size(1) * b.k[0] * b.k[1], nb[0] * nb[1]}, ct, x.device());
    if (col.numel() > 0)
      cpu::im2col(ct, xc.data_ptr(), col.data_ptr(),
                  block_geometry(x.size(0), x.size(1), sp, nb, b.k, b.dil, b.pad, b.stride));
    col = finished(col, x.dtype());
  }
  if (auto n = autograd::make_node<LambdaBackward>(x)) {
    n->record("Im2ColBackward0", {col}, {}, {},
              [sp, b](const TensorList& g, const TensorList&) -> TensorList { return {col2im_raw(g[0], sp, b)}; });
  }
  return col;
}

Tensor col2im_raw(const Tensor& col, IntArrayRef out_spatial, const BlockArgs& b) {
  check_cpu(col, "col2im");
  Shape sp = out_spatial.vec(), nb = blocks_of(sp, b);
  int64_t C = col.size(1) / (b.k[0] * b.k[1]);
  Tensor x;
  {
    autograd::NoGradGuard raw;
    ScalarType ct = compute_dtype(col.dtype(), "col2im");
    Tensor cc = prepared(col, ct);
    x = empty({col.size(0), C, sp[0], sp[1]}, ct, col.device());
    if (x.numel() > 0)
      cpu::col2im(ct, cc.data_ptr(), x.data_ptr(), block_geometry(col.size(0), C, sp, nb, b.k, b.dil, b.pad, b.stride));
    x = finished(x, col.dtype());
  }
  if (auto n = autograd::make_node<LambdaBackward>(col)) {
    n->record("Col2ImBackward0", {x}, {}, {},
              [b](const TensorList& g, const TensorList&) -> TensorList { return {im2col_raw(g[0], b)}; });
  }
  return x;
}
}  // namespace

Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  BlockArgs b = block_args(kernel_size, dilation, padding, stride, "im2col");
  bool ok = input.dim() == 3 || input.dim() == 4;
  for (int64_t i = input.dim() == 4 ? 1 : 0; ok && i < input.dim(); ++i) ok = input.size(i) > 0;
  EMBER_CHECK(ok,
              "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
              "input, but got: ",
              input.shape_str());
  bool unbatched = input.dim() == 3;
  Tensor x = unbatched ? unsqueeze(input, 0) : input;
  Shape sp{x.size(2), x.size(3)}, nb = blocks_of(sp, b);
  EMBER_CHECK(nb[0] >= 1 && nb[1] >= 1, "Given input with spatial size ", pair_str(sp), ", kernel_size=", pair_str(b.k),
              ", dilation=", pair_str(b.dil), ", padding=", pair_str(b.pad),
              ", calculated shape of the array of sliding blocks as ", pair_str(nb),
              ", but its components must be at least one.");
  Tensor r = im2col_raw(x, b);
  return unbatched ? squeeze(r, Shape{0}) : r;
}

Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  BlockArgs b = block_args(kernel_size, dilation, padding, stride, "col2im");
  Shape sp = expand(output_size, 2, "col2im", "output_size", false);
  bool ok = input.dim() == 2 || input.dim() == 3;
  for (int64_t i = input.dim() == 3 ? 1 : 0; ok && i < input.dim(); ++i) ok = input.size(i) > 0;
  EMBER_CHECK(ok,
              "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and non-zero dimensions for "
              "input, but got: ",
              input.shape_str());
  bool unbatched = input.dim() == 2;
  Tensor col = unbatched ? unsqueeze(input, 0) : input;
  int64_t kk = b.k[0] * b.k[1];
  EMBER_CHECK(
      col.size(1) % kk == 0,
      "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=",
      col.size(1), " and kernel_size=", pair_str(b.k), ".");
  Shape nb = blocks_of(sp, b);
  EMBER_CHECK(nb[0] >= 1 && nb[1] >= 1 && col.size(2) == nb[0] * nb[1], "Given output_size=", pair_str(sp),
              ", kernel_size=", pair_str(b.k), ", dilation=", pair_str(b.dil), ", padding=", pair_str(b.pad),
              ", stride=", pair_str(b.stride),
              ", expected size of input's dimension 2 to match the calculated number of ", "sliding blocks ", nb[0],
              " * ", nb[1], " = ", nb[0] * nb[1], ", but got input.size(2)=", col.size(2), ".");
  Tensor r = col2im_raw(col, sp, b);
  return unbatched ? squeeze(r, Shape{0}) : r;
}

}  // namespace ember
