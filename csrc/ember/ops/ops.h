// The operator API: one plain function per op. Python binds these directly.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
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
// torch.memory_format: the layout a copy gets (Preserve keeps the input's, see Note [Preserve format]).
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };
std::string_view memory_format_name(MemoryFormat f);  // "contiguous_format", ...

// Copies src into dst (broadcasting src, converting dtype) and bumps dst's version, even when
// src is dst. Raises PyTorch's errors when dst has internal overlap or partly overlaps src.
Tensor& copy_(Tensor& dst, const Tensor& src);
Tensor to_dtype(const Tensor& t, ScalarType dtype, bool copy = false);               // copies keep t's layout
Tensor contiguous(const Tensor& t, MemoryFormat format = MemoryFormat::Contiguous);  // t itself if it already is
bool is_contiguous(const Tensor& t, MemoryFormat format);
Tensor clone(const Tensor& t, MemoryFormat format = MemoryFormat::Preserve);
// An uninitialised tensor shaped like t, laid out per `format` (Preserve: as clone() lays it out).
Tensor empty_like(const Tensor& t, ScalarType dtype, MemoryFormat format = MemoryFormat::Preserve);
// True when t's elements tile one block of memory exactly (any dim order, no gaps, no overlap).
bool is_non_overlapping_and_dense(const Tensor& t);
// Fills every element; the number must fit the dtype (RuntimeError "value cannot be converted
// ... without overflow", as PyTorch). fill_ with a 0-d tensor converts like copy_ instead.
Tensor& fill_(Tensor& t, Scalar value);
Tensor& fill_(Tensor& t, const Tensor& value);
// For ops that store a Python number into a tensor of `dtype` (masked_fill, where, clamp, ...):
// raises torch's "value cannot be converted ... without overflow" when it does not fit.
void check_number_fits(const Tensor& value, ScalarType dtype);
// Resizes in place, keeping the data; does not bump the version (callers that are user-facing
// in-place ops do, as PyTorch's resize_ does).
Tensor& resize_(Tensor& t, IntArrayRef sizes);
Scalar item(const Tensor& t);
bool is_wrapped_number(const Tensor& t);

// ---- views (ops/view.cpp): share storage and version counter with the input ----
// Each follows PyTorch's rules for the result's strides; see Note [View strides] in view.cpp.
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> offset = std::nullopt);
Tensor view(const Tensor& t, IntArrayRef sizes);  // sizes may hold one -1
Tensor view_dtype(const Tensor& t, ScalarType dtype);
Tensor reshape(const Tensor& t, IntArrayRef sizes);  // a view when possible, else a copy
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor t_(const Tensor& t);  // .t(): transpose of a <=2-d tensor
Tensor movedim(const Tensor& t, IntArrayRef source, IntArrayRef destination);
Tensor expand(const Tensor& t, IntArrayRef sizes);  // -1 keeps a size; broadcast_to is the same
Tensor squeeze(const Tensor& t, OptDims dims = std::nullopt);
Tensor unsqueeze(const Tensor& t, int64_t dim);
// Returns t itself when start_dim == end_dim (as PyTorch), a view when possible, else a copy.
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& t, int64_t dim, IntArrayRef sizes);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1);
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step);
Tensor alias(const Tensor& t);  // a new TensorImpl viewing the same data (detach shares this)
// The shape `sizes` with a -1 filled in, checked against numel (RuntimeError as PyTorch).
Shape infer_size(IntArrayRef sizes, int64_t numel);
// Strides that view (sizes, strides) as `shape` without a copy, or nullopt when impossible.
std::optional<Shape> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef shape);

// Broadcast shape of two shapes, or RuntimeError naming the op and the sizes.
Shape broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op_name = nullptr);

// ---- elementwise (ops/binary.cpp, ops/unary.cpp) ----
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(std::initializer_list<Tensor> ts);  // undefined tensors are skipped
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
Tensor mv(const Tensor& a, const Tensor& v);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor vdot(const Tensor& a, const Tensor& b);  // dot with a conjugated (real dtypes: dot)
// beta * input + alpha * (product); beta == 0 ignores input's values (NaN does not propagate).
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, Scalar beta = 1, Scalar alpha = 1);
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, Scalar beta = 1, Scalar alpha = 1);
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, Scalar beta = 1, Scalar alpha = 1);
Tensor addbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, Scalar beta = 1, Scalar alpha = 1);
// Composed from permute/reshape/sum/bmm, so autograd comes from the parts (Note [einsum]).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims);

// ---- LAPACK-backed linear algebra (ops/lapack.cpp): float32/float64, batched (..., m, n) ----
// Failures on singular / non-positive-definite inputs throw LinAlgError (error.h).
Tensor linalg_inv(const Tensor& a);
Tensor linalg_det(const Tensor& a);
std::pair<Tensor, Tensor> linalg_slogdet(const Tensor& a);  // (sign, logabsdet)
Tensor linalg_solve(const Tensor& a, const Tensor& b, bool left = true);
Tensor linalg_cholesky(const Tensor& a, bool upper = false);
std::pair<Tensor, Tensor> linalg_qr(const Tensor& a, const std::string& mode = "reduced");
std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& a, bool full_matrices = true);
Tensor linalg_svdvals(const Tensor& a);
std::pair<Tensor, Tensor> linalg_eigh(const Tensor& a, const std::string& uplo = "L");
Tensor linalg_eigvalsh(const Tensor& a, const std::string& uplo = "L");
// (solution, residuals, rank, singular_values) as the gelsy driver gives them.
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_lstsq(const Tensor& a, const Tensor& b,
                                                        std::optional<double> rcond = std::nullopt,
                                                        const std::string& driver = "gelsy");
Tensor linalg_pinv(const Tensor& a, std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt, bool hermitian = false);
Tensor linalg_matrix_rank(const Tensor& a, std::optional<double> atol = std::nullopt,
                          std::optional<double> rtol = std::nullopt, bool hermitian = false);
Tensor linalg_matrix_power(const Tensor& a, int64_t n);
Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
// ord: nullopt (2-norm / Frobenius) or a number (inf as HUGE_VAL); ord_str "fro"/"nuc" for matrices.
Tensor linalg_norm(const Tensor& a, std::optional<double> ord, const std::string& ord_str, OptDims dims, bool keepdim);

}  // namespace ember

// ============================================================================================
// ---- indexing, assembly and shape ops (ops/index.cpp, ops/shape.cpp) ----
// ============================================================================================
namespace ember {

using TensorVec = std::vector<Tensor>;
// How index_put combines a value with what is already there.
enum class IndexReduce { None, Add, Mul, Max, Min };

// Advanced indexing (Note [Advanced indexing] in ops/index.cpp): indices[d] indexes dim d of t
// (undefined = the whole dim); a bool/uint8 tensor covers as many dims as it has.
Tensor index(const Tensor& t, const TensorVec& indices);
Tensor index_put(const Tensor& t, const TensorVec& indices, const Tensor& values, bool accumulate = false);
Tensor& index_put_(Tensor& t, const TensorVec& indices, const Tensor& values, bool accumulate = false);
// index_put with a reduction (scatter's reduce=); the non-sum modes have no gradient.
Tensor index_put_reduce(const Tensor& t, const TensorVec& indices, const Tensor& values, IndexReduce mode);
Tensor nonzero(const Tensor& t);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
// reduce: "" (none), "add" or "multiply".
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce = "");
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_add_(Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_reduce(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                      bool include_self = true);
Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha = 1);
Tensor& index_add_(Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, Scalar alpha = 1);
Tensor index_copy(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_fill(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& value);
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value);
Tensor& masked_fill_(Tensor& t, const Tensor& mask, const Tensor& value);
Tensor masked_select(const Tensor& t, const Tensor& mask);
Tensor masked_scatter(const Tensor& t, const Tensor& mask, const Tensor& source);
Tensor take(const Tensor& t, const Tensor& index);
Tensor take_along_dim(const Tensor& t, const Tensor& index, std::optional<int64_t> dim);
Tensor put(const Tensor& t, const Tensor& index, const Tensor& source, bool accumulate = false);
Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool out_int32 = false, bool right = false,
                    const Tensor& sorter = Tensor());
Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32 = false, bool right = false);

// Assembly and shape (ops/shape.cpp).
Tensor cat(const TensorVec& tensors, int64_t dim = 0);
Tensor stack(const TensorVec& tensors, int64_t dim = 0);
Tensor hstack(const TensorVec& tensors);
Tensor vstack(const TensorVec& tensors);
Tensor dstack(const TensorVec& tensors);
Tensor atleast_nd(const Tensor& t, int64_t n);
TensorVec split(const Tensor& t, int64_t split_size, int64_t dim = 0);
TensorVec split_with_sizes(const Tensor& t, IntArrayRef sizes, int64_t dim = 0);
TensorVec chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
TensorVec tensor_split(const Tensor& t, int64_t sections, int64_t dim = 0);
TensorVec tensor_split_indices(const Tensor& t, IntArrayRef indices, int64_t dim = 0);
TensorVec unbind(const Tensor& t, int64_t dim = 0);
Tensor flip(const Tensor& t, IntArrayRef dims);
Tensor roll(const Tensor& t, IntArrayRef shifts, IntArrayRef dims);
Tensor repeat(const Tensor& t, IntArrayRef repeats);
Tensor tile(const Tensor& t, IntArrayRef dims);
Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt);
Tensor repeat_interleave_indices(const Tensor& repeats);  // repeat_interleave(repeats)
TensorVec broadcast_tensors(const TensorVec& tensors);
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);
Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);  // a view
Tensor diag_embed(const Tensor& t, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor diag(const Tensor& t, int64_t diagonal = 0);
Tensor trace(const Tensor& t);
Tensor outer(const Tensor& a, const Tensor& b);
Tensor kron(const Tensor& a, const Tensor& b);
Tensor cartesian_prod(const TensorVec& tensors);
Tensor combinations(const Tensor& t, int64_t r = 2, bool with_replacement = false);
TensorVec meshgrid(const TensorVec& tensors, const std::string& indexing = "ij");
Tensor narrow_copy(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor rot90(const Tensor& t, int64_t k = 1, IntArrayRef dims = {0, 1});

}  // namespace ember

// ======================================================================================
// Unary elementwise ops and activations (ops/unary.cpp, kernels in cpu/unary_kernels.cpp)
// and the remaining binary/ternary pointwise ops (ops/pointwise.cpp).
// ======================================================================================
namespace ember {

// X(function name, enum name) for unary ops that take no arguments besides the input.
// clang-format off
#define EMBER_UNARY_OPS(X)                                                                                  \
  X(abs, Abs) X(sign, Sign) X(sgn, Sgn) X(neg, Neg) X(exp, Exp) X(exp2, Exp2) X(expm1, Expm1) X(log, Log)   \
  X(log2, Log2) X(log10, Log10) X(log1p, Log1p) X(sqrt, Sqrt) X(rsqrt, Rsqrt) X(square, Square) X(sin, Sin) \
  X(cos, Cos) X(tan, Tan) X(asin, Asin) X(acos, Acos) X(atan, Atan) X(sinh, Sinh) X(cosh, Cosh)             \
  X(tanh, Tanh) X(asinh, Asinh) X(acosh, Acosh) X(atanh, Atanh) X(sigmoid, Sigmoid) X(erf, Erf)             \
  X(erfc, Erfc) X(erfinv, Erfinv) X(lgamma, Lgamma) X(digamma, Digamma)                                       \
  X(floor, Floor) X(ceil, Ceil) X(trunc, Trunc) X(frac, Frac) X(reciprocal, Reciprocal) X(isnan, Isnan)     \
  X(isinf, Isinf) X(isfinite, Isfinite) X(isposinf, Isposinf) X(isneginf, Isneginf)                         \
  X(logical_not, LogicalNot) X(bitwise_not, BitwiseNot) X(signbit, Signbit) X(relu, Relu) X(relu6, Relu6)   \
  X(selu, Selu) X(silu, Silu) X(mish, Mish) X(hardsigmoid, Hardsigmoid) X(hardswish, Hardswish)             \
  X(logsigmoid, Logsigmoid)
// clang-format on

// Unary ops with arguments; their values travel in UnaryParams (meaning per op noted).
#define EMBER_UNARY_PARAM_OPS(X)                                                                       \
  X(Logit)     /* p0 = eps, or < 0 for none */                                                         \
  X(Polygamma) /* p0 = n (>= 0) */                                                                     \
  X(Round)     /* p0 = decimals */                                                                     \
  X(NanToNum)  /* p0 = nan, p1 = posinf, p2 = neginf; has_p1/has_p2 false -> the dtype's max/lowest */ \
  X(LeakyRelu) /* p0 = negative_slope */                                                               \
  X(Elu)       /* p0 = alpha, p1 = scale, p2 = input_scale (celu: alpha, 1, 1/alpha) */                \
  X(Gelu)      /* p0 = 0 exact (erf), 1 tanh approximation */                                          \
  X(Softplus)  /* p0 = beta, p1 = threshold */                                                         \
  X(Hardtanh)  /* p0 = min_val, p1 = max_val */                                                        \
  X(Threshold) /* p0 = threshold, p1 = value */                                                        \
  X(Clamp)     /* p0 = min (has_p0), p1 = max (has_p1) */

enum class UnaryOp : int {
#define EMBER_ENUM_ENTRY(fn, E) E,
#define EMBER_ENUM_ENTRY1(E) E,
  EMBER_UNARY_OPS(EMBER_ENUM_ENTRY) EMBER_UNARY_PARAM_OPS(EMBER_ENUM_ENTRY1)
#undef EMBER_ENUM_ENTRY
#undef EMBER_ENUM_ENTRY1
};

struct UnaryParams {
  double p0 = 0, p1 = 0, p2 = 0;
  bool has_p0 = true, has_p1 = true, has_p2 = true;
};

// The single entry point of the unary family. out: undefined -> allocated (else resized and
// written, the result cast to its dtype); `inplace` means out is `a`.
Tensor unary_op(UnaryOp op, const Tensor& a, Tensor out = Tensor(), bool inplace = false, UnaryParams p = {});
const char* unary_op_name(UnaryOp op);

#define EMBER_DECLARE_UNARY(fn, E) Tensor fn(const Tensor& a);
EMBER_UNARY_OPS(EMBER_DECLARE_UNARY)
#undef EMBER_DECLARE_UNARY

Tensor positive(const Tensor& a);  // returns `a` itself, as PyTorch (errors on bool)
Tensor logit(const Tensor& a, std::optional<double> eps = std::nullopt);
Tensor polygamma(int64_t n, const Tensor& a);  // n-th derivative of digamma
Tensor round(const Tensor& a, int64_t decimals = 0);
Tensor nan_to_num(const Tensor& a, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);
Tensor leaky_relu(const Tensor& a, double negative_slope = 0.01);
Tensor elu(const Tensor& a, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0);
Tensor celu(const Tensor& a, double alpha = 1.0);
Tensor gelu(const Tensor& a, const std::string& approximate = "none");
Tensor softplus(const Tensor& a, double beta = 1.0, double threshold = 20.0);
Tensor softsign(const Tensor& a);
Tensor hardtanh(const Tensor& a, double min_val = -1.0, double max_val = 1.0);
Tensor threshold(const Tensor& a, double threshold, double value);
// clamp with number bounds (type promotion as PyTorch: an int tensor with a float bound is float).
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max);

// ---- binary and ternary pointwise ops (ops/pointwise.cpp) ----
enum class PointwiseOp : int {
  Atan2,
  Maximum,
  Minimum,
  Fmax,
  Fmin,
  Hypot,
  Copysign,
  Fmod,  // float-valued or numeric
  LogicalAnd,
  LogicalOr,
  LogicalXor,  // bool results
  BitwiseAnd,
  BitwiseOr,
  BitwiseXor,
  LeftShift,
  RightShift,  // integral types only
  // Fused backward kernels, called by backward formulas when no graph is recorded (a = grad, b = input).
  GeluBackward,      // grad * (Phi(x) + x phi(x))
  GeluTanhBackward,  // the same for approximate="tanh"
  ReluBackward,      // b <= 0 ? 0 : grad (b = relu's result), as torch's threshold_backward
  SigmoidBackward,   // grad * (1 - b) * b (b = sigmoid's result), as torch's sigmoid_backward
  TanhBackward,      // grad * (1 - b * b) (b = tanh's result), as torch's tanh_backward
  // The same with parameters p0, p1, p2 (pointwise_op_p): Note [Fused activation backward] in ops/unary.cpp.
  LeakyReluBackward,   // b > 0 ? grad : grad * p0 (p0: negative_slope)
  HardtanhBackward,    // p0 < b < p1 ? grad : 0 (hardtanh and relu6)
  SiluBackward,        // grad * s (1 + b (1 - s)), s = sigmoid(b)
  HardswishBackward,   // grad * (b <= -3 ? 0 : b >= 3 ? 1 : b / 3 + 1/2), torch's ends
  SoftplusBackward,    // z = exp(b p0): b p0 > p1 ? grad : grad z / (z + 1) (p0: beta, p1: threshold)
  EluBackward,         // b > 0 ? grad p2 : grad p0 exp(b p1) (p0: alpha scale input_scale, p1: input_scale, p2: scale)
  LogsigmoidBackward,  // grad * sigmoid(-b), torch's form from z = exp(-|b|)
  // Note [Fused regression losses] (ops/nn_loss.cpp): a = input, b = target, d = a - b.
  SmoothL1,          // |d| < p0 ? 0.5 d^2 / p0 : |d| - 0.5 p0 (p0: beta > 0)
  Huber,             // |d| < p0 ? 0.5 d^2 : p0 (|d| - 0.5 p0) (p0: delta)
  SmoothL1Backward,  // p1 * (d <= -p0 ? -1 : d >= p0 ? 1 : d / p0) (p1: the gradient's scale)
  HuberBackward,     // p1 * (d <= -p0 ? -p0 : d >= p0 ? p0 : d)
};
Tensor pointwise_op(PointwiseOp op, const Tensor& a, const Tensor& b, Tensor out = Tensor(), bool inplace = false);
// A parametrized op of the list above, without history (callers record their own node).
Tensor pointwise_op_p(PointwiseOp op, const Tensor& a, const Tensor& b, double p0, double p1 = 0.0, double p2 = 0.0);
const char* pointwise_op_name(PointwiseOp op);
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor fmax(const Tensor& a, const Tensor& b);
Tensor fmin(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);

// Ternary ops; `out`/`inplace` as for unary_op (in-place writes into `self`).
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight, Tensor out = Tensor(), bool inplace = false);
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1, Tensor out = Tensor(),
               bool inplace = false);
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1, Tensor out = Tensor(),
               bool inplace = false);
// Tensor bounds; an undefined bound is absent (at least one must be given).
Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max, Tensor out = Tensor(), bool inplace = false);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor out = Tensor());

Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool equal(const Tensor& a, const Tensor& b);  // same shape and values

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
// linalg.matrix_norm: ord "fro", "nuc", or 1, -1, 2, -2, inf, -inf ("nuc" and +-2 through
// linalg_norm's singular values).
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
