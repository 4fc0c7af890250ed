#include "ember/core/checked_math.h"

#include "ember/core/tensor.h"

namespace ember {

bool safe_numel(IntArrayRef sizes, int64_t* out) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= mul_overflows(n, s, &n);
  *out = n;
  return !overflow;
}

int64_t checked_numel(IntArrayRef sizes) {
  int64_t n;
  if (__builtin_expect(!safe_numel(sizes, &n), 0)) throw Error("numel: integer multiplication overflow");
  return n;
}

size_t storage_nbytes_contiguous(IntArrayRef sizes, size_t itemsize) {
  int64_t n;
  bool ok = safe_numel(sizes, &n);
  ok = ok && !mul_overflows(n, static_cast<int64_t>(itemsize), &n);
  if (__builtin_expect(!ok, 0))
    throw Error(detail::str_cat("Storage size calculation overflowed with sizes=", shape_str(sizes)));
  return static_cast<size_t>(n);
}

size_t storage_nbytes_strided(IntArrayRef sizes, IntArrayRef strides, size_t itemsize, int64_t offset) {
  int64_t extent = 1;  // 1 + the last element's index
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    int64_t span;
    overflow |= mul_overflows(sizes[i] - 1, strides[i], &span);
    overflow |= add_overflows(extent, span, &extent);
  }
  overflow |= add_overflows(extent, offset, &extent);
  overflow |= mul_overflows(extent, static_cast<int64_t>(itemsize), &extent);
  if (__builtin_expect(overflow, 0))
    throw Error(detail::str_cat("Storage size calculation overflowed with sizes=", shape_str(sizes),
                                " and strides=", shape_str(strides)));
  return static_cast<size_t>(extent);
}

void check_view_in_bounds(IntArrayRef sizes, IntArrayRef strides, int64_t offset, size_t itemsize,
                          size_t storage_nbytes) {
  // lo/hi: the smallest and largest element index the view touches.
  int64_t lo = offset, hi = offset;
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return;  // no elements: any offset is fine
    int64_t span;
    overflow |= mul_overflows(sizes[i] - 1, strides[i], &span);
    overflow |= add_overflows(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
  }
  int64_t need = 0;
  overflow |= add_overflows(hi, 1, &need) || mul_overflows(need, static_cast<int64_t>(itemsize), &need);
  if (__builtin_expect(overflow, 0))
    throw Error(detail::str_cat("Storage size calculation overflowed with sizes=", shape_str(sizes),
                                " and strides=", shape_str(strides)));
  if (__builtin_expect(lo < 0 || static_cast<size_t>(need) > storage_nbytes, 0))
    throw Error(detail::str_cat("setStorage: sizes ", shape_str(sizes), ", strides ", shape_str(strides),
                                ", storage offset ", offset, ", and itemsize ", itemsize,
                                " requiring a storage size of ", need, " are out of bounds for storage of size ",
                                storage_nbytes));
}

}  // namespace ember
