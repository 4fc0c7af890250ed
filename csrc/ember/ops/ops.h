// The operator API: one plain function per op. Python binds these directly.
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/scalar.h"
#include "ember/core/tensor.h"

namespace ember {

using OptDims = std::optional<std::vector<int64_t>>;

// ---- factories (ops/factory.cpp) ----
Tensor empty(IntArrayRef sizes, ScalarType dtype = default_dtype(), Device device = Device());
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype = default_dtype(),
                     Device device = Device());
// Dense tensor whose dims are laid out in `perm` order (perm[0] outermost in memory).
Tensor empty_permuted(IntArrayRef sizes, IntArrayRef perm, ScalarType dtype = default_dtype(),
                      Device device = Device());
Tensor full(IntArrayRef sizes, Scalar value, ScalarType dtype, Device device = Device());
Tensor zeros(IntArrayRef sizes, ScalarType dtype = default_dtype(), Device device = Device());
Tensor ones(IntArrayRef sizes, ScalarType dtype = default_dtype(), Device device = Device());
Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<ScalarType> dtype = std::nullopt,
              Device device = Device());
Tensor linspace(Scalar start, Scalar end, int64_t steps, std::optional<ScalarType> dtype = std::nullopt,
                Device device = Device());
Tensor logspace(Scalar start, Scalar end, int64_t steps, double base, std::optional<ScalarType> dtype = std::nullopt,
                Device device = Device());
Tensor eye(int64_t n, int64_t m, ScalarType dtype = default_dtype(), Device device = Device());
// 0-d tensor holding a Python number; flagged so type promotion treats it as a scalar.
Tensor scalar_tensor(Scalar s, std::optional<ScalarType> dtype = std::nullopt, bool wrapped = false);
// ---- layouts like another tensor's (ops/like.cpp): empty_like keeps dense strides (preserve_format) ----
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);
Shape infer_dense_strides(IntArrayRef sizes, IntArrayRef strides);
Tensor empty_like(const Tensor& t, std::optional<ScalarType> dtype = std::nullopt, bool preserve_format = true);

// ---- copy and conversion (ops/copy.cpp) ----
Tensor& copy_(Tensor& dst, const Tensor& src);  // broadcasts src, converts dtype
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy = false);
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
Tensor& fill_(Tensor& t, Scalar value);
Tensor& resize_(Tensor& t, IntArrayRef sizes);
Scalar item(const Tensor& t);
bool is_wrapped_number(const Tensor& t);

// ---- views (ops/view.cpp): share storage and version counter with the input ----
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> offset = std::nullopt);
Tensor view(const Tensor& t, IntArrayRef sizes);  // sizes may hold one -1
Tensor view_dtype(const Tensor& t, ScalarType dtype);
Tensor reshape(const Tensor& t, IntArrayRef sizes);  // a view when possible, else a copy
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor t_(const Tensor& t);  // .t(): transpose of a <=2-d tensor
Tensor expand(const Tensor& t, IntArrayRef sizes);
Tensor squeeze(const Tensor& t, OptDims dims = std::nullopt);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1);
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step);
Tensor alias(const Tensor& t);  // a new TensorImpl viewing the same data (detach shares this)
// The shape `sizes` with a -1 filled in, checked against numel (RuntimeError as PyTorch).
Shape infer_size(IntArrayRef sizes, int64_t numel);

// Broadcast shape of two shapes, or RuntimeError naming the op and the sizes.
Shape broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op_name = nullptr);

// ---- elementwise (ops/binary.cpp, ops/unary.cpp) ----
ScalarType result_type(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
// rounding_mode: "" (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode = "");
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& a);
Tensor relu(const Tensor& a);

// Names for the binary family; `binary_op` is the single entry point the functions above use.
enum class BinaryOp { Add, Sub, Mul, Div, DivTrunc, DivFloor, Remainder, Pow, Eq, Ne, Lt, Le, Gt, Ge };
// out: undefined -> allocated; `inplace` means out is `a` (no resize, no dtype change).
Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, Tensor out = Tensor(), bool inplace = false,
                 Scalar alpha = 1);

// ---- reductions (ops/reduce.cpp) ----
Tensor sum(const Tensor& t, OptDims dims = std::nullopt, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& t, OptDims dims = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);

// ---- linear algebra (ops/linalg.cpp) ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);

// ======== reductions, scans, sorting and counting (ops/reduce_ops.cpp, softmax.cpp, scan.cpp, sort.cpp) ========
// Dims follow torch: `dims` unset or empty reduces every dim; (values, indices) pairs return
// indices as int64. Ops without an identity (max, argmax, mode, ...) raise on empty reductions
// as torch does. Backward formulas live beside each op.
using TensorPair = std::tuple<Tensor, Tensor>;

Tensor nansum(const Tensor& t, OptDims dims = std::nullopt, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt);
Tensor nanmean(const Tensor& t, OptDims dims = std::nullopt, bool keepdim = false,
               std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& t);  // over all elements
Tensor min(const Tensor& t);
TensorPair max(const Tensor& t, int64_t dim, bool keepdim = false);  // (values, indices)
TensorPair min(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor maximum(const Tensor& a, const Tensor& b);  // elementwise, NaN-propagating
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor amax(const Tensor& t, OptDims dims = std::nullopt, bool keepdim = false);
Tensor amin(const Tensor& t, OptDims dims = std::nullopt, bool keepdim = false);
TensorPair aminmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);  // (min, max)
Tensor argmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor all(const Tensor& t, OptDims dims = std::nullopt, bool keepdim = false);
Tensor any(const Tensor& t, OptDims dims = std::nullopt, bool keepdim = false);
Tensor count_nonzero(const Tensor& t, OptDims dims = std::nullopt);
// correction: 1 is Bessel's (unbiased=True), 0 the population variance (unbiased=False).
Tensor var(const Tensor& t, OptDims dims = std::nullopt, double correction = 1, bool keepdim = false);
Tensor std(const Tensor& t, OptDims dims = std::nullopt, double correction = 1, bool keepdim = false);
TensorPair var_mean(const Tensor& t, OptDims dims = std::nullopt, double correction = 1, bool keepdim = false);
TensorPair std_mean(const Tensor& t, OptDims dims = std::nullopt, double correction = 1, bool keepdim = false);
// linalg.vector_norm: ord 0 (count), 1, 2, +-inf or any real p; dtype casts the input first.
Tensor vector_norm(const Tensor& t, double ord = 2, OptDims dims = std::nullopt, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
// linalg.matrix_norm: ord "fro", or 1, -1, inf, -inf ("nuc", 2, -2 need an SVD: NotImplementedError).
Tensor matrix_norm(const Tensor& t, const std::string& ord = "fro", IntArrayRef dims = {-2, -1}, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
Tensor matrix_norm(const Tensor& t, double ord, IntArrayRef dims = {-2, -1}, bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
// torch.norm: p number -> vector_norm; "fro" over <= 2 dims; "nuc" -> matrix_norm.
Tensor norm(const Tensor& t, double p, OptDims dims = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor norm(const Tensor& t, const std::string& p, OptDims dims = std::nullopt, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor logsumexp(const Tensor& t, OptDims dims, bool keepdim = false);

// ---- softmax (ops/softmax.cpp) ----
Tensor softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

// ---- scans (ops/scan.cpp) ----
Tensor cumsum(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
TensorPair cummax(const Tensor& t, int64_t dim);
TensorPair cummin(const Tensor& t, int64_t dim);
Tensor logcumsumexp(const Tensor& t, int64_t dim);

// ---- sorting, selection, counting (ops/sort.cpp) ----
// Sorting is always stable; NaN sorts above +inf (first when descending).
TensorPair sort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
TensorPair topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
TensorPair kthvalue(const Tensor& t, int64_t k, int64_t dim = -1, bool keepdim = false);
Tensor median(const Tensor& t);  // lower median of all elements; NaN if any is NaN
TensorPair median(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor nanmedian(const Tensor& t);  // ignores NaN
TensorPair nanmedian(const Tensor& t, int64_t dim, bool keepdim = false);
TensorPair mode(const Tensor& t, int64_t dim = -1, bool keepdim = false);
// q: a 0-d or 1-d tensor of the input's dtype (a 1-d q puts its dim first in the result).
// interpolation: "linear", "lower", "higher", "midpoint" or "nearest".
Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const std::string& interpolation = "linear");
Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const std::string& interpolation = "linear");
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   const std::string& interpolation = "linear");
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   const std::string& interpolation = "linear");
// (values, inverse, counts): inverse is shaped like t (like t's size at dim with dim given).
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false, std::optional<int64_t> dim = std::nullopt);
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);
Tensor bincount(const Tensor& t, const Tensor& weights = Tensor(), int64_t minlength = 0);
Tensor histc(const Tensor& t, int64_t bins = 100, double min = 0, double max = 0);
// ======== end of reductions, scans, sorting ========

}  // namespace ember
