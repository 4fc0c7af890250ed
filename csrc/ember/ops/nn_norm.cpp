// Normalization ops. batch_norm and layer_norm run their own kernels (cpu/norm_kernels.cpp) and
// record a backward that uses the fused kernels outside create_graph and, under create_graph,
// the same formula from differentiable ember ops (double backward); so does group_norm, on
// batch_norm's kernels (Note [Fused group norm]). instance_norm and rms_norm are compositions
// (instance_norm over batch_norm), so their gradients come from the parts.
#include <cmath>
#include <limits>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/ops/nn.h"
#include "ember/ops/nn_kernels.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;
using reduce_detail::num;

ScalarType opmath_dtype(ScalarType t) { return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32; }

std::string shape_of(IntArrayRef s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

void check_float(const Tensor& t, const char* op) {
  if (!is_floating_point(t.dtype()))
    EMBER_NOT_IMPLEMENTED("\"", op, "\" not implemented for '", dtype_name(t.dtype()), "'");
}

// x - mean, normalized over `dims` (keepdim), as differentiable ops: (xhat, rstd).
std::pair<Tensor, Tensor> normalize_ops(const Tensor& x, const std::vector<int64_t>& dims, double eps) {
  Tensor xmu = sub(x, mean(x, dims, true));
  Tensor rstd = rsqrt(add(mean(mul(xmu, xmu), dims, true), num(eps)));
  return {mul(xmu, rstd), rstd};
}

// The input gradient of a normalization over `dims` from gxhat = dL/dxhat (differentiable ops).
Tensor norm_input_grad(const Tensor& gxhat, const Tensor& xhat, const Tensor& rstd, const std::vector<int64_t>& dims) {
  Tensor t = sub(sub(gxhat, mean(gxhat, dims, true)), mul(xhat, mean(mul(gxhat, xhat), dims, true)));
  return mul(rstd, t);
}

// Note [Fused group norm]: the forward is one kernel (cpu/norm_kernels.cpp, gn_forward) that per
// (n, group) takes the statistics and at once, the group still in cache, writes y = x * scale[n, c]
// + shift[n, c], where scale = rstd[n, g] w[c] and shift = b[c] - mean[n, g] scale; the
// backward is one pass of per-(n, c) sums of dy and dy (x - mean) (its grad-sums kernel) and one
// pass dx = dy ka + x kb + kc with per-(n, c) coefficients from those sums (torch's decomposition).
// The composition (layer_norm's kernel, then a product and a sum broadcast per channel, each with
// its own backward) took 1.25x torch's time forward, 1.4x forward + backward. Under create_graph the
// backward composes differentiable ops instead.
Tensor fused_group_norm(const Tensor& input, int64_t G, const Tensor& weight, const Tensor& bias, double eps,
                        int64_t spatial) {
  const int64_t N = input.size(0), C = input.size(1), Cg = C / G, D = Cg * spatial;
  const ScalarType mt = opmath_dtype(input.dtype());
  Tensor x = contiguous(input), y = empty(input.sizes(), input.dtype());
  Tensor mu = empty({N * G}, mt), rstd = empty({N * G}, mt);
  {
    autograd::NoGradGuard raw;
    Tensor wc = weight.defined() ? contiguous(to_dtype(weight, mt)) : Tensor();
    Tensor bc = bias.defined() ? contiguous(to_dtype(bias, mt)) : Tensor();
    kernels::group_norm_forward(x, N, C, G, spatial, wc, bc, eps, y, mu, rstd);
  }
  if (auto n = autograd::make_node_list<LambdaBackward>({input, weight, bias})) {
    const int64_t nd = input.dim();
    n->record("NativeGroupNormBackward0", {y}, {input, weight, mu, rstd}, {},
              [=](const TensorList& g, const TensorList& s) -> TensorList {
                const Tensor &x = s[0], &w = s[1], &mean_t = s[2], &rstd_t = s[3];
                if (autograd::GradMode::is_enabled()) {  // create_graph: differentiable ops
                  std::vector<int64_t> not_c{0};
                  for (int64_t d = 2; d < nd; ++d) not_c.push_back(d);
                  Shape cshape(nd, 1);
                  cshape[1] = C;
                  auto [xhat3, r3] = normalize_ops(reshape(x, {N, G, D}), {2}, eps);
                  Tensor xhat = reshape(xhat3, x.sizes());
                  Tensor gxhat = w.defined() ? mul(g[0], reshape(w, cshape)) : g[0];
                  Tensor dx = reshape(norm_input_grad(reshape(gxhat, {N, G, D}), xhat3, r3, {2}), x.sizes());
                  return {dx, w.defined() ? sum(mul(g[0], xhat), not_c) : Tensor(), sum(g[0], not_c)};
                }
                Tensor xc = contiguous(x), dy = contiguous(to_dtype(g[0], x.dtype()));
                BatchNormArgs rows;
                rows.x = xc, rows.N = 1, rows.C = N * C, rows.inner = spatial;
                Tensor m_nc = empty({N * C}, mt), s1 = empty({N * C}, mt), s2 = empty({N * C}, mt);
                Tensor ka = empty({N * C}, mt), kb = empty({N * C}, mt), kc = empty({N * C}, mt);
                Tensor wc = w.defined() ? contiguous(to_dtype(w, mt)) : Tensor();
                Tensor dw = zeros({C}, ScalarType::Float64), db = zeros({C}, ScalarType::Float64);
                auto backward = [&](auto zero) {
                  using M = decltype(zero);
                  const M *m = mean_t.data<M>(), *r = rstd_t.data<M>(), *wp = wc.defined() ? wc.data<M>() : nullptr;
                  M* mn = m_nc.data<M>();
                  for (int64_t i = 0; i < N * C; ++i) mn[i] = m[i / Cg];  // the group's mean per channel
                  kernels::batch_norm_grad_sums(rows, dy, m_nc, s1, s2);  // sum(dy), sum(dy (x - mean)) per (n, c)
                  const M *p1 = s1.data<M>(), *p2 = s2.data<M>();
                  M *a = ka.data<M>(), *b = kb.data<M>(), *k = kc.data<M>();
                  double *gw = dw.data<double>(), *gb = db.data<double>();
                  for (int64_t gi = 0; gi < N * G; ++gi) {  // torch's decomposition: dx = ka dy + kb x + kc
                    const int64_t n = gi / G, c0 = (gi % G) * Cg;
                    double t1 = 0, t2 = 0;  // sums over the group of w dy and w dy (x - mean)
                    for (int64_t c = c0; c < c0 + Cg; ++c) {
                      const double wv = wp ? static_cast<double>(wp[c]) : 1.0;
                      t1 += wv * static_cast<double>(p1[n * C + c]), t2 += wv * static_cast<double>(p2[n * C + c]);
                      gw[c] += static_cast<double>(p2[n * C + c]) * static_cast<double>(r[gi]);
                      gb[c] += static_cast<double>(p1[n * C + c]);
                    }
                    const double rv = r[gi], m1 = t1 / static_cast<double>(D), m2 = t2 / static_cast<double>(D) * rv;
                    for (int64_t c = c0; c < c0 + Cg; ++c) {
                      a[n * C + c] = static_cast<M>(wp ? rv * static_cast<double>(wp[c]) : rv);
                      b[n * C + c] = static_cast<M>(-rv * rv * m2);
                      k[n * C + c] = static_cast<M>(rv * (rv * m2 * static_cast<double>(m[gi]) - m1));
                    }
                  }
                };
                mt == ScalarType::Float64 ? backward(0.0) : backward(0.0f);
                Tensor dx = empty(x.sizes(), x.dtype());
                kernels::group_norm_backward_input(xc, dy, N * C, spatial, ka, kb, kc, dx);
                ScalarType pdt = w.defined() ? w.dtype() : x.dtype();
                return {dx, w.defined() ? to_dtype(dw, pdt) : Tensor(), to_dtype(db, pdt)};
              });
  }
  return y;
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  EMBER_CHECK_INDEX(input.dim() >= 2, "Dimension out of range (expected to be in range of [",
                    -std::max<int64_t>(input.dim(), 1), ", ", std::max<int64_t>(input.dim(), 1) - 1, "], but got 1)");
  const int64_t C = input.size(1);
  auto check_len = [&](const Tensor& t, const char* name) {
    if (t.defined()) EMBER_CHECK(t.numel() == C, name, " should contain ", C, " elements not ", t.numel());
  };
  check_len(running_mean, "running_mean");
  check_len(running_var, "running_var");
  check_len(weight, "weight");
  check_len(bias, "bias");
  if (!training)
    EMBER_CHECK(running_mean.defined() && running_var.defined(),
                "running_mean and running_var must be defined in evaluation mode");
  check_float(input, "batch_norm");
  BatchNormArgs a;
  a.x = contiguous(input);
  a.N = input.size(0), a.C = C;
  for (int64_t d = 2; d < input.dim(); ++d) a.inner *= input.size(d);
  const ScalarType mt = opmath_dtype(input.dtype());
  const int64_t cnt = a.N * a.inner;
  Tensor mean_c, invstd, y = empty(input.sizes(), input.dtype());
  {
    autograd::NoGradGuard raw;
    if (training) {
      mean_c = empty({C}, mt);
      Tensor var = empty({C}, mt);
      if (C > 0) kernels::batch_norm_stats(a, mean_c, var);
      invstd = rsqrt(add(var, num(eps)));
      if (running_mean.defined()) {
        Tensor rm = running_mean;
        copy_(rm, add(mul(rm, num(1 - momentum)), mul(to_dtype(mean_c, rm.dtype()), num(momentum))));
      }
      if (running_var.defined()) {
        Tensor rv = running_var;
        double unbias =
            cnt > 1 ? static_cast<double>(cnt) / static_cast<double>(cnt - 1) : std::numeric_limits<double>::infinity();
        copy_(rv, add(mul(rv, num(1 - momentum)), mul(to_dtype(var, rv.dtype()), num(momentum * unbias))));
      }
    } else {
      mean_c = contiguous(to_dtype(running_mean, mt, /*copy=*/true));
      invstd = contiguous(rsqrt(add(to_dtype(running_var, mt), num(eps))));
    }
    Tensor scale = weight.defined() ? mul(invstd, to_dtype(reshape(weight, {C}), mt)) : invstd;
    Tensor shift = neg(mul(mean_c, scale));
    if (bias.defined()) shift = add(shift, to_dtype(reshape(bias, {C}), mt));
    scale = contiguous(scale), shift = contiguous(shift);
    if (input.numel() > 0) kernels::batch_norm_apply(a, scale, shift, y);
  }
  if (auto n = autograd::make_node_list<LambdaBackward>({input, weight, bias})) {
    const int64_t nd = input.dim();
    const ScalarType wdt = weight.defined() ? weight.dtype() : input.dtype();
    n->record("NativeBatchNormBackward0", {y}, {input, weight, mean_c, invstd}, {},
              [=](const TensorList& g, const TensorList& s) -> TensorList {
                const Tensor &x = s[0], &w = s[1], &mu = s[2], &istd = s[3];
                std::vector<int64_t> dims{0};
                for (int64_t d = 2; d < nd; ++d) dims.push_back(d);
                Shape cshape(nd, 1);
                cshape[1] = C;
                if (autograd::GradMode::is_enabled()) {  // create_graph: differentiable ops
                  Tensor xhat, rstd;
                  if (training) {
                    std::tie(xhat, rstd) = normalize_ops(x, dims, eps);
                  } else {
                    rstd = reshape(to_dtype(istd, x.dtype()), cshape);
                    xhat = mul(sub(x, reshape(to_dtype(mu, x.dtype()), cshape)), rstd);
                  }
                  Tensor gxhat = w.defined() ? mul(g[0], reshape(w, cshape)) : g[0];
                  Tensor dx = training ? norm_input_grad(gxhat, xhat, rstd, dims) : mul(gxhat, rstd);
                  return {dx, w.defined() ? sum(mul(g[0], xhat), dims) : Tensor(), sum(g[0], dims)};
                }
                BatchNormArgs b;
                b.x = contiguous(x), b.N = x.size(0), b.C = C, b.inner = x.numel() / std::max<int64_t>(b.N * C, 1);
                Tensor dy = contiguous(to_dtype(g[0], x.dtype()));
                Tensor s1 = zeros({C}, mt), s2 = zeros({C}, mt);
                if (x.numel() > 0) kernels::batch_norm_grad_sums(b, dy, mu, s1, s2);
                Tensor kout = w.defined() ? mul(istd, to_dtype(reshape(w, {C}), mt)) : istd;
                Tensor kdy, kx;
                if (training) {
                  double inv_n = 1.0 / static_cast<double>(std::max<int64_t>(cnt, 1));
                  kdy = mul(s1, num(inv_n));
                  kx = mul(mul(s2, num(inv_n)), mul(istd, istd));
                } else {
                  kdy = zeros({C}, mt), kx = zeros({C}, mt);
                }
                Tensor dx = empty(x.sizes(), x.dtype());
                if (x.numel() > 0)
                  kernels::batch_norm_backward_input(b, dy, mu, contiguous(kdy), contiguous(kx), contiguous(kout), dx);
                Tensor dw = w.defined() ? to_dtype(mul(s2, istd), wdt) : Tensor();
                return {dx, dw, to_dtype(s1, wdt)};
              });
  }
  return y;
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  EMBER_CHECK(k >= 1,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but "
              "got normalized_shape = ",
              shape_of(normalized_shape));
  if (weight.defined())
    EMBER_CHECK(weight.sizes() == normalized_shape.vec(),
                "Expected weight to be of same shape as normalized_shape, but got weight of shape ", weight.shape_str(),
                " and normalized_shape = ", shape_of(normalized_shape));
  if (bias.defined())
    EMBER_CHECK(bias.sizes() == normalized_shape.vec(),
                "Expected bias to be of same shape as normalized_shape, but got bias of shape ", bias.shape_str(),
                " and normalized_shape = ", shape_of(normalized_shape));
  bool ok = input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(input.dim() - k + i) == normalized_shape[i];
  if (!ok) {
    std::string s = "[*";
    for (int64_t i = 0; i < k; ++i) s += ", " + std::to_string(normalized_shape[i]);
    EMBER_CHECK(false, "Given normalized_shape=", shape_of(normalized_shape), ", expected input with shape ", s,
                "], but got input of size", input.shape_str());
  }
  check_float(input, "LayerNormKernelImpl");
  int64_t N = 1;
  for (int64_t v : normalized_shape) N *= v;
  const int64_t M = N == 0 ? 0 : input.numel() / N;
  const ScalarType mt = opmath_dtype(input.dtype());
  Tensor x = contiguous(input), y = empty(input.sizes(), input.dtype());
  Tensor mean_r = empty({M}, mt), rstd = empty({M}, mt);
  Tensor w = weight.defined() ? contiguous(to_dtype(weight, input.dtype())) : Tensor();
  Tensor b = bias.defined() ? contiguous(to_dtype(bias, input.dtype())) : Tensor();
  {
    autograd::NoGradGuard raw;
    if (input.numel() > 0) kernels::layer_norm_forward(x, M, N, w, b, eps, y, mean_r, rstd);
  }
  if (auto n = autograd::make_node_list<LambdaBackward>({input, weight, bias})) {
    Shape ns = normalized_shape.vec();
    const int64_t nd = input.dim();
    n->record("NativeLayerNormBackward0", {y}, {input, weight, mean_r, rstd}, {},
              [=](const TensorList& g, const TensorList& s) -> TensorList {
                const Tensor &x = s[0], &w = s[1];
                std::vector<int64_t> dims;
                for (int64_t d = nd - k; d < nd; ++d) dims.push_back(d);
                std::vector<int64_t> lead;
                for (int64_t d = 0; d < nd - k; ++d) lead.push_back(d);
                auto sum_lead = [&](const Tensor& t) { return lead.empty() ? t : sum(t, lead); };
                if (autograd::GradMode::is_enabled()) {  // create_graph: differentiable ops
                  auto [xhat, r] = normalize_ops(x, dims, eps);
                  Tensor gxhat = w.defined() ? mul(g[0], w) : g[0];
                  return {norm_input_grad(gxhat, xhat, r, dims), w.defined() ? sum_lead(mul(g[0], xhat)) : Tensor(),
                          sum_lead(g[0])};
                }
                Tensor xc = contiguous(x), dy = contiguous(to_dtype(g[0], x.dtype()));
                Tensor dx = empty(x.sizes(), x.dtype());
                Tensor dw = w.defined() ? zeros({N}, mt) : Tensor(), db = zeros({N}, mt);
                Tensor wc = w.defined() ? contiguous(to_dtype(w, x.dtype())) : Tensor();
                if (x.numel() > 0) kernels::layer_norm_backward(xc, dy, M, N, s[2], s[3], wc, dx, dw, db);
                ScalarType pdt = w.defined() ? w.dtype() : x.dtype();
                return {dx, w.defined() ? reshape(to_dtype(dw, pdt), ns) : Tensor(), reshape(to_dtype(db, pdt), ns)};
              });
  }
  return y;
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  EMBER_CHECK(input.dim() >= 2, "Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t N = input.size(0), C = input.size(1);
  EMBER_CHECK(num_groups > 0 && C % num_groups == 0,
              "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
              input.shape_str(), " and num_groups=", num_groups);
  for (const Tensor* t : {&weight, &bias})
    if (t->defined())
      EMBER_CHECK(t->dim() == 1 && t->numel() == C, "Expected ", t == &weight ? "weight" : "bias",
                  " to be a vector of size equal to the number of channels in input, but got ",
                  t == &weight ? "weight" : "bias", " of shape ", t->shape_str(), " and input of shape ",
                  input.shape_str());
  int64_t spatial = 1;
  for (int64_t d = 2; d < input.dim(); ++d) spatial *= input.size(d);
  int64_t per_group = C / num_groups * spatial;
  // torch's mixed-dtype rule: parameters of the input's dtype, or float32 ones for a 16-bit input
  const ScalarType dt = input.dtype();
  const bool half = dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
  for (const Tensor* t : {&weight, &bias})
    if (t->defined() && t->dtype() != dt && is_floating_point(dt))
      EMBER_CHECK(half && t->dtype() == ScalarType::Float32, "mixed dtype (CPU): ",
                  dt == ScalarType::Float64 ? "all inputs must share same datatype."
                                            : "expect parameter to have scalar type of Float");
  if (per_group > 0 && N > 0 && is_floating_point(dt) && input.device().is_cpu())
    return fused_group_norm(input, num_groups, weight, bias, eps, spatial);
  Tensor y;
  if (per_group == 0) {
    y = reshape(input, input.sizes());
  } else {
    y = reshape(layer_norm(reshape(input, {N, num_groups, per_group}), {per_group}, Tensor(), Tensor(), eps),
                input.sizes());
  }
  Shape cshape(input.dim(), 1);
  cshape[1] = C;
  if (weight.defined()) y = mul(y, reshape(weight, cshape));
  if (bias.defined()) y = add(y, reshape(bias, cshape));
  return y;
}

Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps) {
  EMBER_CHECK(input.dim() >= 2, "instance_norm: expected an input with at least 2 dims (N, C, ...), got ", input.dim());
  const int64_t N = input.size(0), C = input.size(1);
  Shape s = input.sizes();
  Shape s2 = s;
  s2[0] = 1, s2[1] = N * C;
  auto rep = [&](const Tensor& t) { return t.defined() ? repeat(t, {N}) : Tensor(); };
  Tensor rm = rep(running_mean), rv = rep(running_var);
  Tensor y = batch_norm(reshape(input, s2), rm, rv, rep(weight), rep(bias), use_input_stats, momentum, eps);
  if (use_input_stats) {
    autograd::NoGradGuard raw;
    if (running_mean.defined()) {
      Tensor t = running_mean;
      copy_(t, mean(view(rm, {N, C}), std::vector<int64_t>{0}));
    }
    if (running_var.defined()) {
      Tensor t = running_var;
      copy_(t, mean(view(rv, {N, C}), std::vector<int64_t>{0}));
    }
  }
  return reshape(y, s);
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, std::optional<double> eps) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  EMBER_CHECK(k >= 1,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but "
              "got normalized_shape = ",
              shape_of(normalized_shape));
  bool ok = input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(input.dim() - k + i) == normalized_shape[i];
  if (!ok) {
    std::string s = "[*";
    for (int64_t i = 0; i < k; ++i) s += (i ? ", " : "") + std::to_string(normalized_shape[i]);
    EMBER_CHECK(false, "Given normalized_shape=", shape_of(normalized_shape), ", expected input with shape ", s,
                "], but got input of size", input.shape_str());
  }
  if (weight.defined())
    EMBER_CHECK(weight.sizes() == normalized_shape.vec(),
                "Expected weight to be of same shape as normalized_shape, but got weight of shape ", weight.shape_str(),
                " and normalized_shape = ", shape_of(normalized_shape));
  check_float(input, "rms_norm");
  double e = eps                                     ? *eps
             : input.dtype() == ScalarType::Float64  ? std::numeric_limits<double>::epsilon()
             : input.dtype() == ScalarType::Float16  ? 0.0009765625
             : input.dtype() == ScalarType::BFloat16 ? 0.0078125
                                                     : static_cast<double>(std::numeric_limits<float>::epsilon());
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - k; d < input.dim(); ++d) dims.push_back(d);
  Tensor y = mul(input, rsqrt(add(mean(mul(input, input), dims, true), num(e))));
  return weight.defined() ? mul(y, weight) : y;
}

}  // namespace ember
