// empty_like and the layout rules behind "preserve format": a new tensor laid out like another.
#include <algorithm>
#include <numeric>

#include "ember/ops/ops.h"

namespace ember {

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  if (numel_of(sizes) == 0) return true;  // nothing to overlap; the strides are kept as given
  // Dims of size >= 2, innermost (smallest stride) first; each stride must be the product of
  // the sizes inside it.
  std::vector<int64_t> dims;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] >= 2) dims.push_back(static_cast<int64_t>(d));
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

Shape infer_dense_strides(IntArrayRef sizes, IntArrayRef strides) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  // order[0] is the innermost dim. Start from row-major order and move a dim inwards past
  // every dim with a larger stride (ties: the larger size goes outside); a zero stride says
  // nothing about order, so such a pair is stepped over without a swap.
  std::vector<int64_t> order(ndim);
  for (int64_t i = 0; i < ndim; ++i) order[i] = ndim - 1 - i;
  auto compare = [&](int64_t outer, int64_t inner) {  // >0: `outer` should be inside `inner`
    int64_t so = strides[outer], si = strides[inner];
    if (so == 0 || si == 0) return 0;
    if (so != si) return so < si ? -1 : 1;
    return sizes[outer] > sizes[inner] ? 1 : 0;
  };
  for (int64_t i = 1; i < ndim; ++i) {
    int64_t cur = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      int c = compare(order[j], order[cur]);
      if (c > 0) {
        std::swap(order[j], order[cur]);
        cur = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  Shape out(ndim);
  int64_t acc = 1;
  for (int64_t d : order) {
    out[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return out;
}

Tensor empty_like(const Tensor& t, std::optional<ScalarType> dtype, bool preserve_format) {
  ScalarType dt = dtype.value_or(t.dtype());
  if (!preserve_format) return empty(t.sizes(), dt, t.device());
  if (is_non_overlapping_and_dense(t.sizes(), t.strides()))
    return empty_strided(t.sizes(), t.strides(), dt, t.device());
  return empty_strided(t.sizes(), infer_dense_strides(t.sizes(), t.strides()), dt, t.device());
}

}  // namespace ember
