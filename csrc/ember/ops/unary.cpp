// The unary family: elementwise math and activations. Each op is one row of `info()` (name,
// dtype rule, backward node name), one functor in cpu/unary_kernels.cpp and one case of
// `derivative()`, written with ember ops so that double backward works.
#include <cmath>
#include <numbers>

#include "ember/autograd/functions.h"
#include "ember/cpu/complex_kernels.h"
#include "ember/cpu/unary_kernels.h"
#include "ember/ops/complex.h"
#include "ember/ops/elementwise.h"

namespace ember {
namespace {

using autograd::LambdaBackward;
using ew::num;

// How an op treats input dtypes.
enum class Kind : uint8_t {
  FloatValued,  // ints and bool compute in the default float dtype (exp, sin, ...)
  FloatOnly,    // floating types only (frac, most activations)
  Numeric,      // ints and floats keep their dtype; bool is not implemented
  All,          // every real dtype keeps its dtype (sign, nan_to_num)
  Integral,     // bool and ints (bitwise_not)
  Predicate,    // any dtype in, bool out (isnan, signbit, logical_not)
};

// What the backward formula needs: the input x, the result y (saving only these keeps
// in-place writes to the other legal, as in PyTorch).
enum Saves : uint8_t { kNone = 0, kX = 1, kY = 2 };

struct Info {
  const char* name;
  Kind kind;
  const char* node;  // backward node name; null: not differentiable
  uint8_t saves = kX;
};

Info info(UnaryOp op) {
  using K = Kind;
  switch (op) {
    // clang-format off
    case UnaryOp::Abs:         return {"abs", K::Numeric, "AbsBackward0"};
    case UnaryOp::Sign:        return {"sign", K::All, "SignBackward0", kNone};
    case UnaryOp::Sgn:         return {"sgn", K::All, "SgnBackward0", Saves(kX | kY)};  // complex: both
    case UnaryOp::Neg:         return {"neg", K::Numeric, "NegBackward0", kNone};
    case UnaryOp::Exp:         return {"exp", K::FloatValued, "ExpBackward0", kY};
    case UnaryOp::Exp2:        return {"exp2", K::FloatValued, "Exp2Backward0", kY};
    case UnaryOp::Expm1:       return {"expm1", K::FloatValued, "Expm1Backward0", kY};
    case UnaryOp::Log:         return {"log", K::FloatValued, "LogBackward0"};
    case UnaryOp::Log2:        return {"log2", K::FloatValued, "Log2Backward0"};
    case UnaryOp::Log10:       return {"log10", K::FloatValued, "Log10Backward0"};
    case UnaryOp::Log1p:       return {"log1p", K::FloatValued, "Log1PBackward0"};
    case UnaryOp::Sqrt:        return {"sqrt", K::FloatValued, "SqrtBackward0", kY};
    case UnaryOp::Rsqrt:       return {"rsqrt", K::FloatValued, "RsqrtBackward0", kY};
    case UnaryOp::Square:      return {"square", K::All, "PowBackward0"};
    case UnaryOp::Sin:         return {"sin", K::FloatValued, "SinBackward0"};
    case UnaryOp::Cos:         return {"cos", K::FloatValued, "CosBackward0"};
    case UnaryOp::Tan:         return {"tan", K::FloatValued, "TanBackward0", kY};
    case UnaryOp::Asin:        return {"asin", K::FloatValued, "AsinBackward0"};
    case UnaryOp::Acos:        return {"acos", K::FloatValued, "AcosBackward0"};
    case UnaryOp::Atan:        return {"atan", K::FloatValued, "AtanBackward0"};
    case UnaryOp::Sinh:        return {"sinh", K::FloatValued, "SinhBackward0"};
    case UnaryOp::Cosh:        return {"cosh", K::FloatValued, "CoshBackward0"};
    case UnaryOp::Tanh:        return {"tanh", K::FloatValued, "TanhBackward0", kY};
    case UnaryOp::Asinh:       return {"asinh", K::FloatValued, "AsinhBackward0"};
    case UnaryOp::Acosh:       return {"acosh", K::FloatValued, "AcoshBackward0"};
    case UnaryOp::Atanh:       return {"atanh", K::FloatValued, "AtanhBackward0"};
    case UnaryOp::Sigmoid:     return {"sigmoid", K::FloatValued, "SigmoidBackward0", kY};
    case UnaryOp::Erf:         return {"erf", K::FloatValued, "ErfBackward0"};
    case UnaryOp::Erfc:        return {"erfc", K::FloatValued, "ErfcBackward0"};
    case UnaryOp::Erfinv:      return {"erfinv", K::FloatValued, "ErfinvBackward0", kX};  // (torch recomputes it)
    case UnaryOp::Lgamma:      return {"lgamma", K::FloatValued, "LgammaBackward0"};
    case UnaryOp::Digamma:     return {"digamma", K::FloatValued, "DigammaBackward0"};
    case UnaryOp::Floor:       return {"floor", K::Numeric, "FloorBackward0", kNone};
    case UnaryOp::Ceil:        return {"ceil", K::Numeric, "CeilBackward0", kNone};
    case UnaryOp::Trunc:       return {"trunc", K::Numeric, "TruncBackward0", kNone};
    case UnaryOp::Frac:        return {"frac", K::FloatOnly, "FracBackward0", kNone};
    case UnaryOp::Reciprocal:  return {"reciprocal", K::FloatValued, "ReciprocalBackward0", kY};
    case UnaryOp::Isnan:       return {"isnan", K::Predicate, nullptr};
    case UnaryOp::Isinf:       return {"isinf", K::Predicate, nullptr};
    case UnaryOp::Isfinite:    return {"isfinite", K::Predicate, nullptr};
    case UnaryOp::Isposinf:    return {"isposinf", K::Predicate, nullptr};
    case UnaryOp::Isneginf:    return {"isneginf", K::Predicate, nullptr};
    case UnaryOp::LogicalNot:  return {"logical_not", K::Predicate, nullptr};
    case UnaryOp::BitwiseNot:  return {"bitwise_not", K::Integral, nullptr};
    case UnaryOp::Signbit:     return {"signbit", K::Predicate, nullptr};
    case UnaryOp::Relu:        return {"relu", K::Numeric, "ReluBackward0", kY};
    case UnaryOp::Relu6:       return {"relu6", K::Numeric, "HardtanhBackward0"};
    case UnaryOp::Selu:        return {"selu", K::FloatOnly, "EluBackward0"};
    case UnaryOp::Silu:        return {"silu", K::FloatOnly, "SiluBackward0"};
    case UnaryOp::Mish:        return {"mish", K::FloatOnly, "MishBackward0"};
    case UnaryOp::Hardsigmoid: return {"hardsigmoid", K::FloatOnly, "HardsigmoidBackward0"};
    case UnaryOp::Hardswish:   return {"hardswish", K::FloatOnly, "HardswishBackward0"};
    case UnaryOp::Logsigmoid:  return {"log_sigmoid", K::FloatOnly, "LogSigmoidBackward0"};
    case UnaryOp::Logit:       return {"logit", K::FloatValued, "LogitBackward0"};
    case UnaryOp::Polygamma:   return {"polygamma", K::FloatValued, "PolygammaBackward0"};
    case UnaryOp::Round:       return {"round", K::Numeric, "RoundBackward0", kNone};
    case UnaryOp::NanToNum:    return {"nan_to_num", K::All, "NanToNumBackward0"};
    case UnaryOp::LeakyRelu:   return {"leaky_relu", K::FloatOnly, "LeakyReluBackward0"};
    case UnaryOp::Elu:         return {"elu", K::FloatOnly, "EluBackward0"};
    case UnaryOp::Gelu:        return {"gelu", K::FloatOnly, "GeluBackward0"};
    case UnaryOp::Softplus:    return {"softplus", K::FloatOnly, "SoftplusBackward0"};
    case UnaryOp::Hardtanh:    return {"hardtanh", K::Numeric, "HardtanhBackward0"};
    case UnaryOp::Threshold:   return {"threshold", K::Numeric, "ThresholdBackward0"};
    case UnaryOp::Clamp:       return {"clamp", K::Numeric, "ClampBackward1"};
      // clang-format on
  }
  return {"?", Kind::All, nullptr};
}

constexpr double kSeluAlpha = 1.6732632423543772848170429916717, kSeluScale = 1.0507009873554804934193349852946;

// d op(x) / dx times g, with x the input and y the result (both in the compute dtype).
Tensor derivative(UnaryOp op, const Tensor& g, const Tensor& x, const Tensor& y, const UnaryParams& p) {
  constexpr double kLn2 = std::numbers::ln2, kLn10 = std::numbers::ln10;
  constexpr double k2SqrtPi = 1.12837916709551257390;  // 2 / sqrt(pi)
  auto sq = [](const Tensor& t) { return mul(t, t); };
  // Note: a bool mask times a Python number is float32 (the default dtype); so masks multiply g
  // first, and constants that are not multiplied into a tensor are 0-d tensors of g's dtype.
  auto like = [&](double v) { return scalar_tensor(Scalar(v), g.dtype()); };
  // Note [Fused activation backward]: outside create_graph (no graph is recorded while the
  // gradient is computed) these gradients are one pass of a parametrized pointwise kernel
  // (leaky_relu's composed one took 4.5x torch's time, silu's 1.7x); under create_graph, the
  // compositions below, which are differentiable again.
  if (!autograd::GradMode::is_enabled() && x.defined() && is_floating_point(x.dtype()) && g.dtype() == x.dtype()) {
    switch (op) {
      case UnaryOp::LeakyRelu:
        return pointwise_op_p(PointwiseOp::LeakyReluBackward, g, x, p.p0);
      case UnaryOp::Hardtanh:
        return pointwise_op_p(PointwiseOp::HardtanhBackward, g, x, p.p0, p.p1);
      case UnaryOp::Relu6:
        return pointwise_op_p(PointwiseOp::HardtanhBackward, g, x, 0.0, 6.0);
      case UnaryOp::Silu:
        return pointwise_op_p(PointwiseOp::SiluBackward, g, x, 0.0);
      case UnaryOp::Hardswish:
        return pointwise_op_p(PointwiseOp::HardswishBackward, g, x, 0.0);
      case UnaryOp::Softplus:
        return pointwise_op_p(PointwiseOp::SoftplusBackward, g, x, p.p0, p.p1);
      case UnaryOp::Logsigmoid:
        return pointwise_op_p(PointwiseOp::LogsigmoidBackward, g, x, 0.0);
      case UnaryOp::Elu:
        return pointwise_op_p(PointwiseOp::EluBackward, g, x, p.p0 * p.p1 * p.p2, p.p2, p.p1);
      case UnaryOp::Selu:
        return pointwise_op_p(PointwiseOp::EluBackward, g, x, kSeluAlpha * kSeluScale, 1.0, kSeluScale);
      default:
        break;
    }
  }
  switch (op) {
    case UnaryOp::Abs:
      return mul(g, sign(x));
    case UnaryOp::Sign:
    case UnaryOp::Sgn:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Trunc:
    case UnaryOp::Round:
      return zeros(g.sizes(), g.dtype());
    case UnaryOp::Neg:
      return neg(g);
    case UnaryOp::Exp:
      return mul(g, y);
    case UnaryOp::Exp2:
      return mul(g, mul(y, num(kLn2)));
    case UnaryOp::Expm1:
      return mul(g, add(y, num(1)));
    case UnaryOp::Log:
      return div(g, x);
    case UnaryOp::Log2:
      return div(g, mul(x, num(kLn2)));
    case UnaryOp::Log10:
      return div(g, mul(x, num(kLn10)));
    case UnaryOp::Log1p:
      return div(g, add(x, num(1)));
    case UnaryOp::Sqrt:
      return div(g, mul(y, num(2)));
    case UnaryOp::Rsqrt:
      return mul(g, mul(mul(y, sq(y)), num(-0.5)));
    case UnaryOp::Square:
      return mul(g, mul(x, num(2)));
    case UnaryOp::Sin:
      return mul(g, cos(x));
    case UnaryOp::Cos:
      return mul(g, neg(sin(x)));
    case UnaryOp::Tan:
      return mul(g, add(sq(y), num(1)));
    case UnaryOp::Asin:
      return mul(g, rsqrt(sub(num(1), sq(x))));
    case UnaryOp::Acos:
      return mul(g, neg(rsqrt(sub(num(1), sq(x)))));
    case UnaryOp::Atan:
      return div(g, add(sq(x), num(1)));
    case UnaryOp::Sinh:
      return mul(g, cosh(x));
    case UnaryOp::Cosh:
      return mul(g, sinh(x));
    case UnaryOp::Tanh:  // one pass when no graph is recorded, as relu's (3 passes: 1.3x torch's time)
      if (!autograd::GradMode::is_enabled() && is_floating_point(y.dtype()) && g.dtype() == y.dtype())
        return pointwise_op(PointwiseOp::TanhBackward, g, y);
      return mul(g, sub(num(1), sq(y)));
    case UnaryOp::Asinh:
      return mul(g, rsqrt(add(sq(x), num(1))));
    case UnaryOp::Acosh:
      return mul(g, rsqrt(sub(sq(x), num(1))));
    case UnaryOp::Atanh:
      return div(g, sub(num(1), sq(x)));
    case UnaryOp::Sigmoid:  // the same (3 passes: 1.4-1.6x torch's time)
      if (!autograd::GradMode::is_enabled() && is_floating_point(y.dtype()) && g.dtype() == y.dtype())
        return pointwise_op(PointwiseOp::SigmoidBackward, g, y);
      return mul(g, mul(y, sub(num(1), y)));
    case UnaryOp::Logit: {
      Tensor d = div(g, mul(x, sub(num(1), x)));
      if (p.p0 < 0) return d;
      // Clamped to [eps, 1 - eps]: zero slope outside.
      return mul(d, logical_and(ge(x, num(p.p0)), le(x, num(1 - p.p0))));
    }
    case UnaryOp::Erf:
      return mul(g, mul(exp(neg(sq(x))), num(k2SqrtPi)));
    case UnaryOp::Erfc:
      return mul(g, mul(exp(neg(sq(x))), num(-k2SqrtPi)));
    case UnaryOp::Erfinv:  // from erfinv(x) again, as torch: the result is not saved, so it may change in place
      return mul(g, mul(exp(sq(erfinv(x))), num(1 / k2SqrtPi)));
    case UnaryOp::Lgamma:
      return mul(g, digamma(x));
    case UnaryOp::Digamma:
      return mul(g, polygamma(1, x));
    case UnaryOp::Polygamma:
      return mul(g, polygamma(static_cast<int64_t>(p.p0) + 1, x));
    case UnaryOp::Frac:
      return g;
    case UnaryOp::Reciprocal:
      return mul(g, neg(sq(y)));
    case UnaryOp::NanToNum:
      return mul(g, isfinite(x));
    case UnaryOp::Relu:  // one pass when no graph is recorded; the product is differentiable (create_graph)
      if (!autograd::GradMode::is_enabled() && !is_complex(g.dtype()) && g.dtype() == y.dtype())
        return pointwise_op(PointwiseOp::ReluBackward, g, y);
      return mul(g, gt(y, num(0)));
    case UnaryOp::Relu6:
      return mul(g, logical_and(gt(x, num(0)), lt(x, num(6))));
    case UnaryOp::Hardtanh:
      return mul(g, logical_and(gt(x, num(p.p0)), lt(x, num(p.p1))));
    case UnaryOp::Clamp: {
      Tensor m = ge(x, num(p.has_p0 ? p.p0 : -INFINITY));
      if (p.has_p1) m = logical_and(m, le(x, num(p.p1)));
      return mul(g, m);
    }
    case UnaryOp::Threshold:
      return mul(g, gt(x, num(p.p0)));
    case UnaryOp::LeakyRelu:
      return mul(g, where(gt(x, num(0)), like(1), like(p.p0)));
    case UnaryOp::Selu:
    case UnaryOp::Elu: {
      double alpha = p.p0, scale = p.p1, in_scale = p.p2;
      if (op == UnaryOp::Selu) alpha = kSeluAlpha, scale = kSeluScale, in_scale = 1;
      Tensor neg_slope = mul(exp(mul(x, num(in_scale))), num(alpha * scale * in_scale));
      return mul(g, where(gt(x, num(0)), num(scale), neg_slope));
    }
    case UnaryOp::Gelu: {
      // One fused pass when no graph is recorded; the composition below is differentiable (create_graph).
      if (!autograd::GradMode::is_enabled() && is_floating_point(x.dtype()) && g.dtype() == x.dtype())
        return pointwise_op(p.p0 == 0 ? PointwiseOp::GeluBackward : PointwiseOp::GeluTanhBackward, g, x);
      if (p.p0 == 0) {  // Phi(x) + x phi(x)
        Tensor cdf = mul(add(erf(mul(x, num(std::numbers::sqrt2 / 2))), num(1)), num(0.5));
        Tensor pdf = mul(exp(mul(sq(x), num(-0.5))), num(0.5 * k2SqrtPi / std::numbers::sqrt2));
        return mul(g, add(cdf, mul(x, pdf)));
      }
      constexpr double k = 0.79788456080286535588, c = 0.044715;  // sqrt(2 / pi)
      Tensor t = tanh(mul(add(x, mul(mul(x, sq(x)), num(c))), num(k)));
      Tensor dinner = mul(add(mul(sq(x), num(3 * c)), num(1)), num(k));
      Tensor d = add(mul(add(t, num(1)), num(0.5)), mul(mul(mul(x, num(0.5)), sub(num(1), sq(t))), dinner));
      return mul(g, d);
    }
    case UnaryOp::Silu: {
      Tensor s = sigmoid(x);
      return mul(g, mul(s, add(mul(x, sub(num(1), s)), num(1))));
    }
    case UnaryOp::Mish: {
      Tensor t = tanh(softplus(x));
      return mul(g, add(t, mul(mul(x, sigmoid(x)), sub(num(1), sq(t)))));
    }
    case UnaryOp::Softplus: {
      Tensor bx = mul(x, num(p.p0));
      return mul(g, where(gt(bx, num(p.p1)), num(1), sigmoid(bx)));
    }
    case UnaryOp::Hardsigmoid:
      return mul(mul(g, logical_and(gt(x, num(-3)), lt(x, num(3)))), num(1.0 / 6));
    case UnaryOp::Hardswish: {
      Tensor mid = add(div(x, num(3)), num(0.5));
      // torch's ends (0 at -3, 1 at 3); a NaN x gives NaN
      return mul(g, where(le(x, num(-3)), num(0), where(ge(x, num(3)), num(1), mid)));
    }
    case UnaryOp::Logsigmoid:
      return mul(g, sigmoid(neg(x)));
    default:
      EMBER_NOT_IMPLEMENTED("derivative for ", info(op).name, " is not implemented");
  }
}

// PyTorch's convention for complex inputs: the gradient is g * conj(f'(z)) for holomorphic f.
// f' has real coefficients in every formula of derivative(), so conj(f'(z)) = f'(conj(z)).
Tensor complex_derivative(UnaryOp op, const Tensor& g, const Tensor& x, const Tensor& y, const UnaryParams& p) {
  switch (op) {
    case UnaryOp::Abs:  // real result: g * z / |z|
      return mul(g, sgn(x));
    case UnaryOp::Sgn: {  // s = z / |z|: (g - Re(g conj(s)) s) / |z|, 0 at z = 0
      Tensor r = abs(x);
      Tensor d = div(sub(g, mul(real(mul(g, conj(y))), y)), r);
      return where(eq(r, num(0)), zeros({}, d.dtype()), d);
    }
    case UnaryOp::Neg:
    case UnaryOp::NanToNum:
      return derivative(op, g, x, y, p);
    default:
      return derivative(op, g, x.defined() ? conj(x) : x, y.defined() ? conj(y) : y, p);
  }
}

// Dtype the kernel computes in, after checking the input dtype is supported.
ScalarType compute_dtype(UnaryOp op, const Info& inf, ScalarType in, const UnaryParams& p) {
  auto not_impl = [&] { EMBER_NOT_IMPLEMENTED("\"", inf.name, "\" not implemented for '", dtype_name(in), "'"); };
  if (is_complex(in)) {
    switch (op) {
      case UnaryOp::Sign:
        EMBER_NOT_IMPLEMENTED(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.");
      case UnaryOp::Floor:
      case UnaryOp::Ceil:
      case UnaryOp::Trunc:
        EMBER_NOT_IMPLEMENTED(inf.name, " is not supported for complex inputs");
      case UnaryOp::Relu:
      case UnaryOp::Relu6:
      case UnaryOp::Hardtanh:
      case UnaryOp::Clamp:
        EMBER_NOT_IMPLEMENTED("clamp is not supported for complex types");
      case UnaryOp::Isposinf:
      case UnaryOp::Isneginf:
        throw Error(detail::str_cat(inf.name, " does not support complex inputs."));
      case UnaryOp::Signbit:
        EMBER_NOT_IMPLEMENTED("signbit is not implemented for complex tensors.");
      default:
        if (!cpu::complex_unary_supported(op)) not_impl();
        return in;
    }
  }
  if (in == ScalarType::Bool) {
    if (op == UnaryOp::Neg)
      throw Error(
          "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
          "the `~` or `logical_not()` operator instead.");
    if (op == UnaryOp::Relu || op == UnaryOp::Relu6 || op == UnaryOp::Hardtanh)
      throw Error("\"clamp_min_cpu\" not implemented for 'Bool'");
  }
  if (op == UnaryOp::Hardtanh && in == ScalarType::UInt8 && static_cast<int64_t>(p.p0) < 0)
    EMBER_CHECK(false, "hardtanh: min_val ", p.p0, " is not representable in uint8");
  if (op == UnaryOp::Round && p.p0 != 0 && !is_floating_point(in)) not_impl();
  switch (inf.kind) {
    case Kind::FloatValued:
      return is_floating_point(in) ? in : default_dtype();
    case Kind::FloatOnly:
      if (!is_floating_point(in)) not_impl();
      return in;
    case Kind::Numeric:
      if (in == ScalarType::Bool) not_impl();
      return in;
    case Kind::Integral:
      if (!is_integral(in, true)) not_impl();
      return in;
    case Kind::All:
      return op == UnaryOp::Square && in == ScalarType::Bool ? ScalarType::Int64 : in;
    case Kind::Predicate:
      return in;
  }
  return in;
}

Tensor unary_raw(UnaryOp op, const Info& inf, const Tensor& a, Tensor out, bool inplace, const UnaryParams& p) {
  ScalarType compute = compute_dtype(op, inf, a.dtype(), p);
  ScalarType result = inf.kind == Kind::Predicate ? ScalarType::Bool : compute;
  if (is_complex(compute)) {
    if (op == UnaryOp::Abs) result = to_real(compute);
    return ew::run(inf.name, {a}, result, std::move(out), inplace,
                   [&](const TensorIter& it) { cpu::complex_unary_kernel(op, it, compute, p); });
  }
  Tensor ca = to_dtype(a, compute);
  if (out.defined() && !ca.is_same(a)) check_elementwise_overlap(out, {&a});  // the iterator sees the copy
  return ew::run(inf.name, {ca}, result, std::move(out), inplace,
                 [&](const TensorIter& it) { cpu::unary_kernel(op, it, compute, p); });
}

}  // namespace

const char* unary_op_name(UnaryOp op) { return info(op).name; }

Tensor unary_op(UnaryOp op, const Tensor& a, Tensor out, bool inplace, UnaryParams p) {
  const Info inf = info(op);
  // As torch (its complex autograd list leaves it out): forward mode works, reverse mode raises.
  EMBER_CHECK(!((op == UnaryOp::NanToNum || op == UnaryOp::Silu) && is_complex(a.dtype()) &&
                autograd::GradMode::is_enabled() && autograd::requires_grad(a)),
              inf.name, " does not support automatic differentiation for outputs with complex dtype.");
  if (inplace && a.impl()->view_made_no_grad) autograd::check_no_grad_view_inplace(a, {});
  if (inf.node && autograd::needs_history({&a})) {
    if (inplace && inf.saves == kY && !a.impl()->view_base && !is_complex(a.dtype()) &&
        !autograd::forward_ad::is_active() && compute_dtype(op, inf, a.dtype(), p) == a.dtype()) {
      // An op whose backward needs only its output (relu_, sigmoid_, exp_, tanh_...) on a
      // non-view runs truly in place, as torch does: the node saves self after the op (its
      // version counter then catches a later in-place change), no clone and no copy back.
      autograd::check_inplace(a, true);
      auto n = autograd::make_node<LambdaBackward>(a);  // edges to a's history before the op
      unary_raw(op, inf, a, a, true, p);
      n->name_ = inf.node;
      autograd::rebase_history(a, n);
      n->saved = {autograd::SavedVariable(), autograd::SavedVariable(a, true)};
      n->fn = [op, p](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
        return {derivative(op, g[0], s[0], s[1], p)};
      };
      return a;
    }
    if (inplace) return ew::inplace_with_grad(a, [&](const Tensor& prev) { return unary_op(op, prev, {}, false, p); });
    ew::check_no_out_grad(inf.name, out, {&a});
    Tensor y = unary_raw(op, inf, a, Tensor(), false, p);
    if (auto n = autograd::make_node<LambdaBackward>(a)) {
      n->name_ = inf.node;
      autograd::set_history(y, n);  // before saving y: a saved output records its producer
      n->saved = {inf.saves & kX ? autograd::SavedVariable(a, false) : autograd::SavedVariable(),
                  inf.saves & kY ? autograd::SavedVariable(y, true) : autograd::SavedVariable()};
      n->fn = [op, p](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
        const Tensor& x = s[0];
        if ((x.defined() && is_complex(x.dtype())) || (s[1].defined() && is_complex(s[1].dtype())))
          return {complex_derivative(op, g[0], x, s[1], p)};
        return {derivative(op, g[0], x, s[1], p)};
      };
      // Elementwise, so the Jacobian is diagonal: J t is the backward formula applied to t
      // (for real inputs; complex backward formulas conjugate).
      if (!is_complex(a.dtype()))
        n->jvp_fn = [op, p](const autograd::TensorList& t, const autograd::TensorList& s) -> autograd::TensorList {
          return {t[0].defined() ? derivative(op, t[0], s[0], s[1], p) : Tensor()};
        };
    }
    return y;
  }
  return unary_raw(op, inf, a, std::move(out), inplace, p);
}

#define EMBER_DEFINE_UNARY(fn, E) \
  Tensor fn(const Tensor& a) { return unary_op(UnaryOp::E, a); }
EMBER_UNARY_OPS(EMBER_DEFINE_UNARY)
#undef EMBER_DEFINE_UNARY

Tensor positive(const Tensor& a) {
  EMBER_CHECK(a.dtype() != ScalarType::Bool, "The `+` operator, on a bool tensor is not supported.");
  return a;
}

Tensor logit(const Tensor& a, std::optional<double> eps) {
  return unary_op(UnaryOp::Logit, a, {}, false, {.p0 = eps.value_or(-1.0)});
}

Tensor polygamma(int64_t n, const Tensor& a) {
  EMBER_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  return unary_op(UnaryOp::Polygamma, a, {}, false, {.p0 = static_cast<double>(n)});
}

Tensor round(const Tensor& a, int64_t decimals) {
  return unary_op(UnaryOp::Round, a, {}, false, {.p0 = static_cast<double>(decimals)});
}

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  UnaryParams p{.p0 = nan.value_or(0.0), .p1 = posinf.value_or(0.0), .p2 = neginf.value_or(0.0)};
  p.has_p1 = posinf.has_value(), p.has_p2 = neginf.has_value();
  return unary_op(UnaryOp::NanToNum, a, {}, false, p);
}

Tensor leaky_relu(const Tensor& a, double negative_slope) {
  return unary_op(UnaryOp::LeakyRelu, a, {}, false, {.p0 = negative_slope});
}

Tensor elu(const Tensor& a, double alpha, double scale, double input_scale) {
  return unary_op(UnaryOp::Elu, a, {}, false, {.p0 = alpha, .p1 = scale, .p2 = input_scale});
}

Tensor celu(const Tensor& a, double alpha) {
  EMBER_CHECK(alpha != 0, "ZeroDivisionError");
  return elu(a, alpha, 1.0, 1.0 / alpha);
}

UnaryParams gelu_params(const std::string& approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  return {.p0 = approximate == "tanh" ? 1.0 : 0.0};
}

Tensor gelu(const Tensor& a, const std::string& approximate) {
  return unary_op(UnaryOp::Gelu, a, {}, false, gelu_params(approximate));
}

Tensor softplus(const Tensor& a, double beta, double threshold) {
  return unary_op(UnaryOp::Softplus, a, {}, false, {.p0 = beta, .p1 = threshold});
}

Tensor softsign(const Tensor& a) { return div(a, add(abs(a), ew::num(1))); }

Tensor hardtanh(const Tensor& a, double min_val, double max_val) {
  return unary_op(UnaryOp::Hardtanh, a, {}, false, {.p0 = min_val, .p1 = max_val});
}

Tensor threshold(const Tensor& a, double threshold, double value) {
  // As at::threshold with double Scalars: both must fit the input's dtype.
  check_number_fits(scalar_tensor(threshold, std::nullopt, true), a.dtype());
  check_number_fits(scalar_tensor(value, std::nullopt, true), a.dtype());
  return unary_op(UnaryOp::Threshold, a, {}, false, {.p0 = threshold, .p1 = value});
}

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  EMBER_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  // Type promotion with the bounds as Python numbers (an int tensor clamped by 0.5 is float).
  ScalarType dt = a.dtype();
  for (const std::optional<Scalar>& s : {min, max})
    if (s) dt = promote_types(dt, result_type(a, scalar_tensor(*s, std::nullopt, true)));
  for (const std::optional<Scalar>& s : {min, max})
    if (s) check_number_fits(scalar_tensor(*s, std::nullopt, true), dt);
  UnaryParams p{.p0 = min ? min->to_double() : 0.0, .p1 = max ? max->to_double() : 0.0};
  p.has_p0 = min.has_value(), p.has_p1 = max.has_value();
  return unary_op(UnaryOp::Clamp, to_dtype(a, dt), {}, false, p);
}

}  // namespace ember
