#include "ember/ops/reduce_utils.h"

#include "ember/autograd/grad_mode.h"

namespace ember::reduce_detail {

std::vector<bool> reduce_mask(const Tensor& t, const OptDims& dims) {
  int64_t n = t.dim();
  std::vector<bool> mask(std::max<int64_t>(n, 1), false);
  if (!dims || dims->empty()) {
    std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, n);
    EMBER_CHECK(!mask[w], "dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

std::vector<bool> reduce_mask(const Tensor& t, int64_t dim) { return reduce_mask(t, std::vector<int64_t>{dim}); }

Shape reduced_shape(const Tensor& t, const std::vector<bool>& mask, bool keepdim) {
  Shape s;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (!mask[d])
      s.push_back(t.sizes()[d]);
    else if (keepdim)
      s.push_back(1);
  }
  return s;
}

std::vector<int64_t> mask_dims(const std::vector<bool>& mask, int64_t ndim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < ndim; ++d)
    if (mask[d]) dims.push_back(d);
  return dims;
}

int64_t reduced_count(const Tensor& t, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (mask[d]) n *= t.sizes()[d];
  return n;
}

std::vector<int64_t> memory_order(const Tensor& t) {
  if (t.dim() < 2 || t.is_contiguous()) return {};
  std::vector<int64_t> perm(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) perm[d] = d;
  // size-1 dims keep their places (their strides say nothing)
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (t.sizes()[a] == 1 || t.sizes()[b] == 1) return false;
    return t.strides()[a] > t.strides()[b];
  });
  if (!permute(t, perm).is_contiguous()) return {};
  return perm;
}

Layout reduce_layout(const Tensor& t_in, const std::vector<bool>& mask_in, bool memory_order_ok) {
  autograd::NoGradGuard raw;  // layout copies are internal to a kernel
  Layout l;
  Tensor t = t_in;
  std::vector<bool> mask = mask_in;
  // A permuted dense input is read in memory order when that keeps the kept dims in their order
  // (the result's layout); a transpose reduced along either dim then needs no copy.
  if (auto perm = memory_order_ok ? memory_order(t_in) : std::vector<int64_t>(); !perm.empty()) {
    std::vector<bool> pmask(perm.size());
    int64_t prev_kept = -1;
    bool kept_in_order = true;
    for (size_t i = 0; i < perm.size(); ++i) {
      pmask[i] = mask_in[perm[i]];
      if (!pmask[i] && t_in.sizes()[perm[i]] != 1) {
        kept_in_order = kept_in_order && perm[i] > prev_kept;
        prev_kept = perm[i];
      }
    }
    if (kept_in_order) t = permute(t_in, perm), mask = pmask;
  }
  int64_t n = t.dim();
  int64_t first = -1, last = -1, runs = 0;
  for (int64_t d = 0; d < n; ++d) {
    if (!mask[d]) continue;
    if (first < 0 || !mask[d - 1]) ++runs;
    if (first < 0) first = d;
    last = d;
  }
  if (runs <= 1) {
    l.x = contiguous(t);
    for (int64_t d = 0; d < n; ++d) {
      int64_t s = t.sizes()[d];
      if (first >= 0 && d < first)
        l.outer *= s;
      else if (first >= 0 && d <= last)
        l.R *= s;
      else if (first >= 0)
        l.inner *= s;
      else
        l.outer *= s;
    }
    return l;
  }
  Shape perm;
  for (int64_t d = 0; d < n; ++d)
    if (!mask[d]) perm.push_back(d), l.outer *= t.sizes()[d];
  for (int64_t d = 0; d < n; ++d)
    if (mask[d]) perm.push_back(d), l.R *= t.sizes()[d];
  l.x = contiguous(permute(t, perm));
  return l;
}

Layout dim_layout(const Tensor& t, int64_t dim) { return reduce_layout(t, reduce_mask(t, dim), false); }

Tensor unsqueeze_reduced(const Tensor& r, const std::vector<bool>& mask, int64_t ndim) {
  Tensor g = r;
  if (g.dim() == ndim) return g;
  for (int64_t d = 0; d < ndim; ++d)
    if (mask[d]) g = unsqueeze(g, d);
  return g;
}

void check_nonempty(const Tensor& t, const std::vector<bool>& mask, bool dims_given, const char* op,
                    bool index_error_without_dim) {
  if (t.numel() != 0) return;
  if (!dims_given) {
    if (index_error_without_dim)
      throw IndexError(detail::str_cat(op, "(): Expected reduction dim to be specified for input.numel() == 0."));
    throw Error(detail::str_cat(op,
                                "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                                "reduction dim with the 'dim' argument."));
  }
  for (int64_t d = 0; d < t.dim(); ++d)
    EMBER_CHECK_INDEX(!mask[d] || t.sizes()[d] != 0, op, "(): Expected reduction dim ", d, " to have non-zero size.");
}

Tensor evenly_distribute(const Tensor& g, const Tensor& x, const Tensor& r, const std::vector<bool>& mask) {
  Tensor hit = where(isnan(r), isnan(x), eq(x, r));
  Tensor count = sum(hit, mask_dims(mask, x.dim()), /*keepdim=*/true);
  return div(mul(g, hit), count);
}

Tensor select_backward(const Tensor& g, int64_t dim, const Tensor& indices, const Shape& sizes, bool keepdim) {
  if (sizes.empty()) return reshape(g, sizes);
  Tensor gk = keepdim ? g : unsqueeze(g, dim);
  Tensor ik = keepdim ? indices : unsqueeze(indices, dim);
  return scatter_add(zeros(sizes, g.dtype()), dim, ik, gk);
}

}  // namespace ember::reduce_detail
