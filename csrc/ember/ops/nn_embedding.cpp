// embedding (a row gather with its own backward: padding_idx rows get no gradient, optional
// scaling by inverse frequency) and embedding_bag (sum/mean/max of gathered rows per bag,
// composed from index_select/index_add/scatter_reduce so gradients, including
// per_sample_weights', come from the parts).
#include <vector>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/dispatch.h"
#include "ember/core/parallel.h"
#include "ember/cpu/index_kernels.h"
#include "ember/ops/nn.h"
#include "ember/ops/ops.h"
#include "ember/ops/reduce_utils.h"
#include "ember/ops/unsafe_view.h"

namespace ember {
namespace {
using autograd::LambdaBackward;
using autograd::TensorList;

const char* legacy_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Float32:
      return "torch.FloatTensor";
    case ScalarType::Float64:
      return "torch.DoubleTensor";
    case ScalarType::Float16:
      return "torch.HalfTensor";
    case ScalarType::BFloat16:
      return "torch.BFloat16Tensor";
    case ScalarType::Bool:
      return "torch.BoolTensor";
    case ScalarType::UInt8:
      return "torch.ByteTensor";
    case ScalarType::Int8:
      return "torch.CharTensor";
    case ScalarType::Int16:
      return "torch.ShortTensor";
    case ScalarType::Int32:
      return "torch.IntTensor";
    case ScalarType::Int64:
      return "torch.LongTensor";
    case ScalarType::Complex64:
      return "torch.ComplexFloatTensor";
    case ScalarType::Complex128:
      return "torch.ComplexDoubleTensor";
    default:
      return "torch.Tensor";
  }
}

void check_indices(const Tensor& indices, const char* arg, const char* op) {
  EMBER_CHECK(indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32, "Expected tensor for ", arg,
              " to have one of the following scalar types: Long, Int; but got ", legacy_type_name(indices.dtype()),
              " instead (while checking arguments for ", op, ")");
}

// Note [Fused embedding bags]: sum and mean bags in one pass, each bag's rows added into an
// accumulator (opmath type) in index order and written once, instead of gathering every row into a
// [n, D] tensor and index_add-ing it (6x torch's time for 512 bags of 20 rows of 64). The backward
// is the gather-and-scatter composition (differentiable again). Bag b holds idx[offs[b] .. end_b)
// (end_b: the next offset, or n for the last bag) less the padding entries; count[b] of them remain.
struct Bags {
  const std::vector<int64_t>& offs;
  int64_t B, n, padding_idx;
  int64_t end(int64_t b) const { return b + 1 < static_cast<int64_t>(offs.size()) ? offs[b + 1] : n; }
};

Tensor embedding_bag_sum(const Tensor& weight, const Tensor& idx, const Bags& bags, const std::vector<double>& count,
                         const Tensor& per_sample_weights, bool mean) {
  const int64_t B = bags.B, D = weight.size(1), num = weight.size(0), n = bags.n, pad = bags.padding_idx;
  Tensor psw = per_sample_weights.defined() ? reshape(per_sample_weights, {-1}) : Tensor();
  Tensor out = empty({B, D}, weight.dtype());
  const int64_t* ip = idx.data<int64_t>();
  {
    autograd::NoGradGuard raw;
    Tensor w = contiguous(weight);
    Tensor pw = psw.defined() ? contiguous(to_dtype(psw, weight.dtype())) : Tensor();
    const int64_t grain =
        std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, D * (n / std::max<int64_t>(B, 1) + 1)));
    const void* pp = pw.defined() ? pw.data_ptr() : nullptr;
    EMBER_DISPATCH_FLOAT(weight.dtype(), "embedding_bag", [&] {  // the dtype check, outside the threads
      [[maybe_unused]] const scalar_t* typed = nullptr;
      parallel_for(0, B, grain, [&](int64_t b0, int64_t b1) {
        EMBER_ISA_SELECT(cpu::embedding_bag_sums)
        (weight.dtype(), b0, b1, bags.offs.data(), static_cast<int64_t>(bags.offs.size()), n, pad, ip, w.data_ptr(), pp,
         count.data(), mean, D, out.data_ptr());
      });
    });
  }
  if (auto node = autograd::make_node<LambdaBackward>(weight, psw)) {
    // The entries' bags are worked out in the backward (when the forward built them here, recording
    // took longer than the bags' sums: 1.5-1.8x torch's forward time for 8192 entries in 1024 bags).
    const bool weight_grad = autograd::requires_grad(weight), psw_grad = psw.defined() && autograd::requires_grad(psw);
    node->record(
        "EmbeddingBagBackward0", {out}, {weight, psw, idx}, {},
        [=, offs = bags.offs](const TensorList& g, const TensorList& sv) -> TensorList {
          const Tensor &wv = sv[0], &pv = sv[1], &idx_v = sv[2];
          // Per entry in a bag: its position in idx, its bag, and d out / d row (1 / count for a mean).
          const int64_t* ipv = idx_v.data<int64_t>();
          std::vector<int64_t> keep, bag_of;
          keep.reserve(n);
          bag_of.reserve(n);
          for (int64_t b = 0; b < B; ++b)
            for (int64_t j = offs[b], e = b + 1 < static_cast<int64_t>(offs.size()) ? offs[b + 1] : n; j < e; ++j)
              if (ipv[j] != pad) keep.push_back(j), bag_of.push_back(b);
          const int64_t kept = static_cast<int64_t>(keep.size());
          Tensor keep_i = empty({kept}, ScalarType::Int64), bag_i = empty({kept}, ScalarType::Int64);
          std::copy(keep.begin(), keep.end(), keep_i.data<int64_t>());
          std::copy(bag_of.begin(), bag_of.end(), bag_i.data<int64_t>());
          Tensor sc;
          if (mean) {
            Tensor cd = empty({kept}, ScalarType::Float64);
            for (int64_t k = 0; k < kept; ++k) cd.data<double>()[k] = 1.0 / std::max(count[bag_of[k]], 1.0);
            sc = to_dtype(cd, wv.dtype());
          }
          Tensor rows_i = index_select(idx_v, 0, keep_i);  // the weight row of each entry
          // 16-bit floats accumulate in float, as torch's kernels do, and round once at the end
          const ScalarType dt = g[0].dtype();
          const ScalarType acc = dt == ScalarType::Float16 || dt == ScalarType::BFloat16 ? ScalarType::Float32 : dt;
          Tensor g_rows = index_select(to_dtype(g[0], acc), 0, bag_i);  // [kept, D]: each entry's bag gradient
          Tensor gw, gp;
          if (weight_grad) {
            Tensor f = g_rows;
            if (pv.defined()) f = mul(f, unsqueeze(to_dtype(index_select(pv, 0, keep_i), acc), 1));
            if (sc.defined()) f = mul(f, unsqueeze(to_dtype(sc, acc), 1));
            gw = to_dtype(index_add(zeros({num, D}, acc), 0, rows_i, f), dt);
          }
          if (psw_grad) {
            Tensor v = sum(mul(g_rows, to_dtype(index_select(wv, 0, rows_i), acc)), std::vector<int64_t>{1});
            gp = reshape(to_dtype(index_add(zeros({n}, acc), 0, keep_i, v), pv.dtype()), pv.sizes());
          }
          return {gw, gp};
        });
  }
  return out;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq) {
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_indices(indices, "argument #1 'indices'", "embedding");
  const int64_t num = weight.size(0), D = weight.size(1);
  Tensor idx = to_dtype(reshape(indices, {-1}), ScalarType::Int64);
  Tensor out;
  {
    autograd::NoGradGuard raw;
    out = index_select(weight, 0, idx);
  }
  Shape s = indices.sizes();
  s.push_back(D);
  out = unsafe_view(out, s);  // a fresh result, not a view of index_select's (torch's)
  if (auto n = autograd::make_node<LambdaBackward>(weight)) {
    n->record("EmbeddingBackward0", {out}, {idx}, {}, [=](const TensorList& g, const TensorList& sv) -> TensorList {
      const Tensor& ix = sv[0];
      Tensor g2 = reshape(g[0], {ix.numel(), D});
      if (padding_idx >= 0) g2 = mul(g2, unsqueeze(to_dtype(ne(ix, reduce_detail::num(padding_idx)), g2.dtype()), 1));
      if (scale_grad_by_freq && ix.numel() > 0) {
        Tensor counts = to_dtype(bincount(ix, Tensor(), num), g2.dtype());
        g2 = div(g2, unsqueeze(index_select(counts, 0, ix), 1));
      }
      return {index_add(zeros({num, D}, g2.dtype()), 0, ix, g2)};
    });
  }
  return out;
}

Tensor& embedding_renorm_(Tensor& weight, const Tensor& indices, double max_norm, double norm_type) {
  check_indices(indices, "argument #2 'indices'", "embedding_renorm_");
  autograd::NoGradGuard raw;
  Tensor uniq = std::get<0>(unique(to_dtype(reshape(indices, {-1}), ScalarType::Int64)));
  if (uniq.numel() == 0) return weight;
  Tensor rows = index_select(weight, 0, uniq);
  Tensor norms = vector_norm(rows, norm_type, std::vector<int64_t>{1}, true);
  Tensor scale =
      where(gt(norms, reduce_detail::num(max_norm)),
            div(reduce_detail::num(max_norm), add(norms, reduce_detail::num(1e-7))), ones({}, norms.dtype()));
  index_put_(weight, {uniq}, mul(rows, scale));
  return weight;
}

Tensor embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, EmbeddingBagMode mode,
                     const Tensor& per_sample_weights, bool include_last_offset, int64_t padding_idx) {
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_indices(indices, "argument #1 'indices'", "embedding_bag");
  const int64_t D = weight.size(1);
  Tensor idx = contiguous(to_dtype(reshape(indices, {-1}), ScalarType::Int64));
  const int64_t n = idx.numel();
  std::vector<int64_t> offs;
  if (indices.dim() == 2) {
    EMBER_CHECK(!offsets.defined(), "if input is 2D, then offsets has to be None");
    int64_t B = indices.size(0), L = indices.size(1);
    for (int64_t b = 0; b < B; ++b) offs.push_back(b * L);
    if (include_last_offset) offs.push_back(B * L);
  } else {
    EMBER_CHECK(indices.dim() == 1, "input has to be 1D or 2D Tensor, but got Tensor of dimension ", indices.dim());
    EMBER_CHECK(offsets.defined() && offsets.dim() == 1, "offsets has to be a 1D Tensor");
    check_indices(offsets, "argument #1 'offsets'", "embedding_bag");
    Tensor o = contiguous(to_dtype(offsets, ScalarType::Int64));
    offs.assign(o.data<int64_t>(), o.data<int64_t>() + o.numel());
  }
  if (per_sample_weights.defined()) {
    EMBER_CHECK(mode == EmbeddingBagMode::Sum,
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum'");
    EMBER_CHECK(per_sample_weights.numel() == n, "embedding_bag: If per_sample_weights (",
                per_sample_weights.shape_str(), ") is not None, then it must have the same shape as the input (",
                indices.shape_str(), ")");
  }
  const int64_t B = include_last_offset ? std::max<int64_t>(static_cast<int64_t>(offs.size()) - 1, 0)
                                        : static_cast<int64_t>(offs.size());
  if (!offs.empty())
    EMBER_CHECK(offs[0] == 0,
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
                "However, got ",
                offs[0]);
  const int64_t* ip = idx.data<int64_t>();
  const int64_t num = weight.size(0);
  for (int64_t j = 0; j < n; ++j)
    EMBER_CHECK(ip[j] >= 0 && ip[j] < num, "Index ", j, " of input takes value ", ip[j],
                " which is not in the valid range [0, ", num, ")");
  for (size_t i = 0; i < offs.size(); ++i) {
    EMBER_CHECK(offs[i] >= 0 && offs[i] <= n, "embedding_bag: offsets[", i, "] = ", offs[i], " is out of range for ", n,
                " indices");
    if (i) EMBER_CHECK(offs[i] >= offs[i - 1], "embedding_bag: offsets must be non-decreasing");
  }
  // Entries per bag (indices past the last bag's end, with include_last_offset, belong to none);
  // padding entries are dropped and do not count toward a mean.
  const Bags bags{offs, B, n, padding_idx >= 0 ? padding_idx : -1};
  std::vector<double> count(B, 0.0);
  for (int64_t b = 0; b < B; ++b) {
    int64_t c = 0;
    for (int64_t j = offs[b], e = bags.end(b); j < e; ++j) c += ip[j] != bags.padding_idx;
    count[b] = static_cast<double>(c);
  }
  if (mode != EmbeddingBagMode::Max)
    return embedding_bag_sum(weight, idx, bags, count, per_sample_weights, mode == EmbeddingBagMode::Mean);
  std::vector<int64_t> keep, bag_of;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = offs[b], e = bags.end(b); j < e; ++j)
      if (ip[j] != bags.padding_idx) keep.push_back(j), bag_of.push_back(b);
  auto as_tensor = [](const std::vector<int64_t>& v) {
    Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Int64);
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return t;
  };
  Tensor keep_t = as_tensor(keep), bag_t = as_tensor(bag_of);
  Tensor rows = index_select(weight, 0, index_select(idx, 0, keep_t));
  if (per_sample_weights.defined())
    rows = mul(rows, unsqueeze(index_select(reshape(per_sample_weights, {-1}), 0, keep_t), 1));
  Tensor zero = zeros({B, D}, weight.dtype());
  return scatter_reduce(zero, 0, expand(unsqueeze(bag_t, 1), {bag_t.numel(), D}), rows, "amax", false);
}

}  // namespace ember
