// at:: free functions: factories, torch::tensor, and the ops as functions (each an ember op).
#include "ember/frontend/functions.h"

#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/ops/gemm.h"
#include "ember/ops/nn.h"
#include "ember/ops/nn_linear.h"
#include "ember/ops/operators.h"
#include "ember/ops/random.h"

namespace at {
namespace ag = ember::autograd;

namespace {
ember::Tensor wrap(const c10::Scalar& s) { return ember::wrap_scalar(s); }
ember::OptDims dims_of(IntArrayRef d) { return d.empty() ? ember::OptDims() : ember::OptDims(d.vec()); }
std::vector<ember::Tensor> ember_list(TensorList l) { return std::vector<ember::Tensor>(l.begin(), l.end()); }
std::vector<Tensor> at_list(const std::vector<ember::Tensor>& v) { return std::vector<Tensor>(v.begin(), v.end()); }
ember::Tensor opt(const std::optional<Tensor>& t) { return t ? ember::Tensor(*t) : ember::Tensor(); }

ember::Device device_of(const TensorOptions& o) {
  Device d = o.device();
  if (!d.is_cpu()) EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; cannot create tensors on ", d.str());
  return ember::Device();
}
ScalarType dtype_of(const TensorOptions& o) {
  return o.has_dtype() ? o.dtype().toScalarType() : ember::default_dtype();
}
// A factory's result with the options' requires_grad applied (a leaf).
Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}
}  // namespace

// ---- factories ----

Tensor empty(IntArrayRef size, TensorOptions o, std::optional<MemoryFormat> mf) {
  Tensor t = ember::empty(to_ember(size), dtype_of(o), device_of(o));
  if (mf && *mf != MemoryFormat::Contiguous && *mf != MemoryFormat::Preserve) t = ember::contiguous(t, *mf);
  return finish(t, o);
}
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions o) {
  return finish(ember::empty_strided(to_ember(size), to_ember(stride), dtype_of(o), device_of(o)), o);
}
Tensor zeros(IntArrayRef size, TensorOptions o) {
  return finish(ember::zeros(to_ember(size), dtype_of(o), device_of(o)), o);
}
Tensor ones(IntArrayRef size, TensorOptions o) {
  return finish(ember::ones(to_ember(size), dtype_of(o), device_of(o)), o);
}
Tensor full(IntArrayRef size, const c10::Scalar& v, TensorOptions o) {
  // As torch.full: without a dtype, the fill value's kind decides it (bool, int64 or the default).
  ScalarType dt = o.has_dtype() ? o.dtype().toScalarType() : v.natural_dtype();
  return finish(ember::full(to_ember(size), v, dt, device_of(o)), o);
}
Tensor rand(IntArrayRef size, TensorOptions o) {
  return finish(ember::rand(to_ember(size), nullptr, dtype_of(o), device_of(o)), o);
}
Tensor randn(IntArrayRef size, TensorOptions o) {
  return finish(ember::randn(to_ember(size), nullptr, dtype_of(o), device_of(o)), o);
}
Tensor randint(int64_t high, IntArrayRef size, TensorOptions o) { return randint(0, high, size, o); }
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions o) {
  ScalarType dt = o.has_dtype() ? o.dtype().toScalarType() : kLong;
  return finish(ember::randint(low, high, to_ember(size), nullptr, dt, device_of(o)), o);
}
Tensor randperm(int64_t n, TensorOptions o) {
  ScalarType dt = o.has_dtype() ? o.dtype().toScalarType() : kLong;
  return finish(ember::randperm(n, nullptr, dt, device_of(o)), o);
}
Tensor normal(double mean, double std, IntArrayRef size, TensorOptions o) {
  return finish(ember::normal(mean, std, to_ember(size), nullptr, dtype_of(o), device_of(o)), o);
}
Tensor normal(const Tensor& mean, double std) { return ember::normal(mean, std); }
Tensor normal(const Tensor& mean, const Tensor& std) { return ember::normal(mean, std); }
Tensor bernoulli(const Tensor& p) { return ember::bernoulli(p); }
Tensor bernoulli(const Tensor& self, double p) { return ember::bernoulli(self, p); }
Tensor multinomial(const Tensor& self, int64_t n, bool replacement) { return ember::multinomial(self, n, replacement); }
Tensor poisson(const Tensor& rates) { return ember::poisson(rates); }
Tensor arange(const c10::Scalar& end, TensorOptions o) { return arange(0, end, 1, o); }
Tensor arange(const c10::Scalar& start, const c10::Scalar& end, TensorOptions o) { return arange(start, end, 1, o); }
Tensor arange(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step, TensorOptions o) {
  return finish(ember::arange(start, end, step, o.dtype_opt(), device_of(o)), o);
}
Tensor linspace(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, TensorOptions o) {
  return finish(ember::linspace(start, end, steps, o.dtype_opt(), device_of(o)), o);
}
Tensor logspace(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, double base, TensorOptions o) {
  return finish(ember::logspace(start, end, steps, base, o.dtype_opt(), device_of(o)), o);
}
Tensor eye(int64_t n, TensorOptions o) { return eye(n, n, o); }
Tensor eye(int64_t n, int64_t m, TensorOptions o) { return finish(ember::eye(n, m, dtype_of(o), device_of(o)), o); }
Tensor scalar_tensor(const c10::Scalar& s, TensorOptions o) {
  device_of(o);
  return finish(ember::scalar_tensor(s, o.has_dtype() ? o.dtype_opt() : std::optional<ScalarType>(dtype_of(o))), o);
}
namespace {
// *_like: the options' dtype or self's; the layout follows self (preserve_format).
Tensor like(const Tensor& self, const TensorOptions& o) {
  device_of(o);
  return ember::empty_like(self, o.has_dtype() ? o.dtype_opt() : std::optional<ScalarType>(self.scalar_type()));
}
}  // namespace
Tensor empty_like(const Tensor& self, TensorOptions o, std::optional<MemoryFormat>) { return finish(like(self, o), o); }
Tensor zeros_like(const Tensor& self, TensorOptions o, std::optional<MemoryFormat>) {
  Tensor t = like(self, o);
  t.zero_();
  return finish(t, o);
}
Tensor ones_like(const Tensor& self, TensorOptions o, std::optional<MemoryFormat>) {
  Tensor t = like(self, o);
  t.fill_(1);
  return finish(t, o);
}
Tensor full_like(const Tensor& self, const c10::Scalar& v, TensorOptions o, std::optional<MemoryFormat>) {
  Tensor t = like(self, o);
  t.fill_(v);
  return finish(t, o);
}
Tensor rand_like(const Tensor& self, TensorOptions o, std::optional<MemoryFormat>) {
  return finish(ember::rand_like(self, o.dtype_opt()), o);
}
Tensor randn_like(const Tensor& self, TensorOptions o, std::optional<MemoryFormat>) {
  return finish(ember::randn_like(self, o.dtype_opt()), o);
}
Tensor randint_like(const Tensor& self, int64_t high, TensorOptions o) { return randint_like(self, 0, high, o); }
Tensor randint_like(const Tensor& self, int64_t low, int64_t high, TensorOptions o) {
  return finish(ember::randint_like(self, low, high, o.dtype_opt()), o);
}

namespace {
struct BlobDeleter {
  std::function<void(void*)> fn;
};
Tensor make_blob(void* data, IntArrayRef sizes, ember::Shape strides, std::function<void(void*)> deleter,
                 const TensorOptions& o) {
  device_of(o);
  ScalarType dt = dtype_of(o);
  // The storage spans up to the furthest element the strides reach.
  int64_t extent = 1;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK(sizes[i] >= 0, "from_blob: negative size ", sizes[i]);
    if (sizes[i] == 0) empty = true;
    extent += (sizes[i] - 1) * strides[i];
  }
  size_t nbytes = empty ? 0 : static_cast<size_t>(extent) * ember::element_size(dt);
  ember::DataPtr ptr;
  if (deleter)
    ptr = ember::DataPtr(data, new BlobDeleter{std::move(deleter)}, [](void* p, void* ctx) {
      auto* d = static_cast<BlobDeleter*>(ctx);
      d->fn(p);
      delete d;
    });
  else
    ptr = ember::DataPtr(data, nullptr, nullptr);
  auto storage =
      ember::IntrusivePtr<ember::StorageImpl>::make(std::move(ptr), nbytes, ember::Device(), /*resizable=*/false);
  return finish(Tensor(ember::Tensor(ember::IntrusivePtr<ember::TensorImpl>::make(std::move(storage), dt, sizes.vec(),
                                                                                  std::move(strides), 0))),
                o);
}
}  // namespace
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& o) {
  return make_blob(data, sizes, ember::contiguous_strides(to_ember(sizes)), nullptr, o);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& o) {
  EMBER_CHECK(sizes.size() == strides.size(), "from_blob: sizes and strides must have the same length");
  return make_blob(data, sizes, strides.vec(), nullptr, o);
}
Tensor from_blob(void* data, IntArrayRef sizes, const std::function<void(void*)>& deleter, const TensorOptions& o) {
  return make_blob(data, sizes, ember::contiguous_strides(to_ember(sizes)), deleter, o);
}
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const std::function<void(void*)>& deleter,
                 const TensorOptions& o) {
  EMBER_CHECK(sizes.size() == strides.size(), "from_blob: sizes and strides must have the same length");
  return make_blob(data, sizes, strides.vec(), deleter, o);
}

// ---- torch::tensor ----
namespace detail {

TensorDataContainer::TensorDataContainer() : kind_(Kind::List), type_(kFloat), sizes_{0} {}

TensorDataContainer::TensorDataContainer(std::initializer_list<TensorDataContainer> list)
    : kind_(Kind::List), list_(list) {
  if (list_.empty()) {
    type_ = kFloat;
    sizes_ = {0};
    return;
  }
  const TensorDataContainer& first = list_.front();
  type_ = first.type_;
  for (const TensorDataContainer& e : list_) {
    EMBER_CHECK(e.type_ == type_,
                "Expected all elements of the tensor to have the same scalar type: ", c10::toString(type_),
                ", but got element of scalar type: ", c10::toString(e.type_));
    if (e.sizes_ != first.sizes_) {
      std::ostringstream ss;
      first.pretty_print_recursive(ss);
      std::ostringstream se;
      e.pretty_print_recursive(se);
      throw ember::Error(ember::detail::str_cat("Expected all sub-lists to have sizes: ", IntArrayRef(first.sizes_),
                                                " (e.g. ", ss.str(), "), but got sub-list ", se.str(),
                                                " with sizes: ", IntArrayRef(e.sizes_)));
    }
  }
  sizes_ = {static_cast<int64_t>(list_.size())};
  sizes_.insert(sizes_.end(), first.sizes_.begin(), first.sizes_.end());
}

TensorDataContainer::TensorDataContainer(Tensor, size_t n, ScalarType type)
    : kind_(Kind::Tensor), type_(type), sizes_{static_cast<int64_t>(n)} {
  tensor_ = ember::empty({static_cast<int64_t>(n)}, type);
}

TensorDataContainer::TensorDataContainer(const std::vector<bool>& values)
    : TensorDataContainer(Tensor(), values.size(), kBool) {
  for (size_t i = 0; i < values.size(); ++i) set_element(i, c10::Scalar(static_cast<bool>(values[i])));
}

void TensorDataContainer::set_element(size_t i, const c10::Scalar& v) {
  ember::Tensor e = ember::select(tensor_, 0, static_cast<int64_t>(i));
  ember::fill_(e, v);
}

void TensorDataContainer::fill(const Tensor& flat, int64_t& pos) const {
  if (kind_ == Kind::Scalar) {
    ember::Tensor e = ember::select(flat, 0, pos++);
    ember::fill_(e, scalar_);
  } else if (kind_ == Kind::Tensor) {
    int64_t n = tensor_.numel();
    ember::Tensor dst = ember::slice(flat, 0, pos, pos + n);
    ember::copy_(dst, ember::reshape(tensor_, {n}));
    pos += n;
  } else {
    for (const TensorDataContainer& e : list_) e.fill(flat, pos);
  }
}

Tensor TensorDataContainer::convert_to_tensor(TensorOptions options) const {
  // Integer data gives int64 and floating data the default dtype, as torch.tensor.
  ScalarType natural = type_;
  if (natural == kInt || natural == kLong) natural = kLong;
  if (natural == kFloat || natural == kDouble) natural = ember::default_dtype();
  ScalarType dt = options.has_dtype() ? options.dtype().toScalarType() : natural;
  device_of(options);
  Tensor r;
  {
    ag::NoGradGuard no_grad;
    if (kind_ == Kind::Scalar) {
      r = ember::full({}, scalar_, dt);
    } else {
      int64_t n = ember::numel_of(sizes_);
      // Elements are written in their own type, then converted once (as libtorch does).
      Tensor flat = ember::empty({n}, kind_ == Kind::Tensor ? tensor_.scalar_type() : type_);
      int64_t pos = 0;
      fill(flat, pos);
      r = ember::to_dtype(ember::reshape(flat, sizes_), dt);
      if (r.is_same(flat) || r.impl()->storage().get() == flat.impl()->storage().get()) r = ember::clone(r);
    }
  }
  return finish(r, options);
}

void TensorDataContainer::pretty_print_recursive(std::ostream& os) const {
  if (kind_ == Kind::Scalar) {
    os << scalar_;
  } else if (kind_ == Kind::Tensor) {
    os << "{";
    for (int64_t i = 0; i < tensor_.numel(); ++i) os << (i ? ", " : "") << ember::item(ember::select(tensor_, 0, i));
    os << "}";
  } else {
    os << "{";
    for (size_t i = 0; i < list_.size(); ++i) {
      if (i) os << ", ";
      list_[i].pretty_print_recursive(os);
    }
    os << "}";
  }
}

std::ostream& operator<<(std::ostream& os, const TensorDataContainer& c) {
  c.pretty_print_recursive(os);
  return os;
}

}  // namespace detail

Tensor tensor(detail::TensorDataContainer data, const TensorOptions& options) {
  return data.convert_to_tensor(options);
}

// ---- pointwise ----

// clang-format off
#define EMBER_FE_UNARY_ENUMS(X) \
  X(abs, Abs) X(exp, Exp) X(exp2, Exp2) X(expm1, Expm1) X(log, Log) X(log2, Log2) X(log10, Log10) X(log1p, Log1p) \
  X(sqrt, Sqrt) X(rsqrt, Rsqrt) X(square, Square) X(sin, Sin) X(cos, Cos) X(tan, Tan) X(asin, Asin) X(acos, Acos) \
  X(atan, Atan) X(sinh, Sinh) X(cosh, Cosh) X(tanh, Tanh) X(asinh, Asinh) X(acosh, Acosh) X(atanh, Atanh) X(sigmoid, Sigmoid) \
  X(erf, Erf) X(erfc, Erfc) X(erfinv, Erfinv) X(lgamma, Lgamma) X(digamma, Digamma) X(floor, Floor) X(ceil, Ceil) X(trunc, Trunc) \
  X(frac, Frac) X(reciprocal, Reciprocal) X(sign, Sign) X(sgn, Sgn) X(relu, Relu) X(logical_not, LogicalNot) X(bitwise_not, BitwiseNot) X(signbit, Signbit)
// clang-format on
#define EMBER_FE_DEFINE_UNARY_FN(fn, E)                     \
  Tensor fn(const Tensor& self) { return ember::fn(self); } \
  Tensor& fn##_(Tensor& self) {                             \
    ember::unary_op(ember::UnaryOp::E, self, self, true);   \
    return self;                                            \
  }
EMBER_FE_UNARY_ENUMS(EMBER_FE_DEFINE_UNARY_FN)
#undef EMBER_FE_DEFINE_UNARY_FN
#undef EMBER_FE_UNARY_ENUMS

Tensor neg(const Tensor& self) { return ember::neg(self); }
Tensor round(const Tensor& self, int64_t decimals) { return ember::round(self, decimals); }
Tensor isnan(const Tensor& self) { return ember::isnan(self); }
Tensor isinf(const Tensor& self) { return ember::isinf(self); }
Tensor isfinite(const Tensor& self) { return ember::isfinite(self); }
Tensor logit(const Tensor& self, std::optional<double> eps) { return ember::logit(self, eps); }
Tensor nan_to_num(const Tensor& self, std::optional<double> n, std::optional<double> p, std::optional<double> m) {
  return ember::nan_to_num(self, n, p, m);
}
Tensor add(const Tensor& a, const Tensor& b, const c10::Scalar& alpha) { return ember::add(a, b, alpha); }
Tensor add(const Tensor& a, const c10::Scalar& b, const c10::Scalar& alpha) { return a.add(b, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, const c10::Scalar& alpha) { return ember::sub(a, b, alpha); }
Tensor sub(const Tensor& a, const c10::Scalar& b, const c10::Scalar& alpha) { return a.sub(b, alpha); }
Tensor rsub(const Tensor& a, const Tensor& b, const c10::Scalar& alpha) { return ember::sub(b, a, alpha); }
Tensor rsub(const Tensor& a, const c10::Scalar& b, const c10::Scalar& alpha) { return ember::sub(wrap(b), a, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return ember::mul(a, b); }
Tensor mul(const Tensor& a, const c10::Scalar& b) { return a.mul(b); }
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
  if (!mode) return ember::div(a, b);
  EMBER_CHECK(*mode == "trunc" || *mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
  return ember::div(a, b, std::string(*mode));
}
Tensor div(const Tensor& a, const c10::Scalar& b, std::optional<std::string_view> mode) {
  return mode ? div(a, Tensor(wrap(b)), mode) : a.div(b);
}
Tensor true_divide(const Tensor& a, const Tensor& b) { return ember::div(a, b); }
Tensor floor_divide(const Tensor& a, const Tensor& b) { return ember::floor_divide(a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) { return ember::remainder(a, b); }
Tensor remainder(const Tensor& a, const c10::Scalar& b) { return ember::remainder(a, wrap(b)); }
Tensor fmod(const Tensor& a, const Tensor& b) { return ember::fmod(a, b); }
Tensor fmod(const Tensor& a, const c10::Scalar& b) { return ember::fmod(a, wrap(b)); }
Tensor pow(const Tensor& a, const Tensor& e) { return ember::pow(a, e); }
Tensor pow(const Tensor& a, const c10::Scalar& e) { return ember::pow(a, wrap(e)); }
Tensor pow(const c10::Scalar& a, const Tensor& e) { return ember::pow(wrap(a), e); }
Tensor maximum(const Tensor& a, const Tensor& b) { return ember::maximum(a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return ember::minimum(a, b); }
Tensor fmax(const Tensor& a, const Tensor& b) { return ember::fmax(a, b); }
Tensor fmin(const Tensor& a, const Tensor& b) { return ember::fmin(a, b); }
Tensor atan2(const Tensor& a, const Tensor& b) { return ember::atan2(a, b); }
Tensor hypot(const Tensor& a, const Tensor& b) { return ember::hypot(a, b); }
Tensor copysign(const Tensor& a, const Tensor& b) { return ember::copysign(a, b); }
Tensor lerp(const Tensor& a, const Tensor& end, const c10::Scalar& w) { return ember::lerp(a, end, wrap(w)); }
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& w) { return ember::lerp(a, end, w); }
Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2, const c10::Scalar& v) {
  return ember::addcmul(a, t1, t2, v);
}
Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2, const c10::Scalar& v) {
  return ember::addcdiv(a, t1, t2, v);
}
Tensor clamp(const Tensor& a, const std::optional<c10::Scalar>& min, const std::optional<c10::Scalar>& max) {
  EMBER_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  std::optional<ember::Scalar> lo, hi;
  if (min) lo = *min;
  if (max) hi = *max;
  return ember::clamp(a, lo, hi);
}
Tensor clamp(const Tensor& a, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  EMBER_CHECK((min && min->defined()) || (max && max->defined()),
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  return ember::clamp(a, opt(min), opt(max));
}
Tensor clamp_min(const Tensor& a, const c10::Scalar& min) { return clamp(a, min, std::nullopt); }
Tensor clamp_max(const Tensor& a, const c10::Scalar& max) { return clamp(a, std::nullopt, max); }
Tensor clip(const Tensor& a, const std::optional<c10::Scalar>& min, const std::optional<c10::Scalar>& max) {
  return clamp(a, min, max);
}
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return ember::where(c, a, b); }
Tensor where(const Tensor& c, const c10::Scalar& a, const Tensor& b) { return ember::where(c, wrap(a), b); }
Tensor where(const Tensor& c, const Tensor& a, const c10::Scalar& b) { return ember::where(c, a, wrap(b)); }
Tensor where(const Tensor& c, const c10::Scalar& a, const c10::Scalar& b) { return ember::where(c, wrap(a), wrap(b)); }
std::vector<Tensor> where(const Tensor& c) { return at_list(ember::unbind(ember::nonzero(c), 1)); }
#define EMBER_FE_DEFINE_CMP_FN(fn)                                        \
  Tensor fn(const Tensor& a, const Tensor& b) { return ember::fn(a, b); } \
  Tensor fn(const Tensor& a, const c10::Scalar& b) { return ember::fn(a, wrap(b)); }
EMBER_FE_DEFINE_CMP_FN(eq)
EMBER_FE_DEFINE_CMP_FN(ne)
EMBER_FE_DEFINE_CMP_FN(lt)
EMBER_FE_DEFINE_CMP_FN(le)
EMBER_FE_DEFINE_CMP_FN(gt)
EMBER_FE_DEFINE_CMP_FN(ge)
#undef EMBER_FE_DEFINE_CMP_FN
Tensor logical_and(const Tensor& a, const Tensor& b) { return ember::logical_and(a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return ember::logical_or(a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return ember::logical_xor(a, b); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return ember::bitwise_and(a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return ember::bitwise_or(a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return ember::bitwise_xor(a, b); }
bool equal(const Tensor& a, const Tensor& b) { return ember::equal(a, b); }
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return ember::allclose(a, b, rtol, atol, equal_nan);
}
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return ember::isclose(a, b, rtol, atol, equal_nan);
}

// ---- activations ----

Tensor relu6(const Tensor& x) { return ember::relu6(x); }
Tensor leaky_relu(const Tensor& x, const c10::Scalar& slope) { return ember::leaky_relu(x, slope.to_double()); }
Tensor& leaky_relu_(Tensor& x, const c10::Scalar& slope) {
  ember::UnaryParams p;
  p.p0 = slope.to_double();
  ember::unary_op(ember::UnaryOp::LeakyRelu, x, x, true, p);
  return x;
}
Tensor elu(const Tensor& x, const c10::Scalar& alpha, const c10::Scalar& scale, const c10::Scalar& input_scale) {
  return ember::elu(x, alpha.to_double(), scale.to_double(), input_scale.to_double());
}
Tensor selu(const Tensor& x) { return ember::selu(x); }
Tensor celu(const Tensor& x, const c10::Scalar& alpha) { return ember::celu(x, alpha.to_double()); }
Tensor gelu(const Tensor& x, std::string_view approximate) { return ember::gelu(x, std::string(approximate)); }
Tensor silu(const Tensor& x) { return ember::silu(x); }
Tensor mish(const Tensor& x) { return ember::mish(x); }
Tensor softplus(const Tensor& x, const c10::Scalar& beta, const c10::Scalar& threshold) {
  return ember::softplus(x, beta.to_double(), threshold.to_double());
}
Tensor hardtanh(const Tensor& x, const c10::Scalar& lo, const c10::Scalar& hi) {
  return ember::hardtanh(x, lo.to_double(), hi.to_double());
}
Tensor hardsigmoid(const Tensor& x) { return ember::hardsigmoid(x); }
Tensor hardswish(const Tensor& x) { return ember::hardswish(x); }
Tensor log_sigmoid(const Tensor& x) { return ember::logsigmoid(x); }
Tensor threshold(const Tensor& x, const c10::Scalar& th, const c10::Scalar& v) {
  return ember::threshold(x, th.to_double(), v.to_double());
}
Tensor prelu(const Tensor& x, const Tensor& weight) {
  // max(0, x) + weight * min(0, x), weight broadcast over dim 1 (channels).
  Tensor w = weight;
  if (weight.numel() != 1 && x.dim() >= 2) {
    std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
    shape[1] = weight.numel();
    w = weight.reshape(shape);
  }
  return at::relu(x) + w * at::clamp(x, std::nullopt, 0);
}
Tensor glu(const Tensor& x, int64_t dim) {
  int64_t d = ember::wrap_dim(dim, x.dim());
  EMBER_CHECK(x.size(d) % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", x.size(d));
  auto halves = ember::chunk(x, 2, d);
  return ember::mul(halves[0], ember::sigmoid(halves[1]));
}
Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dt) { return ember::softmax(x, dim, dt); }
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dt) {
  return ember::log_softmax(x, dim, dt);
}

// ---- shape ----

Tensor reshape(const Tensor& x, IntArrayRef shape) { return x.reshape(shape); }
Tensor flatten(const Tensor& x, int64_t s, int64_t e) { return x.flatten(s, e); }
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes) { return x.unflatten(dim, sizes); }
Tensor squeeze(const Tensor& x) { return x.squeeze(); }
Tensor squeeze(const Tensor& x, int64_t dim) { return x.squeeze(dim); }
Tensor unsqueeze(const Tensor& x, int64_t dim) { return x.unsqueeze(dim); }
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) { return x.transpose(d0, d1); }
Tensor t(const Tensor& x) { return x.t(); }
Tensor permute(const Tensor& x, IntArrayRef dims) { return x.permute(dims); }
Tensor movedim(const Tensor& x, int64_t s, int64_t d) { return x.movedim(s, d); }
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) { return x.narrow(dim, start, length); }
Tensor select(const Tensor& x, int64_t dim, int64_t index) { return x.select(dim, index); }
Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  return x.slice(dim, start, end, step);
}
Tensor expand(const Tensor& x, IntArrayRef size) { return x.expand(size); }
Tensor broadcast_to(const Tensor& x, IntArrayRef size) { return x.expand(size); }
std::vector<Tensor> broadcast_tensors(TensorList ts) { return at_list(ember::broadcast_tensors(ember_list(ts))); }
Tensor cat(TensorList ts, int64_t dim) { return ember::cat(ember_list(ts), dim); }
Tensor concat(TensorList ts, int64_t dim) { return cat(ts, dim); }
Tensor concatenate(TensorList ts, int64_t dim) { return cat(ts, dim); }
Tensor stack(TensorList ts, int64_t dim) { return ember::stack(ember_list(ts), dim); }
Tensor hstack(TensorList ts) { return ember::hstack(ember_list(ts)); }
Tensor vstack(TensorList ts) { return ember::vstack(ember_list(ts)); }
Tensor dstack(TensorList ts) { return ember::dstack(ember_list(ts)); }
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) { return x.chunk(chunks, dim); }
std::vector<Tensor> split(const Tensor& x, int64_t size, int64_t dim) { return x.split(size, dim); }
std::vector<Tensor> split(const Tensor& x, IntArrayRef sizes, int64_t dim) { return x.split(sizes, dim); }
std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef sizes, int64_t dim) { return x.split(sizes, dim); }
std::vector<Tensor> unbind(const Tensor& x, int64_t dim) { return x.unbind(dim); }
std::vector<Tensor> meshgrid(TensorList ts, std::string_view indexing) {
  return at_list(ember::meshgrid(ember_list(ts), std::string(indexing)));
}
Tensor flip(const Tensor& x, IntArrayRef dims) { return x.flip(dims); }
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty()) {  // roll the flattened tensor, then restore the shape
    EMBER_CHECK(shifts.size() == 1, "roll: shifts must have one element when no dims are given");
    return ember::reshape(ember::roll(ember::flatten(x), to_ember(shifts), {0}), to_ember(x.sizes()));
  }
  return ember::roll(x, to_ember(shifts), to_ember(dims));
}
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  return ember::repeat_interleave(x, ember::scalar_tensor(ember::Scalar(repeats), kLong), dim);
}
Tensor tril(const Tensor& x, int64_t d) { return x.tril(d); }
Tensor triu(const Tensor& x, int64_t d) { return x.triu(d); }
Tensor diag(const Tensor& x, int64_t d) { return x.diag(d); }
Tensor diagonal(const Tensor& x, int64_t o, int64_t d1, int64_t d2) { return x.diagonal(o, d1, d2); }
Tensor diag_embed(const Tensor& x, int64_t o, int64_t d1, int64_t d2) { return ember::diag_embed(x, o, d1, d2); }
Tensor trace(const Tensor& x) { return x.trace(); }
Tensor clone(const Tensor& x, std::optional<MemoryFormat> f) { return x.clone(f); }
Tensor contiguous(const Tensor& x) { return x.contiguous(); }
Tensor detach(const Tensor& x) { return x.detach(); }

// ---- indexing ----

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) { return x.index_select(dim, index); }
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, bool) { return x.gather(dim, index); }
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return x.scatter(dim, index, src);
}
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const c10::Scalar& value) {
  ember::Tensor src = ember::expand(ember::full({}, value, x.scalar_type()), to_ember(index.sizes()));
  return ember::scatter(x, dim, index, src);
}
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return x.scatter_add(dim, index, src);
}
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const c10::Scalar& alpha) {
  return x.index_add(dim, index, src, alpha);
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, const c10::Scalar& v) { return x.masked_fill(mask, v); }
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& v) { return x.masked_fill(mask, v); }
Tensor masked_select(const Tensor& x, const Tensor& mask) { return x.masked_select(mask); }
Tensor nonzero(const Tensor& x) { return x.nonzero(); }
Tensor argwhere(const Tensor& x) { return x.nonzero(); }
Tensor take(const Tensor& x, const Tensor& index) { return x.take(index); }
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  return ember::take_along_dim(x, indices, dim);
}
Tensor searchsorted(const Tensor& seq, const Tensor& x, bool out_int32, bool right) {
  return ember::searchsorted(seq, x, out_int32, right);
}
Tensor bucketize(const Tensor& x, const Tensor& b, bool out_int32, bool right) {
  return ember::bucketize(x, b, out_int32, right);
}
Tensor one_hot(const Tensor& x, int64_t num_classes) {
  EMBER_CHECK(x.scalar_type() == kLong, "one_hot is only applicable to index tensor of type LongTensor.");
  std::vector<int64_t> shape = x.sizes().vec();
  if (x.numel() == 0) {
    EMBER_CHECK(num_classes != -1, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return ember::zeros(shape, kLong);
  }
  EMBER_CHECK(x.min().item<int64_t>() >= 0, "Class values must be non-negative.");
  int64_t mx = x.max().item<int64_t>();
  if (num_classes == -1)
    num_classes = mx + 1;
  else
    EMBER_CHECK(mx < num_classes, "Class values must be smaller than num_classes.");
  shape.push_back(num_classes);
  Tensor r = ember::zeros(shape, kLong);
  return r.scatter(-1, x.unsqueeze(-1), 1);
}

// ---- reductions ----

Tensor sum(const Tensor& x, std::optional<ScalarType> dt) { return x.sum(dt); }
Tensor sum(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dt) {
  return x.sum(dim, keepdim, dt);
}
Tensor mean(const Tensor& x, std::optional<ScalarType> dt) { return x.mean(dt); }
Tensor mean(const Tensor& x, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dt) {
  return x.mean(dim, keepdim, dt);
}
Tensor prod(const Tensor& x, std::optional<ScalarType> dt) { return x.prod(dt); }
Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<ScalarType> dt) {
  return x.prod(dim, keepdim, dt);
}
Tensor max(const Tensor& x) { return x.max(); }
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) { return x.max(dim, keepdim); }
Tensor max(const Tensor& x, const Tensor& o) { return x.maximum(o); }
Tensor min(const Tensor& x) { return x.min(); }
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) { return x.min(dim, keepdim); }
Tensor min(const Tensor& x, const Tensor& o) { return x.minimum(o); }
Tensor amax(const Tensor& x, IntArrayRef dim, bool keepdim) { return x.amax(dim, keepdim); }
Tensor amin(const Tensor& x, IntArrayRef dim, bool keepdim) { return x.amin(dim, keepdim); }
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return x.argmax(dim, keepdim); }
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return x.argmin(dim, keepdim); }
Tensor all(const Tensor& x) { return x.all(); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) { return x.all(dim, keepdim); }
Tensor any(const Tensor& x) { return x.any(); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) { return x.any(dim, keepdim); }
Tensor std(const Tensor& x, bool unbiased) { return x.std(unbiased); }
Tensor std(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) { return x.std(dim, unbiased, keepdim); }
Tensor var(const Tensor& x, bool unbiased) { return x.var(unbiased); }
Tensor var(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) { return x.var(dim, unbiased, keepdim); }
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  auto [s, m] = ember::std_mean(x, dims_of(dim), unbiased ? 1 : 0, keepdim);
  return {s, m};
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, IntArrayRef dim, bool unbiased, bool keepdim) {
  auto [v, m] = ember::var_mean(x, dims_of(dim), unbiased ? 1 : 0, keepdim);
  return {v, m};
}
Tensor norm(const Tensor& x, const c10::Scalar& p) { return ember::norm(x, p.to_double()); }
Tensor norm(const Tensor& x, const std::optional<c10::Scalar>& p, IntArrayRef dim, bool keepdim) {
  return ember::norm(x, p ? p->to_double() : 2.0, dims_of(dim), keepdim);
}
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim) { return x.logsumexp(dim, keepdim); }
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dt) { return x.cumsum(dim, dt); }
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dt) { return x.cumprod(dim, dt); }
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  auto [v, i] = ember::sort(x, dim, descending);
  return {v, i};
}
Tensor argsort(const Tensor& x, int64_t dim, bool descending) { return x.argsort(dim, descending); }
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  auto [v, i] = ember::topk(x, k, dim, largest, sorted);
  return {v, i};
}
Tensor median(const Tensor& x) { return x.median(); }
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  auto [v, i] = ember::median(x, dim, keepdim);
  return {v, i};
}
Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim) {
  return ember::count_nonzero(x, dim ? ember::OptDims(std::vector<int64_t>{*dim}) : ember::OptDims());
}
Tensor bincount(const Tensor& x, const std::optional<Tensor>& w, int64_t minlength) {
  return ember::bincount(x, opt(w), minlength);
}
Tensor histc(const Tensor& x, int64_t bins, const c10::Scalar& min, const c10::Scalar& max) {
  return ember::histc(x, bins, min.to_double(), max.to_double());
}

// ---- linear algebra ----

Tensor matmul(const Tensor& a, const Tensor& b) { return ember::matmul(a, b); }
Tensor mm(const Tensor& a, const Tensor& b) { return ember::mm(a, b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return ember::bmm(a, b); }
Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  ember::mm_out(out, a, b);
  return out;
}
Tensor& bmm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  ember::bmm_out(out, a, b);
  return out;
}
Tensor mv(const Tensor& a, const Tensor& v) { return ember::mv(a, v); }
Tensor dot(const Tensor& a, const Tensor& b) { return ember::dot(a, b); }
Tensor outer(const Tensor& a, const Tensor& b) { return ember::outer(a, b); }
Tensor ger(const Tensor& a, const Tensor& b) { return ember::outer(a, b); }
Tensor addmm(const Tensor& s, const Tensor& m1, const Tensor& m2, const c10::Scalar& beta, const c10::Scalar& alpha) {
  return ember::addmm(s, m1, m2, beta, alpha);
}
Tensor baddbmm(const Tensor& s, const Tensor& b1, const Tensor& b2, const c10::Scalar& beta, const c10::Scalar& alpha) {
  return ember::baddbmm(s, b1, b2, beta, alpha);
}
Tensor einsum(std::string_view eq, TensorList ts, std::optional<IntArrayRef>) {
  return ember::einsum(std::string(eq), ember_list(ts));
}
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef da, IntArrayRef db) {
  return ember::tensordot(a, b, to_ember(da), to_ember(db));
}
Tensor kron(const Tensor& a, const Tensor& b) { return ember::kron(a, b); }
Tensor inverse(const Tensor& a) { return ember::linalg_inv(a); }
Tensor det(const Tensor& a) { return ember::linalg_det(a); }
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  if (!dim) {  // the first dim of size 3, as torch.cross without dim
    for (int64_t d = 0; d < a.dim(); ++d)
      if (a.size(d) == 3) {
        dim = d;
        break;
      }
    EMBER_CHECK(dim.has_value(), "no dimension of size 3 in input");
  }
  return ember::linalg_cross(a, b, *dim);
}

// ---- grad mode ----

InferenceMode::InferenceMode(bool enabled)
    : prev_inference_(ag::InferenceMode::is_enabled()), prev_grad_(ag::GradMode::is_enabled()) {
  ag::InferenceMode::set_enabled(enabled);
  if (enabled) ag::GradMode::set_enabled(false);
}
InferenceMode::~InferenceMode() {
  ag::InferenceMode::set_enabled(prev_inference_);
  ag::GradMode::set_enabled(prev_grad_);
}
bool InferenceMode::is_enabled() { return ag::InferenceMode::is_enabled(); }

}  // namespace at
