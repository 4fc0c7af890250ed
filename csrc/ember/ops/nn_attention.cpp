// Fused scaled-dot-product attention (Note [Fused attention] in cpu/attention_kernels.h): the op
// broadcasts the batch dims, runs the kernel on (N, L, E) blocks and records one node whose
// backward recomputes the probabilities from the saved row log-sum-exp. Under create_graph the
// backward is written with ember ops instead, so higher-order gradients work.
// nn.functional.scaled_dot_product_attention (python/ember/nn/_functional_attn.py) takes this path
// for float32/float64 without dropout; dropout, 16-bit floats and a float mask that requires grad
// use the composition there.
#include <limits>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/cpu/attention_kernels.h"
#include "ember/ops/nn.h"
#include "ember/ops/operators.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

Shape concat(IntArrayRef a, std::initializer_list<int64_t> b) {
  Shape r(a.begin(), a.end());
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

// Scores with the mask applied, as ember ops (the create_graph backward). dead: rows with
// nothing to attend, which become zeros.
Tensor masked_scores(const Tensor& q, const Tensor& k, const Tensor& mask3, bool causal, double scale) {
  Tensor s = matmul(q, transpose(k, 1, 2)) * scale;
  const double ninf = -std::numeric_limits<double>::infinity();
  if (causal) {
    Tensor keep = tril(ones({q.size(1), k.size(1)}, ScalarType::Bool, q.device()));
    s = masked_fill(s, logical_not(keep), wrap_scalar(ninf));
  } else if (mask3.defined() && mask3.dtype() == ScalarType::Bool) {
    s = masked_fill(s, logical_not(mask3), wrap_scalar(ninf));
  } else if (mask3.defined()) {
    s = s + mask3;
  }
  return s;
}

}  // namespace

Tensor scaled_dot_product_attention_fused(const Tensor& query, const Tensor& key, const Tensor& value,
                                          const Tensor& attn_mask, bool is_causal, std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  EMBER_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, op,
              ": expected query, key and value to be at least 2-D");
  EMBER_CHECK(query.dtype() == key.dtype() && query.dtype() == value.dtype(), op,
              ": expected query, key and value to have the same dtype");
  const ScalarType dt = query.dtype();
  if (dt != ScalarType::Float32 && dt != ScalarType::Float64)
    EMBER_NOT_IMPLEMENTED(op, ": the fused kernel takes float32 or float64, got '", dtype_name(dt), "'");
  EMBER_CHECK(!(is_causal && attn_mask.defined()), op, ": explicit attn_mask should not be set when is_causal=True");
  const int64_t L = query.size(-2), E = query.size(-1), S = key.size(-2), Ev = value.size(-1);
  EMBER_CHECK(key.size(-1) == E, op, ": expected key's last dim to be ", E, " (query's), got ", key.size(-1));
  EMBER_CHECK(value.size(-2) == S, op, ": expected value's dim -2 to be ", S, " (key's), got ", value.size(-2));
  auto lead = [](const Tensor& t) { return IntArrayRef(t.sizes().data(), static_cast<size_t>(t.dim() - 2)); };
  Shape batch = broadcast_shapes(broadcast_shapes(lead(query), lead(key), op), lead(value), op);
  int64_t N = 1;
  for (int64_t d : batch) N *= d;

  // (N, rows, cols) operands; expand/reshape/contiguous record, so broadcast inputs get summed gradients.
  auto flat = [&](const Tensor& t, int64_t rows, int64_t cols) {
    return contiguous(reshape(expand(t, concat(batch, {rows, cols})), {N, rows, cols}));
  };
  Tensor q = flat(query, L, E), k = flat(key, S, E), v = flat(value, S, Ev);

  cpu::AttentionGeometry g;
  g.N = N, g.L = L, g.S = S, g.E = E, g.Ev = Ev, g.causal = is_causal;
  g.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E));
  Tensor mask;  // the mask broadcast to (batch..., L, S): a view
  if (attn_mask.defined()) {
    EMBER_CHECK(attn_mask.dtype() == ScalarType::Bool || attn_mask.dtype() == dt, op,
                ": expected a bool mask or one of the query's dtype, got '", dtype_name(attn_mask.dtype()), "'");
    EMBER_CHECK(!autograd::requires_grad(attn_mask), op, ": the fused kernel takes no mask that requires grad");
    Shape full = concat(batch, {L, S});
    Shape b = broadcast_shapes(attn_mask.sizes(), full, op);
    EMBER_CHECK(b == full, "attn_mask of shape ", attn_mask.shape_str(), " cannot be broadcast to the attention ",
                "scores' shape");
    mask = expand(attn_mask, full);
    g.mask_kind = attn_mask.dtype() == ScalarType::Bool ? cpu::AttentionGeometry::Mask::Bool
                                                        : cpu::AttentionGeometry::Mask::Float;
    g.mask = mask.data_ptr();
    g.mask_row_stride = mask.stride(-2), g.mask_col_stride = mask.stride(-1);
    g.mask_offset.resize(static_cast<size_t>(N));
    const int64_t nb = static_cast<int64_t>(batch.size());
    for (int64_t n = 0; n < N; ++n) {  // n's position in the batch dims, through the mask's strides
      int64_t rest = n, off = 0;
      for (int64_t d = nb - 1; d >= 0; --d) {
        off += (rest % batch[d]) * mask.stride(d);
        rest /= batch[d];
      }
      g.mask_offset[n] = off;
    }
  }

  Tensor out = empty({N, L, Ev}, dt, query.device()), lse = empty({N, L}, dt, query.device());
  if (!query.device().is_cpu()) EMBER_NOT_IMPLEMENTED(op, ": no fused kernel for device ", query.device().str());
  if (N > 0 && L > 0) {
    autograd::NoGradGuard raw;
    cpu::attention_forward(dt, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr(), g);
  }
  if (auto node = autograd::make_node<LambdaBackward>(q, k, v)) {
    node->record("ScaledDotProductFlashAttentionForCpuBackward0", {out}, {q, k, v, lse}, {out},
                 [g, mask, batch, N, L, S](const TensorList& grads, const TensorList& s) -> TensorList {
                   const Tensor &q = s[0], &k = s[1], &v = s[2], &lse = s[3], &out = s[4];
                   if (!grads[0].defined()) return {Tensor(), Tensor(), Tensor()};
                   if (autograd::GradMode::is_enabled()) {  // create_graph: the same formulas as ember ops
                     Tensor mask3 = mask.defined() ? reshape(contiguous(mask), {N, L, S}) : Tensor();
                     Tensor dead = unsqueeze(eq(lse, wrap_scalar(std::numeric_limits<double>::infinity())), -1);
                     Tensor sc = masked_fill(masked_scores(q, k, mask3, g.causal, g.scale), dead, wrap_scalar(0.0));
                     Tensor p = masked_fill(softmax(sc, -1), dead, wrap_scalar(0.0));
                     const Tensor& dout = grads[0];
                     Tensor dv = matmul(transpose(p, 1, 2), dout);
                     Tensor dp = matmul(dout, transpose(v, 1, 2));
                     Tensor ds = p * (dp - sum(p * dp, std::vector<int64_t>{-1}, true));
                     return {matmul(ds, k) * g.scale, matmul(transpose(ds, 1, 2), q) * g.scale, dv};
                   }
                   Tensor dout = contiguous(grads[0]);
                   Tensor dq = empty(q.sizes(), q.dtype(), q.device()), dk = empty(k.sizes(), k.dtype(), k.device()),
                          dv = empty(v.sizes(), v.dtype(), v.device());
                   if (N > 0 && L > 0)
                     cpu::attention_backward(q.dtype(), q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                                             dout.data_ptr(), lse.data_ptr(), dq.data_ptr(), dk.data_ptr(),
                                             dv.data_ptr(), g);
                   else {
                     fill_(dk, 0);
                     fill_(dv, 0);
                   }
                   return {dq, dk, dv};
                 });
  }
  return reshape(out, concat(batch, {L, Ev}));
}

}  // namespace ember
