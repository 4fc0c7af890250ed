// Internal helpers shared by the reduction, scan and sort families (not part of the public API).
// Note [Reduction layout]: a reduction over a set of dims reads its input as a contiguous
// (outer, R, inner) block: R is the product of the reduced sizes, inner of the kept dims after
// them. When the reduced dims form one run that is the input itself (made contiguous); when they
// form several runs, the kept dims are permuted in front of the reduced ones first (inner == 1).
#pragma once
#include <vector>

#include "ember/ops/ops.h"

namespace ember::reduce_detail {

// Which dims are reduced; `dims` unset or empty means all (torch's dim=None / dim=()). A 0-d
// tensor has one reducible dim (0 or -1). Repeated dims are a RuntimeError as in PyTorch.
std::vector<bool> reduce_mask(const Tensor& t, const OptDims& dims);
std::vector<bool> reduce_mask(const Tensor& t, int64_t dim);
// The result's shape: reduced dims dropped, or kept as size 1 with keepdim.
Shape reduced_shape(const Tensor& t, const std::vector<bool>& mask, bool keepdim);
// The dims a mask selects, for calling ops that take a dims list (none for a 0-d tensor).
std::vector<int64_t> mask_dims(const std::vector<bool>& mask, int64_t ndim);
// Number of elements reduced into each output element.
int64_t reduced_count(const Tensor& t, const std::vector<bool>& mask);

// Note [Reduction layout]: the dims of t in memory order (strides descending) when that order
// makes t contiguous and is not t's own order (a transposed or permuted dense tensor), so that a
// reduction reads it in place instead of copying it first; empty otherwise.
std::vector<int64_t> memory_order(const Tensor& t);

struct Layout {
  Tensor x;  // contiguous data viewed as (outer, R, inner)
  int64_t outer = 1, R = 1, inner = 1;
};
// For a reduction (a result over the kept dims only): a permuted dense input is read in memory
// order when that keeps the kept dims in order (memory_order_ok; Note [Reduction layout]).
Layout reduce_layout(const Tensor& t, const std::vector<bool>& mask, bool memory_order_ok = true);
// (outer, R, inner) around one dim (scans, sorting, softmax: results the input's shape): the input
// made contiguous in its logical order.
Layout dim_layout(const Tensor& t, int64_t dim);

// Inserts size-1 dims back where `mask` reduced them (the keepdim shape of a reduced result).
Tensor unsqueeze_reduced(const Tensor& r, const std::vector<bool>& mask, int64_t ndim);

// Checks that the reduced dims are non-empty, for reductions without an identity (max, argmax,
// mode, ...). With no dims given and an empty input this is torch's "Specify the reduction dim"
// RuntimeError (an IndexError for argmax/argmin, as torch raises).
void check_nonempty(const Tensor& t, const std::vector<bool>& mask, bool dims_given, const char* op,
                    bool index_error_without_dim = false);

// A 0-d wrapped number (ranks below tensors in type promotion), for backward formulas.
inline Tensor num(Scalar s) { return scalar_tensor(s, std::nullopt, /*wrapped=*/true); }
// g spread evenly over the elements of x equal to r (NaN matches NaN), where g and r have the
// keepdim shape of a reduction over `mask`: torch's gradient rule for amax/amin, full max/min/
// median and the inf norms.
Tensor evenly_distribute(const Tensor& g, const Tensor& x, const Tensor& r, const std::vector<bool>& mask);
// Gradient of a value-selecting reduction along dim (max/min/kthvalue/median/mode with dim):
// each slice's g goes to its selected index, in a tensor of `sizes`.
Tensor select_backward(const Tensor& g, int64_t dim, const Tensor& indices, const Shape& sizes, bool keepdim);

}  // namespace ember::reduce_detail
