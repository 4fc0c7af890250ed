// tril_indices / triu_indices (ops/tri_indices.h): each row's run of columns written straight into
// the result (as a Python composition of arange, cumsum and repeat_interleave they took 3.5-5x torch's
// time; a 16 x 16 triangle 5x).
#include "ember/ops/tri_indices.h"

#include <algorithm>
#include <limits>

#include "ember/core/parallel.h"
#include "ember/core/type_name.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

using Wide = __int128;  // sums of up to row x col pairs, row and col any int64

// sum over r in [0, n) of clamp(r + k, 0, col): zero rows, a linear run, then rows of col.
Wide clamp_sum(Wide n, Wide k, Wide col) {
  const Wide a = std::max<Wide>(0, std::min<Wide>(n, -k));       // rows before the run: 0 each
  const Wide b = std::max<Wide>(a, std::min<Wide>(n, col - k));  // the run: r + k each
  return (a + b - 1 + 2 * k) * (b - a) / 2 + col * (n - b);
}

// Pairs before row r: the triangle's first r rows (tril: clamp(r + offset + 1, 0, col) columns a row;
// triu: col minus clamp(r + offset, 0, col)).
Wide pairs_before(int64_t r, int64_t col, int64_t offset, bool upper) {
  return upper ? Wide(r) * col - clamp_sum(r, offset, col) : clamp_sum(r, Wide(offset) + 1, col);
}

template <typename T>
void fill_pairs(T* rows, T* cols, int64_t row, int64_t col, int64_t offset, bool upper) {
  // Only the rows holding pairs (each holds at least one, so there are no more of them than pairs):
  // tril_indices(2^62, 2^62, 2 - 2^62) is 3 pairs.
  const int64_t first_row = upper ? 0 : std::clamp<int64_t>(-offset, 0, row);
  const int64_t last_row = upper ? std::clamp<int64_t>(col - offset, 0, row) : row;
  parallel_for(first_row, last_row, std::max<int64_t>(1, 16384 / std::max<int64_t>(col, 1)), [&](int64_t b, int64_t e) {
    int64_t k = static_cast<int64_t>(pairs_before(b, col, offset, upper));
    for (int64_t r = b; r < e; ++r) {
      const int64_t start = upper ? std::clamp<int64_t>(r + offset, 0, col) : 0;
      const int64_t end = upper ? col : std::clamp<int64_t>(r + offset + 1, 0, col);
      for (int64_t c = start; c < end; ++c, ++k) {
        rows[k] = static_cast<T>(r);
        cols[k] = static_cast<T>(c);
      }
    }
  });
}

Tensor tri_indices(int64_t row, int64_t col, int64_t offset, ScalarType dtype, bool upper) {
  const char* name = upper ? "triu_indices" : "tril_indices";
  if (dtype != ScalarType::Int64 && dtype != ScalarType::Int32)
    EMBER_NOT_IMPLEMENTED("\"", name, "\" not implemented for '", scalar_type_name(dtype), "'");
  EMBER_CHECK(row >= 0, "row must be non-negative, got", row);
  EMBER_CHECK(col >= 0, "col must be non-negative, got", col);
  offset = std::clamp(offset, -row, col);  // the same triangle, and r + offset + 1 cannot overflow
  const Wide total = pairs_before(row, col, offset, upper);
  EMBER_CHECK(total <= Wide(std::numeric_limits<int64_t>::max() / 2), name, ": ", row, " x ", col,
              " has too many pairs for a tensor");
  const int64_t n = static_cast<int64_t>(total);
  Tensor out = empty({2, n}, dtype);
  if (dtype == ScalarType::Int64)
    fill_pairs(out.data<int64_t>(), out.data<int64_t>() + n, row, col, offset, upper);
  else
    fill_pairs(out.data<int32_t>(), out.data<int32_t>() + n, row, col, offset, upper);
  return out;
}

}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, ScalarType dtype) {
  return tri_indices(row, col, offset, dtype, false);
}
Tensor triu_indices(int64_t row, int64_t col, int64_t offset, ScalarType dtype) {
  return tri_indices(row, col, offset, dtype, true);
}

}  // namespace ember
