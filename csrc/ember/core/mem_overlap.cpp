#include "ember/core/mem_overlap.h"

#include <algorithm>
#include <numeric>

namespace ember {

// PyTorch's is_non_overlapping_and_dense: ordering dims by stride (size-1 dims last), each
// stride must be the product of the sizes inside it.
bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  int64_t n = t.dim();
  if (n == 1) return sizes[0] < 2 || strides[0] == 1;
  Shape perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t require = 1;
  for (int64_t d : perm) {
    if (sizes[d] < 2) return true;
    if (strides[d] != require) return false;
    require *= sizes[d];
  }
  return true;
}

MemOverlap has_internal_overlap(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return MemOverlap::No;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return MemOverlap::Yes;
  return MemOverlap::TooHard;
}

std::pair<const char*, const char*> byte_range(const Tensor& t) {
  int64_t hi = 0;
  for (int64_t d = 0; d < t.dim(); ++d) hi += (t.sizes()[d] - 1) * t.strides()[d];
  const char* p = static_cast<const char*>(t.data_ptr());
  return {p, p + (hi + 1) * static_cast<int64_t>(t.element_size())};
}

MemOverlapStatus get_overlap_status(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return MemOverlapStatus::Full;
  if (a.numel() == 0 || b.numel() == 0) return MemOverlapStatus::No;
  if (!detail::same_storage(a, b)) return MemOverlapStatus::No;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b)) return MemOverlapStatus::TooHard;
  auto [a0, a1] = byte_range(a);
  auto [b0, b1] = byte_range(b);
  if (a0 == b0 && a1 == b1) return a.strides() == b.strides() ? MemOverlapStatus::Full : MemOverlapStatus::Partial;
  return a0 < b1 && b0 < a1 ? MemOverlapStatus::Partial : MemOverlapStatus::No;
}

namespace detail {
void throw_internal_overlap() {
  throw Error(
      "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
      "Please clone() the tensor before performing the operation.");
}
void throw_partial_overlap() {
  throw Error(
      "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
      "location. Please clone() the tensor before performing the operation.");
}
void check_internal_overlap_slow(const Tensor& t) {
  if (has_internal_overlap(t) == MemOverlap::Yes) throw_internal_overlap();
}
void check_overlap_slow(const Tensor& out, const Tensor& in, bool full_ok) {
  MemOverlapStatus s = get_overlap_status(out, in);
  if (s == MemOverlapStatus::Partial || (!full_ok && s == MemOverlapStatus::Full)) throw_partial_overlap();
}
}  // namespace detail

}  // namespace ember
