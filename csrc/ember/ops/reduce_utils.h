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

struct Layout {
  Tensor x;  // contiguous data viewed as (outer, R, inner)
  int64_t outer = 1, R = 1, inner = 1;
};
Layout reduce_layout(const Tensor& t, const std::vector<bool>& mask);
// (outer, R, inner) around one dim (scans, sorting): the input made contiguous.
Layout dim_layout(const Tensor& t, int64_t dim);

// Inserts size-1 dims back where `mask` reduced them (the keepdim shape of a reduced result).
Tensor unsqueeze_reduced(const Tensor& r, const std::vector<bool>& mask, int64_t ndim);

// Checks that the reduced dims are non-empty, for reductions without an identity (max, argmax,
// mode, ...). With no dims given and an empty input this is torch's "Specify the reduction dim"
// RuntimeError (an IndexError for argmax/argmin, as torch raises).
void check_nonempty(const Tensor& t, const std::vector<bool>& mask, bool dims_given, const char* op,
                    bool index_error_without_dim = false);

}  // namespace ember::reduce_detail
