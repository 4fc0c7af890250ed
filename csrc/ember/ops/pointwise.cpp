// Binary and ternary pointwise ops beyond arithmetic (binary.cpp): atan2, maximum/minimum,
// fmax/fmin, hypot, copysign, fmod, logical and bitwise ops, shifts; lerp, addcmul, addcdiv,
// clamp with tensor bounds, where; isclose/allclose/equal.
#include <cmath>
#include <limits>

#include "ember/autograd/functions.h"
#include "ember/core/checked_math.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/pointwise_kernels.h"
#include "ember/ops/complex.h"
#include "ember/ops/elementwise.h"

namespace ember {
namespace {

using autograd::LambdaBackward;
using autograd::SavedVariable;
using autograd::TensorList;
using ew::num;

enum class Kind : uint8_t {
  FloatValued,  // ints and bool compute in the default float dtype
  FloatOnly,    // floating types only
  Numeric,      // ints and floats
  All,          // every real dtype
  Logical,      // any dtypes in, bool out
  Integral,     // bool and ints
  IntegerOnly,  // ints (shifts)
};

struct Info {
  const char* name;
  Kind kind;
  const char* node;  // backward node name; null: not differentiable
};

Info info(PointwiseOp op) {
  using K = Kind;
  switch (op) {
    // clang-format off
    case PointwiseOp::Atan2:      return {"atan2", K::FloatValued, "Atan2Backward0"};
    case PointwiseOp::Maximum:    return {"maximum", K::All, "MaximumBackward0"};
    case PointwiseOp::Minimum:    return {"minimum", K::All, "MinimumBackward0"};
    case PointwiseOp::Fmax:       return {"fmax", K::All, "FmaxBackward0"};
    case PointwiseOp::Fmin:       return {"fmin", K::All, "FminBackward0"};
    case PointwiseOp::Hypot:      return {"hypot", K::FloatOnly, "HypotBackward0"};
    case PointwiseOp::Copysign:   return {"copysign", K::FloatValued, "CopysignBackward0"};
    case PointwiseOp::Fmod:       return {"fmod", K::Numeric, "FmodBackward0"};
    case PointwiseOp::LogicalAnd: return {"logical_and", K::Logical, nullptr};
    case PointwiseOp::LogicalOr:  return {"logical_or", K::Logical, nullptr};
    case PointwiseOp::LogicalXor: return {"logical_xor", K::Logical, nullptr};
    case PointwiseOp::BitwiseAnd: return {"bitwise_and", K::Integral, nullptr};
    case PointwiseOp::BitwiseOr:  return {"bitwise_or", K::Integral, nullptr};
    case PointwiseOp::BitwiseXor: return {"bitwise_xor", K::Integral, nullptr};
    case PointwiseOp::LeftShift:  return {"bitwise_left_shift", K::IntegerOnly, nullptr};
    case PointwiseOp::RightShift: return {"bitwise_right_shift", K::IntegerOnly, nullptr};
    case PointwiseOp::GeluBackward:     return {"gelu_backward", K::FloatOnly, nullptr};
    case PointwiseOp::GeluTanhBackward: return {"gelu_backward", K::FloatOnly, nullptr};
    case PointwiseOp::ReluBackward:     return {"threshold_backward", K::Numeric, nullptr};
    case PointwiseOp::SigmoidBackward:  return {"sigmoid_backward", K::FloatOnly, nullptr};
    case PointwiseOp::TanhBackward:     return {"tanh_backward", K::FloatOnly, nullptr};
    case PointwiseOp::LeakyReluBackward: return {"leaky_relu_backward", K::FloatOnly, nullptr};
    case PointwiseOp::HardtanhBackward: return {"hardtanh_backward", K::FloatOnly, nullptr};
    case PointwiseOp::SiluBackward:     return {"silu_backward", K::FloatOnly, nullptr};
    case PointwiseOp::HardswishBackward: return {"hardswish_backward", K::FloatOnly, nullptr};
    case PointwiseOp::SoftplusBackward: return {"softplus_backward", K::FloatOnly, nullptr};
    case PointwiseOp::EluBackward:      return {"elu_backward", K::FloatOnly, nullptr};
    case PointwiseOp::LogsigmoidBackward: return {"log_sigmoid_backward", K::FloatOnly, nullptr};
    case PointwiseOp::SmoothL1:         return {"smooth_l1_loss", K::FloatOnly, nullptr};
    case PointwiseOp::Huber:            return {"huber_loss", K::FloatOnly, nullptr};
    case PointwiseOp::SmoothL1Backward: return {"smooth_l1_loss_backward", K::FloatOnly, nullptr};
    case PointwiseOp::HuberBackward:    return {"huber_loss_backward", K::FloatOnly, nullptr};
      // clang-format on
  }
  return {"?", Kind::All, nullptr};
}

[[noreturn]] void not_implemented(const char* name, ScalarType t) {
  EMBER_NOT_IMPLEMENTED("\"", name, "\" not implemented for '", dtype_name(t), "'");
}

bool any_zero(const Tensor& t) {
  Tensor c = contiguous(t);
  return EMBER_DISPATCH_ALL(c.dtype(), "check", [&]() -> bool {
    const scalar_t* p = c.data<scalar_t>();
    for (int64_t i = 0; i < c.numel(); ++i)
      if (static_cast<opmath_t<scalar_t>>(p[i]) == 0) return true;
    return false;
  });
}

ScalarType binary_compute_dtype(const Info& inf, ScalarType common) {
  if (is_complex(common)) {
    if (inf.kind == Kind::Logical) return ScalarType::Bool;  // on z != 0
    if (inf.kind == Kind::All)  // maximum, minimum, fmax, fmin: no order on complex numbers
      throw Error(detail::str_cat(inf.name, " not implemented for complex tensors."));
    not_implemented(inf.name, common);
  }
  switch (inf.kind) {
    case Kind::FloatValued:
      return is_floating_point(common) ? common : default_dtype();
    case Kind::FloatOnly:
      if (!is_floating_point(common)) not_implemented(inf.name, common);
      return common;
    case Kind::Numeric:
      if (common == ScalarType::Bool) not_implemented(inf.name, common);
      return common;
    case Kind::Integral:
      if (!is_integral(common, true)) not_implemented(inf.name, common);
      return common;
    case Kind::IntegerOnly:
      if (!is_integral(common, false)) not_implemented(inf.name, common);
      return common;
    case Kind::All:
    case Kind::Logical:
      return common;
  }
  return common;
}

Tensor pointwise_raw(PointwiseOp op, const Info& inf, const Tensor& a, const Tensor& b, Tensor out, bool inplace,
                     double p0 = 0.0, double p1 = 0.0, double p2 = 0.0) {
  // Shapes before dtypes, as torch's iterator: a size mismatch outranks a dtype without a kernel.
  if (!(a.sizes() == b.sizes())) broadcast_shapes(a.sizes(), b.sizes());
  ScalarType compute = binary_compute_dtype(inf, result_type(a, b));
  ScalarType result = inf.kind == Kind::Logical ? ScalarType::Bool : compute;
  auto nonzero = [](const Tensor& t) { return ne(t, scalar_tensor(Scalar(0), std::nullopt, /*wrapped=*/true)); };
  bool complex_logical = inf.kind == Kind::Logical && (is_complex(a.dtype()) || is_complex(b.dtype()));
  Tensor ca = complex_logical ? nonzero(a) : to_dtype(a, compute),
         cb = complex_logical ? nonzero(b) : to_dtype(b, compute);
  if (op == PointwiseOp::Fmod && is_integral(compute, false) && cb.numel() > 0 && any_zero(cb))
    throw Error("ZeroDivisionError");
  // The iterator sees the converted copies; the written-to tensor must not overlap the originals.
  if (out.defined() && (!ca.is_same(a) || !cb.is_same(b))) check_elementwise_overlap(out, {&a, &b});
  return ew::run(inf.name, {ca, cb}, result, std::move(out), inplace,
                 [&](const TensorIter& it) { cpu::pointwise_binary_kernel(op, it, compute, inf.name, p0, p1, p2); });
}

// Gradient g reduced to the shape and dtype of the input `like` (undoes broadcasting).
Tensor reduce_to(const Tensor& g, const Tensor& like) {
  Tensor r = autograd::sum_to(g, like.sizes());
  if (is_complex(r.dtype()) && !is_complex(like.dtype())) r = real(r);  // a real input's gradient: the real part
  return r.dtype() == like.dtype() ? r : to_dtype(r, like.dtype());
}

// Gradients of (a, b) for the differentiable binary ops; y is the result.
TensorList binary_derivative(PointwiseOp op, const Tensor& g, const Tensor& a, const Tensor& b, const Tensor& y) {
  Tensor ga, gb;
  switch (op) {
    case PointwiseOp::Atan2: {
      Tensor denom = add(mul(a, a), mul(b, b));
      ga = mul(g, div(b, denom)), gb = mul(g, div(neg(a), denom));
      break;
    }
    case PointwiseOp::Maximum:
    case PointwiseOp::Minimum: {  // ties split the gradient evenly
      Tensor wins = op == PointwiseOp::Maximum ? gt(a, b) : lt(a, b);
      Tensor wa = add(mul(wins, num(1.0)), mul(eq(a, b), num(0.5)));
      Tensor wb = add(mul(op == PointwiseOp::Maximum ? lt(a, b) : gt(a, b), num(1.0)), mul(eq(a, b), num(0.5)));
      ga = mul(g, wa), gb = mul(g, wb);
      break;
    }
    case PointwiseOp::Fmax:
    case PointwiseOp::Fmin: {  // the gradient goes to the operand that was taken
      Tensor takes_a = logical_or(op == PointwiseOp::Fmax ? ge(a, b) : le(a, b), isnan(b));
      ga = mul(g, takes_a), gb = mul(g, logical_not(takes_a));
      break;
    }
    case PointwiseOp::Hypot:
      ga = mul(g, div(a, y)), gb = mul(g, div(b, y));
      break;
    case PointwiseOp::Copysign: {  // +-1 where a != 0; b gets none
      Tensor ratio = where(eq(a, num(0)), num(0), div(y, a));
      ga = mul(g, ratio), gb = mul(g, num(0));
      break;
    }
    case PointwiseOp::Fmod:
      ga = g, gb = mul(neg(g), trunc(div(a, b)));
      break;
    default:
      EMBER_NOT_IMPLEMENTED("derivative for ", info(op).name, " is not implemented");
  }
  return {reduce_to(ga, a), reduce_to(gb, b)};
}

// ---- ternary ops ----

// Shared by the ternary ops: out=/in-place handling and the in-place autograd path around
// `raw(out, inplace)`, and recording via `record(result)` when an input requires grad.
template <typename Raw, typename Record>
Tensor ternary_driver(const char* name, const Tensor& self, std::initializer_list<const Tensor*> inputs, Tensor out,
                      bool inplace, const Raw& raw, const Record& record,
                      const std::function<Tensor(const Tensor&)>& redo) {
  if (inplace && self.impl()->view_made_no_grad) autograd::check_no_grad_view_inplace(self, inputs);
  bool grad = autograd::needs_history(inputs);
  if (!grad) return raw(std::move(out), inplace);
  if (inplace) return ew::inplace_with_grad(self, redo, inputs);
  ew::check_no_out_grad(name, out, inputs);
  Tensor r = raw(Tensor(), false);
  record(r);
  return r;
}

}  // namespace

const char* pointwise_op_name(PointwiseOp op) { return info(op).name; }

Tensor pointwise_op(PointwiseOp op, const Tensor& a, const Tensor& b, Tensor out, bool inplace) {
  const Info inf = info(op);
  if (inplace && a.impl()->view_made_no_grad) autograd::check_no_grad_view_inplace(a, {&b});
  if (inf.node && autograd::needs_history({&a, &b})) {
    if (inplace) return ew::inplace_with_grad(a, [&](const Tensor& prev) { return pointwise_op(op, prev, b); }, {&b});
    ew::check_no_out_grad(inf.name, out, {&a, &b});
    Tensor y = pointwise_raw(op, inf, a, b, Tensor(), false);
    if (auto n = autograd::make_node<LambdaBackward>(a, b)) {
      n->name_ = inf.node;
      autograd::set_history(y, n);
      n->saved = {SavedVariable(a, false), SavedVariable(b, false),
                  op == PointwiseOp::Hypot || op == PointwiseOp::Copysign ? SavedVariable(y, true) : SavedVariable()};
      n->fn = [op](const TensorList& g, const TensorList& s) { return binary_derivative(op, g[0], s[0], s[1], s[2]); };
    }
    return y;
  }
  return pointwise_raw(op, inf, a, b, std::move(out), inplace);
}

Tensor pointwise_op_p(PointwiseOp op, const Tensor& a, const Tensor& b, double p0, double p1, double p2) {
  return pointwise_raw(op, info(op), a, b, Tensor(), false, p0, p1, p2);
}

#define EMBER_DEFINE_POINTWISE(fn, E) \
  Tensor fn(const Tensor& a, const Tensor& b) { return pointwise_op(PointwiseOp::E, a, b); }
EMBER_DEFINE_POINTWISE(atan2, Atan2)
EMBER_DEFINE_POINTWISE(maximum, Maximum)
EMBER_DEFINE_POINTWISE(minimum, Minimum)
EMBER_DEFINE_POINTWISE(fmax, Fmax)
EMBER_DEFINE_POINTWISE(fmin, Fmin)
EMBER_DEFINE_POINTWISE(hypot, Hypot)
EMBER_DEFINE_POINTWISE(copysign, Copysign)
EMBER_DEFINE_POINTWISE(fmod, Fmod)
EMBER_DEFINE_POINTWISE(logical_and, LogicalAnd)
EMBER_DEFINE_POINTWISE(logical_or, LogicalOr)
EMBER_DEFINE_POINTWISE(logical_xor, LogicalXor)
EMBER_DEFINE_POINTWISE(bitwise_and, BitwiseAnd)
EMBER_DEFINE_POINTWISE(bitwise_or, BitwiseOr)
EMBER_DEFINE_POINTWISE(bitwise_xor, BitwiseXor)
EMBER_DEFINE_POINTWISE(bitwise_left_shift, LeftShift)
EMBER_DEFINE_POINTWISE(bitwise_right_shift, RightShift)
#undef EMBER_DEFINE_POINTWISE

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight, Tensor out, bool inplace) {
  EMBER_CHECK(self.dtype() == end.dtype(), "expected dtype ", dtype_name(self.dtype()), " for `end` but got dtype ",
              dtype_name(end.dtype()));
  ScalarType dt = self.dtype();
  EMBER_CHECK(weight.dim() == 0 || weight.dtype() == dt, "expected dtype ", dtype_name(dt),
              " for `weight` but got dtype ", dtype_name(weight.dtype()));
  if (!is_floating_point(dt) && !is_complex(dt)) not_implemented("lerp", dt);
  auto raw = [&](Tensor o, bool ip) {
    Tensor w = to_dtype(weight, dt);
    return ew::run("lerp", {self, end, w}, dt, std::move(o), ip,
                   [&](const TensorIter& it) { cpu::ternary_kernel(cpu::TernaryOp::Lerp, it, dt, Scalar()); });
  };
  auto record = [&](const Tensor& r) {
    if (auto n = autograd::make_node<LambdaBackward>(self, end, weight)) {
      n->name_ = "LerpBackward1";
      n->saved = {SavedVariable(self, false), SavedVariable(end, false), SavedVariable(weight, false)};
      n->fn = [](const TensorList& g, const TensorList& s) -> TensorList {
        // g - g * w rather than g * (1 - w): a Python-number w stays a double.
        // Complex: g times the conjugate of each partial derivative (conj is the identity on reals).
        Tensor ge = mul(g[0], conj(s[2])), gs = sub(g[0], ge), gw = mul(g[0], conj(sub(s[1], s[0])));
        return {reduce_to(gs, s[0]), reduce_to(ge, s[1]), reduce_to(gw, s[2])};
      };
      autograd::set_history(r, n);
    }
  };
  return ternary_driver("lerp", self, {&self, &end, &weight}, std::move(out), inplace, raw, record,
                        [&](const Tensor& prev) { return lerp(prev, end, weight); });
}

namespace {
// self + value * t1 (*|/) t2.
Tensor addc(bool is_div, const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value, Tensor out,
            bool inplace) {
  const char* name = is_div ? "addcdiv" : "addcmul";
  if (is_div && is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true))
    throw Error(
        "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true "
        "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
        "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
        "tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value "
        "* tensor1 / tensor2), for all dtypes.");
  ScalarType dt = result_type({self, t1, t2});
  if (dt == ScalarType::Bool) not_implemented(name, dt);
  auto raw = [&](Tensor o, bool ip) {
    Tensor a = to_dtype(self, dt), b = to_dtype(t1, dt), c = to_dtype(t2, dt);
    return ew::run(name, {a, b, c}, dt, std::move(o), ip, [&](const TensorIter& it) {
      cpu::ternary_kernel(is_div ? cpu::TernaryOp::Addcdiv : cpu::TernaryOp::Addcmul, it, dt, value);
    });
  };
  auto record = [&](const Tensor& r) {
    if (auto n = autograd::make_node<LambdaBackward>(self, t1, t2)) {
      n->name_ = is_div ? "AddcdivBackward0" : "AddcmulBackward0";
      n->saved = {SavedVariable(self, false), SavedVariable(t1, false), SavedVariable(t2, false)};
      // Complex: g times the conjugate of each partial derivative (conj is the identity on reals).
      Scalar v = value.is_complex() ? Scalar(std::conj(value.to_complex())) : value;
      n->fn = [is_div, v](const TensorList& g, const TensorList& s) -> TensorList {
        Tensor gv = mul(g[0], scalar_tensor(v, std::nullopt, /*wrapped=*/true));
        Tensor c1 = conj(s[1]), c2 = conj(s[2]);
        Tensor g1 = is_div ? div(gv, c2) : mul(gv, c2);
        Tensor g2 = is_div ? neg(div(mul(gv, c1), mul(c2, c2))) : mul(gv, c1);
        return {reduce_to(g[0], s[0]), reduce_to(g1, s[1]), reduce_to(g2, s[2])};
      };
      autograd::set_history(r, n);
    }
  };
  return ternary_driver(name, self, {&self, &t1, &t2}, std::move(out), inplace, raw, record,
                        [&](const Tensor& prev) { return addc(is_div, prev, t1, t2, value, Tensor(), false); });
}
}  // namespace

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value, Tensor out, bool inplace) {
  return addc(false, self, t1, t2, value, std::move(out), inplace);
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value, Tensor out, bool inplace) {
  return addc(true, self, t1, t2, value, std::move(out), inplace);
}

Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max, Tensor out, bool inplace) {
  EMBER_CHECK(min.defined() || max.defined(), "torch.clamp: At least one of 'min' or 'max' must not be None");
  ScalarType dt = result_type({self, min, max});
  if ((dt == ScalarType::Bool && min.defined() && max.defined()) || is_complex(dt)) not_implemented("clamp", dt);
  check_number_fits(min, dt);
  check_number_fits(max, dt);
  auto raw = [&](Tensor o, bool ip) {
    // An absent bound is the type's extreme, so one kernel serves clamp, clamp_min and clamp_max.
    Tensor lo = min.defined() ? to_dtype(min, dt) : Tensor(), hi = max.defined() ? to_dtype(max, dt) : Tensor();
    EMBER_DISPATCH_ALL(dt, "clamp", [&] {
      using M = opmath_t<scalar_t>;
      constexpr bool kFloat = !std::is_integral_v<M>;
      if (!lo.defined())
        lo = scalar_tensor(Scalar(kFloat ? -std::numeric_limits<double>::infinity()
                                         : static_cast<double>(std::numeric_limits<M>::lowest())),
                           dt);
      if (!hi.defined())
        hi = scalar_tensor(Scalar(kFloat ? std::numeric_limits<double>::infinity()
                                         : static_cast<double>(std::numeric_limits<M>::max())),
                           dt);
      if constexpr (!kFloat) {  // int64 extremes are not exact in double
        if (!min.defined()) lo = scalar_tensor(Scalar(static_cast<int64_t>(std::numeric_limits<M>::lowest())), dt);
        if (!max.defined()) hi = scalar_tensor(Scalar(static_cast<int64_t>(std::numeric_limits<M>::max())), dt);
      }
    });
    Tensor x = to_dtype(self, dt);
    return ew::run("clamp", {x, lo, hi}, dt, std::move(o), ip,
                   [&](const TensorIter& it) { cpu::ternary_kernel(cpu::TernaryOp::Clamp, it, dt, Scalar()); });
  };
  auto record = [&](const Tensor& r) {
    if (auto n = autograd::make_node<LambdaBackward>(self, min, max)) {
      n->name_ = "ClampBackward0";
      n->saved = {SavedVariable(self, false), SavedVariable(min, false), SavedVariable(max, false)};
      n->fn = [](const TensorList& g, const TensorList& s) -> TensorList {
        const Tensor &x = s[0], &lo = s[1], &hi = s[2];
        Tensor keep = lo.defined() ? ge(x, lo) : Tensor();
        if (hi.defined()) keep = keep.defined() ? logical_and(keep, le(x, hi)) : le(x, hi);
        TensorList out{reduce_to(mul(g[0], keep), x), Tensor(), Tensor()};
        // With min > max the result is max everywhere.
        const bool both = lo.defined() && hi.defined();
        if (lo.defined()) out[1] = reduce_to(mul(g[0], both ? logical_and(lt(x, lo), le(lo, hi)) : lt(x, lo)), lo);
        if (hi.defined()) out[2] = reduce_to(mul(g[0], both ? logical_or(gt(x, hi), gt(lo, hi)) : gt(x, hi)), hi);
        return out;
      };
      autograd::set_history(r, n);
    }
  };
  return ternary_driver("clamp", self, {&self, &min, &max}, std::move(out), inplace, raw, record,
                        [&](const Tensor& prev) { return clamp(prev, min, max); });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor out) {
  EMBER_CHECK(cond.dtype() == ScalarType::Bool,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              cond.dtype() == ScalarType::Float32 ? "Float" : dtype_name(cond.dtype()));
  ScalarType dt = result_type(a, b);
  check_number_fits(a, dt);
  check_number_fits(b, dt);
  auto raw = [&](Tensor o, bool) {
    Tensor x = to_dtype(a, dt), y = to_dtype(b, dt);
    return ew::run("where", {cond, x, y}, dt, std::move(o), false,
                   [&](const TensorIter& it) { cpu::where_kernel(it, dt); });
  };
  auto record = [&](const Tensor& r) {
    if (auto n = autograd::make_node<LambdaBackward>(cond, a, b)) {
      n->name_ = "WhereBackward0";
      n->saved = {SavedVariable(cond, false), SavedVariable(a, false), SavedVariable(b, false)};
      // Only the gradients wanted: masked_fill's value (a 0-d constant) would cost a full reduction.
      // (forward AD derives its tangents from this function: an input with a tangent is wanted too)
      auto wanted = [](const Tensor& t) {
        return autograd::requires_grad(t) ||
               (autograd::forward_ad::is_active() && autograd::forward_ad::any_has_tangent({&t}));
      };
      const bool need_a = wanted(a), need_b = wanted(b);
      n->fn = [need_a, need_b](const TensorList& g, const TensorList& s) -> TensorList {
        Tensor zero = num(0);
        return {Tensor(), need_a ? reduce_to(where(s[0], g[0], zero), s[1]) : Tensor(),
                need_b ? reduce_to(where(s[0], zero, g[0]), s[2]) : Tensor()};
      };
      autograd::set_history(r, n);
    }
  };
  return ternary_driver("where", a, {&a, &b}, std::move(out), false, raw, record, nullptr);
}

// ---- comparisons that answer "how close" ----

namespace {
bool all_true(const Tensor& mask) {
  Tensor c = contiguous(mask);
  const bool* p = c.data<bool>();
  for (int64_t i = 0; i < c.numel(); ++i)
    if (!p[i]) return false;
  return true;
}
}  // namespace

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(a.dtype() == b.dtype(), dtype_name(a.dtype()), " did not match ", dtype_name(b.dtype()));
  EMBER_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  autograd::NoGradGuard no_grad;
  Tensor close = eq(a, b);
  if (equal_nan && (is_floating_point(a.dtype()) || is_complex(a.dtype())))
    close = logical_or(close, logical_and(isnan(a), isnan(b)));
  if (rtol == 0 && atol == 0) return close;
  // Integers compare in double so |a - b| cannot overflow.
  Tensor x = is_floating_point(a.dtype()) || is_complex(a.dtype()) ? a : to_dtype(a, ScalarType::Float64);
  Tensor y = is_floating_point(b.dtype()) || is_complex(b.dtype()) ? b : to_dtype(b, ScalarType::Float64);
  Tensor diff = abs(sub(x, y));
  Tensor allowed = add(num(atol), mul(num(rtol), abs(y)));
  return logical_or(close, logical_and(isfinite(diff), le(diff, allowed)));
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all_true(isclose(a, b, rtol, atol, equal_nan));
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return false;
  autograd::NoGradGuard no_grad;
  return all_true(eq(a, b));
}

}  // namespace ember
