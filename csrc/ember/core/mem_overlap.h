// Note [Memory overlap]
// Writing into a tensor that some element reaches twice (an expanded tensor), or that shares
// part of its memory with an input, gives results that depend on the loop order. PyTorch refuses
// such writes with a cheap, conservative test, and so does ember: exact answers come only for
// non-overlapping dense layouts (anything else is "too hard" and allowed); a zero stride on a dim
// longer than 1 is certain internal overlap; two dense tensors of one storage overlap fully when
// they cover the same bytes with the same strides (allowed for elementwise ops: `x.add_(x)`),
// partially when their byte ranges meet otherwise. The fast paths (contiguous destination,
// different storages) are inline so elementwise ops pay nothing measurable.
#pragma once
#include <initializer_list>

#include "ember/core/tensor.h"

namespace ember {

enum class MemOverlap { No, Yes, TooHard };                  // within one tensor
enum class MemOverlapStatus { Full, Partial, No, TooHard };  // between two tensors

// True when t's elements tile one block of memory exactly (any dim order, no gaps, no overlap).
bool is_non_overlapping_and_dense(const Tensor& t);
MemOverlap has_internal_overlap(const Tensor& t);
MemOverlapStatus get_overlap_status(const Tensor& a, const Tensor& b);
// [begin, end) of the bytes t's elements can touch (t non-empty, strides >= 0).
std::pair<const char*, const char*> byte_range(const Tensor& t);

namespace detail {
[[noreturn]] void throw_internal_overlap();
[[noreturn]] void throw_partial_overlap();
void check_internal_overlap_slow(const Tensor& t);
void check_overlap_slow(const Tensor& out, const Tensor& in, bool full_ok);
inline bool same_storage(const Tensor& a, const Tensor& b) {
  return a.impl()->storage().get() == b.impl()->storage().get();
}
}  // namespace detail

// RuntimeError when some element of `t` is certainly reachable through two indices.
inline void assert_no_internal_overlap(const Tensor& t) {
  if (!t.is_contiguous()) detail::check_internal_overlap_slow(t);
}
// RuntimeError when `out` and `in` partly share memory (full overlap is allowed).
inline void assert_no_partial_overlap(const Tensor& out, const Tensor& in) {
  if (in.defined() && !out.is_same(in) && detail::same_storage(out, in)) detail::check_overlap_slow(out, in, true);
}
// RuntimeError when `out` and `in` share memory at all (ops that read `in` while writing `out`
// in an order of their own: index_add_, scatter_, gather(out=), cat(out=), ...).
inline void assert_no_overlap(const Tensor& out, const Tensor& in) {
  if (in.defined() && detail::same_storage(out, in)) detail::check_overlap_slow(out, in, false);
}
// The elementwise rule (PyTorch's TensorIterator): no internal overlap in the written-to
// tensor, no partial overlap with any input.
inline void check_elementwise_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  assert_no_internal_overlap(out);
  for (const Tensor* in : inputs) assert_no_partial_overlap(out, *in);
}

}  // namespace ember
