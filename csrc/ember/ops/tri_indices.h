// torch.tril_indices / triu_indices (ops/tri_indices.cpp). Not part of ember.h: include this header
// where they are used.
#pragma once
#include <cstdint>

#include "ember/core/tensor.h"

namespace ember {

// The (row, column) pairs of the lower (upper) triangle of a row x col matrix, below (above) the
// diagonal `offset` inclusive, row by row: a 2 x count tensor of int64 or int32 (`dtype`; other
// dtypes raise NotImplementedError as torch). Negative row or col raise.
Tensor tril_indices(int64_t row, int64_t col, int64_t offset, ScalarType dtype = ScalarType::Int64);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset, ScalarType dtype = ScalarType::Int64);

}  // namespace ember
