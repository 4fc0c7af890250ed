// Unary math, activations and the pointwise binary/ternary ops: functions (with out=),
// Tensor methods, in-place variants and operators (& | ^ ~ << >> abs()).
#include "common.h"
#include "ember/ops/polynomials.h"
#include "ember/ops/special_binary.h"
#include "ember/ops/special_unary.h"

namespace ember::py {
nb::object nonzero_tuple(const Tensor& t);  // bind_index.cpp
namespace {

Tensor out_arg(nb::handle out) { return out.is_none() ? Tensor() : nb::cast<Tensor>(out); }

std::optional<double> opt_double(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return nb::cast<double>(h);
}

// Where each unary op appears: function ember.f, method Tensor.f, in-place Tensor.f_/ember.f_.
enum Where : uint8_t { kFn = 1, kMethod = 2, kInplace = 4, kStd = kFn | kMethod | kInplace, kPure = kFn | kMethod };

void def_unary(nb::module_& m, nb::class_<Tensor>& cls, const char* name, UnaryOp op, uint8_t where,
               UnaryParams p = {}) {
  if (where & kFn)
    m.def(
        name, [op, p](const Tensor& a, nb::handle out) { return unary_op(op, a, out_arg(out), false, p); },
        nb::arg("input"), nb::kw_only(), nb::arg("out") = nb::none());
  if (where & kMethod) cls.def(name, [op, p](const Tensor& a) { return unary_op(op, a, Tensor(), false, p); });
  if (where & kInplace) {
    std::string ip = std::string(name) + "_";
    auto f = [op, p](Tensor& a) -> Tensor { return unary_op(op, a, a, true, p); };
    cls.def(ip.c_str(), f);
    m.def(ip.c_str(), f, nb::arg("input"));
  }
}

Tensor clamp_any(const Tensor& a, nb::handle lo, nb::handle hi, Tensor out, bool inplace) {
  Scalar slo, shi;
  bool lo_num = lo.is_none() || to_scalar(lo, slo), hi_num = hi.is_none() || to_scalar(hi, shi);
  bool lo_t = nb::isinstance<Tensor>(lo), hi_t = nb::isinstance<Tensor>(hi);
  // torch's Number overload also takes a 0-d tensor, so (0-d tensor, number) is the number form.
  bool mixed = (lo_t && !hi.is_none() && !hi_t) || (hi_t && !lo.is_none() && !lo_t);
  if (lo_num && hi_num && (!(lo_t || hi_t) || mixed)) {
    EMBER_CHECK(!lo.is_none() || !hi.is_none(), "torch.clamp: At least one of 'min' or 'max' must not be None");
    std::optional<Scalar> mn, mx;
    if (!lo.is_none()) mn = slo;
    if (!hi.is_none()) mx = shi;
    if (!out.defined() && !inplace) return clamp(a, mn, mx);
    UnaryParams p{.p0 = mn ? mn->to_double() : 0.0, .p1 = mx ? mx->to_double() : 0.0};
    p.has_p0 = mn.has_value(), p.has_p1 = mx.has_value();
    if (inplace || is_floating_point(a.dtype()) || ((!mn || !mn->is_floating()) && (!mx || !mx->is_floating())))
      return unary_op(UnaryOp::Clamp, a, out, inplace, p);
    return copy_(out, clamp(a, mn, mx));
  }
  // torch has clamp(Tensor, Number?, Number?) and clamp(Tensor, Tensor?, Tensor?), no other mix.
  EMBER_CHECK_TYPEERR(!mixed,
                      "clamp() received an invalid combination of arguments: min and max must both be numbers or "
                      "both be Tensors");
  Tensor tlo = lo.is_none() ? Tensor() : tensor_arg(lo, "clamp");
  Tensor thi = hi.is_none() ? Tensor() : tensor_arg(hi, "clamp");
  return clamp(a, tlo, thi, out, inplace);
}

// `other` may be a Python number only where PyTorch has a Scalar overload (else TypeError).
Tensor other_arg(nb::handle b, const char* name, bool numbers) {
  if (!numbers && !nb::isinstance<Tensor>(b))
    throw ember::TypeError(
        detail::str_cat(name, "(): argument 'other' (position 2) must be Tensor, not ", Py_TYPE(b.ptr())->tp_name));
  return tensor_arg(b, name);
}

// number_first: torch.fn(2, t) is accepted (torch has a Number-self overload, e.g. bitwise ops).
void def_pointwise(nb::module_& m, nb::class_<Tensor>& cls, const char* name, PointwiseOp op, bool inplace,
                   bool numbers, const char* alias = nullptr, bool number_first = false) {
  for (const char* n : {name, alias}) {
    if (!n) continue;
    m.def(
        n,
        [op, name, numbers, number_first](nb::handle a, nb::handle b, nb::handle out) {
          if (!nb::isinstance<Tensor>(a) && (!number_first || !nb::isinstance<Tensor>(b)))
            throw ember::TypeError(detail::str_cat(name, "(): argument 'input' (position 1) must be Tensor, not ",
                                                   Py_TYPE(a.ptr())->tp_name));
          return pointwise_op(op, tensor_arg(a, name), other_arg(b, name, numbers), out_arg(out));
        },
        nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());
    cls.def(
        n,
        [op, name, numbers](const Tensor& a, nb::handle b) { return pointwise_op(op, a, other_arg(b, name, numbers)); },
        nb::arg("other"));
    if (inplace) {
      std::string ip = std::string(n) + "_";
      cls.def(
          ip.c_str(),
          [op, name, numbers](Tensor& a, nb::handle b) -> Tensor {
            return pointwise_op(op, a, other_arg(b, name, numbers), a, true);
          },
          nb::arg("other"));
    }
  }
}

// Python operators: NotImplemented for operands that are neither tensors nor numbers.
void def_operator(nb::class_<Tensor>& cls, PointwiseOp op, const char* dunder, const char* rdunder,
                  const char* idunder) {
  cls.def(dunder, [op](const Tensor& a, nb::handle b) -> nb::object {
    Scalar s;
    if (nb::isinstance<Tensor>(b)) return nb::cast(pointwise_op(op, a, nb::cast<const Tensor&>(b)));
    if (!to_scalar(b, s)) return nb::borrow(Py_NotImplemented);
    return nb::cast(pointwise_op(op, a, scalar_tensor(s, std::nullopt, true)));
  });
  cls.def(rdunder, [op](const Tensor& a, nb::handle b) -> nb::object {
    Scalar s;
    if (!to_scalar(b, s)) return nb::borrow(Py_NotImplemented);
    return nb::cast(pointwise_op(op, scalar_tensor(s, std::nullopt, true), a));
  });
  cls.def(idunder, [op](Tensor& a, nb::handle b) -> Tensor {
    return pointwise_op(op, a, tensor_arg(b, "inplace"), a, /*inplace=*/true);
  });
}

// threshold's numbers must fit the input's dtype, with torch's rule that depends on the Python
// type (a negative int wraps into uint8, a negative float does not; a complex number never fits).
UnaryParams threshold_params(const Tensor& a, nb::handle th, nb::handle v) {
  Scalar s[2];
  nb::handle h[2] = {th, v};
  for (int i = 0; i < 2; ++i) {
    if (nb::isinstance<Tensor>(h[i]) || !to_scalar(h[i], s[i]))
      throw ember::TypeError(detail::str_cat("threshold(): argument '", i == 0 ? "threshold" : "value",
                                             "' must be Number, not ", Py_TYPE(h[i].ptr())->tp_name));
    check_number_fits(scalar_tensor(s[i], std::nullopt, true), a.dtype());
  }
  return {.p0 = s[0].to_double(), .p1 = s[1].to_double()};
}

}  // namespace

void bind_unary(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));

  // Plain unary math: ember.f(x, out=), x.f(), x.f_(), ember.f_(x).
  struct Row {
    const char* name;
    UnaryOp op;
    uint8_t where;
  };
  const Row rows[] = {
      {"abs", UnaryOp::Abs, kStd},
      {"absolute", UnaryOp::Abs, kStd},
      {"sign", UnaryOp::Sign, kStd},
      {"sgn", UnaryOp::Sgn, kStd},
      {"neg", UnaryOp::Neg, kStd},
      {"negative", UnaryOp::Neg, kStd},
      {"exp", UnaryOp::Exp, kStd},
      {"exp2", UnaryOp::Exp2, kStd},
      {"expm1", UnaryOp::Expm1, kStd},
      {"log", UnaryOp::Log, kStd},
      {"log2", UnaryOp::Log2, kStd},
      {"log10", UnaryOp::Log10, kStd},
      {"log1p", UnaryOp::Log1p, kStd},
      {"sqrt", UnaryOp::Sqrt, kStd},
      {"rsqrt", UnaryOp::Rsqrt, kStd},
      {"square", UnaryOp::Square, kStd},
      {"sin", UnaryOp::Sin, kStd},
      {"cos", UnaryOp::Cos, kStd},
      {"tan", UnaryOp::Tan, kStd},
      {"asin", UnaryOp::Asin, kStd},
      {"acos", UnaryOp::Acos, kStd},
      {"atan", UnaryOp::Atan, kStd},
      {"arcsin", UnaryOp::Asin, kStd},
      {"arccos", UnaryOp::Acos, kStd},
      {"arctan", UnaryOp::Atan, kStd},
      {"sinh", UnaryOp::Sinh, kStd},
      {"cosh", UnaryOp::Cosh, kStd},
      {"tanh", UnaryOp::Tanh, kStd},
      {"asinh", UnaryOp::Asinh, kStd},
      {"acosh", UnaryOp::Acosh, kStd},
      {"atanh", UnaryOp::Atanh, kStd},
      {"arcsinh", UnaryOp::Asinh, kStd},
      {"arccosh", UnaryOp::Acosh, kStd},
      {"arctanh", UnaryOp::Atanh, kStd},
      {"sigmoid", UnaryOp::Sigmoid, kStd},
      {"erf", UnaryOp::Erf, kStd},
      {"erfc", UnaryOp::Erfc, kStd},
      {"erfinv", UnaryOp::Erfinv, kStd},
      {"lgamma", UnaryOp::Lgamma, kStd},
      {"digamma", UnaryOp::Digamma, kStd},
      {"floor", UnaryOp::Floor, kStd},
      {"ceil", UnaryOp::Ceil, kStd},
      {"trunc", UnaryOp::Trunc, kStd},
      {"fix", UnaryOp::Trunc, kStd},
      {"frac", UnaryOp::Frac, kStd},
      {"reciprocal", UnaryOp::Reciprocal, kStd},
      {"logical_not", UnaryOp::LogicalNot, kStd},
      {"bitwise_not", UnaryOp::BitwiseNot, kStd},
      {"isnan", UnaryOp::Isnan, kPure},
      {"isinf", UnaryOp::Isinf, kPure},
      {"isfinite", UnaryOp::Isfinite, kPure},
      {"isposinf", UnaryOp::Isposinf, kPure},
      {"isneginf", UnaryOp::Isneginf, kPure},
      {"signbit", UnaryOp::Signbit, kPure},
      {"relu", UnaryOp::Relu, kStd},
      {"selu", UnaryOp::Selu, kFn | kInplace},
      // activations the nn.functional module exposes (not ember.* in PyTorch)
      {"relu6", UnaryOp::Relu6, kFn},
      {"silu", UnaryOp::Silu, kFn | kInplace},
      {"mish", UnaryOp::Mish, kFn | kInplace},
      {"hardsigmoid", UnaryOp::Hardsigmoid, kFn | kInplace},
      {"hardswish", UnaryOp::Hardswish, kFn | kInplace},
      {"log_sigmoid", UnaryOp::Logsigmoid, kFn},
  };
  for (const Row& r : rows) def_unary(m, cls, r.name, r.op, r.where);
  cls.def("__abs__", [](const Tensor& a) { return abs(a); });
  cls.def("__invert__", [](const Tensor& a) { return bitwise_not(a); });
  m.def("positive", &positive, nb::arg("input"));
  cls.def("positive", &positive);

  // Unary ops with arguments.
  auto logit_p = [](nb::handle eps) { return UnaryParams{.p0 = eps.is_none() ? -1.0 : nb::cast<double>(eps)}; };
  m.def(
      "logit",
      [logit_p](const Tensor& a, nb::handle eps, nb::handle out) {
        return unary_op(UnaryOp::Logit, a, out_arg(out), false, logit_p(eps));
      },
      nb::arg("input"), nb::arg("eps") = nb::none(), nb::kw_only(), nb::arg("out") = nb::none());
  cls.def(
      "logit",
      [logit_p](const Tensor& a, nb::handle eps) { return unary_op(UnaryOp::Logit, a, {}, false, logit_p(eps)); },
      nb::arg("eps") = nb::none());
  auto logit_ = [logit_p](Tensor& a, nb::handle eps) -> Tensor {
    return unary_op(UnaryOp::Logit, a, a, true, logit_p(eps));
  };
  cls.def("logit_", logit_, nb::arg("eps") = nb::none());
  m.def("logit_", logit_, nb::arg("input"), nb::arg("eps") = nb::none());

  // polygamma(n, input): n comes first in the function, the method takes only n.
  auto poly_p = [](int64_t n) {
    EMBER_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
    return UnaryParams{.p0 = static_cast<double>(n)};
  };
  m.def(
      "polygamma",
      [poly_p](int64_t n, const Tensor& a, nb::handle out) {
        return unary_op(UnaryOp::Polygamma, a, out_arg(out), false, poly_p(n));
      },
      nb::arg("n"), nb::arg("input"), nb::kw_only(), nb::arg("out") = nb::none());
  cls.def(
      "polygamma",
      [poly_p](const Tensor& a, int64_t n) { return unary_op(UnaryOp::Polygamma, a, {}, false, poly_p(n)); },
      nb::arg("n"));
  cls.def(
      "polygamma_",
      [poly_p](Tensor& a, int64_t n) -> Tensor { return unary_op(UnaryOp::Polygamma, a, a, true, poly_p(n)); },
      nb::arg("n"));

  // Regularized incomplete gamma functions (ops/special.h).
  for (bool upper : {false, true}) {
    const char* name = upper ? "igammac" : "igamma";
    auto f = [upper](const Tensor& a, const Tensor& x) { return upper ? igammac(a, x) : igamma(a, x); };
    m.def(
        name,
        [f](const Tensor& a, const Tensor& x, nb::handle out) {
          if (out.is_none()) return f(a, x);
          Tensor o = nb::cast<Tensor>(out);
          assert_no_internal_overlap(o);  // Note [Memory overlap]: as the elementwise ops' out=
          assert_no_partial_overlap(o, a);
          assert_no_partial_overlap(o, x);
          Tensor r = f(a, x);
          resize_(o, r.sizes());
          copy_(o, r);
          return o;
        },
        nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("out") = nb::none());
    cls.def(name, f, nb::arg("other"));
    cls.def((std::string(name) + "_").c_str(),
            [f](Tensor& self, const Tensor& x) -> Tensor {
              assert_no_internal_overlap(self);
              assert_no_partial_overlap(self, x);
              Tensor r = f(self, x);
              EMBER_CHECK(r.sizes() == self.sizes(), "output with shape ", self.shape_str(),
                          " doesn't match the broadcast shape ", shape_str(r.sizes()));
              return copy_(self, r);
            },
            nb::arg("other"));
  }

  // Bessel functions (ops/bessel.cpp); ember/_api_math.py gives them torch's names, out= and in-place forms.
  m.def(
      "_bessel",
      [](const std::string& name, const Tensor& x) {
        static const std::pair<const char*, BesselOp> kOps[] = {
            {"i0", BesselOp::I0}, {"i0e", BesselOp::I0e}, {"i1", BesselOp::I1}, {"i1e", BesselOp::I1e},
            {"k0", BesselOp::K0}, {"k0e", BesselOp::K0e}, {"k1", BesselOp::K1}, {"k1e", BesselOp::K1e},
            {"j0", BesselOp::J0}, {"j1", BesselOp::J1},   {"y0", BesselOp::Y0}, {"y1", BesselOp::Y1}};
        for (const auto& [n, op] : kOps)
          if (name == n) return bessel(op, x);
        throw nb::value_error(("_bessel: unknown function " + name).c_str());
      },
      nb::arg("name"), nb::arg("input"));

  // erfcx, log_ndtr, ndtri, airy_ai, entr (ops/special_unary.cpp); ember/_api_math.py gives them out=.
  m.def(
      "_special_unary",
      [](const std::string& name, const Tensor& x) {
        static const std::pair<const char*, SpecialUnaryOp> kOps[] = {{"erfcx", SpecialUnaryOp::Erfcx},
                                                                      {"log_ndtr", SpecialUnaryOp::LogNdtr},
                                                                      {"ndtri", SpecialUnaryOp::Ndtri},
                                                                      {"airy_ai", SpecialUnaryOp::AiryAi},
                                                                      {"entr", SpecialUnaryOp::Entr}};
        for (const auto& [n, op] : kOps)
          if (name == n) return special_unary(op, x);
        throw nb::value_error(("_special_unary: unknown function " + name).c_str());
      },
      nb::arg("name"), nb::arg("input"));

  // logaddexp, logaddexp2, zeta (ops/special_binary.cpp); ember's Python layer wraps number operands.
  m.def(
      "_special_binary",
      [](const std::string& name, const Tensor& a, const Tensor& b, std::optional<Tensor> out) {
        static const std::pair<const char*, SpecialBinaryOp> kOps[] = {{"logaddexp", SpecialBinaryOp::LogAddExp},
                                                                       {"logaddexp2", SpecialBinaryOp::LogAddExp2},
                                                                       {"zeta", SpecialBinaryOp::Zeta}};
        for (const auto& [n, op] : kOps)
          if (name == n) return special_binary(op, a, b, out ? *out : Tensor());
        throw nb::value_error(("_special_binary: unknown function " + name).c_str());
      },
      nb::arg("name"), nb::arg("input"), nb::arg("other"), nb::arg("out").none() = nb::none());

  // Orthogonal polynomials (ops/polynomials.cpp); ember/_api_math.py promotes, broadcasts, names them.
  m.def(
      "_orthogonal_polynomial",
      [](const std::string& name, const Tensor& x, const Tensor& n) {
        static const std::pair<const char*, PolynomialKind> kKinds[] = {
            {"chebyshev_polynomial_t", PolynomialKind::ChebyshevT},
            {"chebyshev_polynomial_u", PolynomialKind::ChebyshevU},
            {"chebyshev_polynomial_v", PolynomialKind::ChebyshevV},
            {"chebyshev_polynomial_w", PolynomialKind::ChebyshevW},
            {"hermite_polynomial_h", PolynomialKind::HermiteH},
            {"hermite_polynomial_he", PolynomialKind::HermiteHe},
            {"laguerre_polynomial_l", PolynomialKind::LaguerreL},
            {"legendre_polynomial_p", PolynomialKind::LegendreP}};
        for (const auto& [k, kind] : kKinds)
          if (name == k) return orthogonal_polynomial(kind, x, n);
        throw nb::value_error(("_orthogonal_polynomial: unknown polynomial " + name).c_str());
      },
      nb::arg("name"), nb::arg("input"), nb::arg("n"));

  auto round_p = [](int64_t d) { return UnaryParams{.p0 = static_cast<double>(d)}; };
  m.def(
      "round",
      [round_p](const Tensor& a, int64_t d, nb::handle out) {
        return unary_op(UnaryOp::Round, a, out_arg(out), false, round_p(d));
      },
      nb::arg("input"), nb::kw_only(), nb::arg("decimals") = 0, nb::arg("out") = nb::none());
  cls.def(
      "round", [round_p](const Tensor& a, int64_t d) { return unary_op(UnaryOp::Round, a, {}, false, round_p(d)); },
      nb::kw_only(), nb::arg("decimals") = 0);
  auto round_ = [round_p](Tensor& a, int64_t d) -> Tensor { return unary_op(UnaryOp::Round, a, a, true, round_p(d)); };
  cls.def("round_", round_, nb::kw_only(), nb::arg("decimals") = 0);
  m.def("round_", round_, nb::arg("input"), nb::kw_only(), nb::arg("decimals") = 0);

  auto n2n_p = [](nb::handle nan, nb::handle pos, nb::handle neg) {
    UnaryParams p{
        .p0 = opt_double(nan).value_or(0.0), .p1 = opt_double(pos).value_or(0.0), .p2 = opt_double(neg).value_or(0.0)};
    p.has_p1 = !pos.is_none(), p.has_p2 = !neg.is_none();
    return p;
  };
  m.def(
      "nan_to_num",
      [n2n_p](const Tensor& a, nb::handle nan, nb::handle pos, nb::handle neg, nb::handle out) {
        return unary_op(UnaryOp::NanToNum, a, out_arg(out), false, n2n_p(nan, pos, neg));
      },
      nb::arg("input"), nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none(),
      nb::kw_only(), nb::arg("out") = nb::none());
  cls.def(
      "nan_to_num",
      [n2n_p](const Tensor& a, nb::handle nan, nb::handle pos, nb::handle neg) {
        return unary_op(UnaryOp::NanToNum, a, {}, false, n2n_p(nan, pos, neg));
      },
      nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none());
  auto n2n_ = [n2n_p](Tensor& a, nb::handle nan, nb::handle pos, nb::handle neg) -> Tensor {
    return unary_op(UnaryOp::NanToNum, a, a, true, n2n_p(nan, pos, neg));
  };
  cls.def("nan_to_num_", n2n_, nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none());
  m.def("nan_to_num_", n2n_, nb::arg("input"), nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(),
        nb::arg("neginf") = nb::none());

  // clamp / clip (number or tensor bounds), clamp_min, clamp_max.
  for (const char* name : {"clamp", "clip"}) {
    m.def(
        name,
        [](const Tensor& a, nb::handle lo, nb::handle hi, nb::handle out) {
          return clamp_any(a, lo, hi, out_arg(out), false);
        },
        nb::arg("input"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none(), nb::kw_only(),
        nb::arg("out") = nb::none());
    cls.def(
        name, [](const Tensor& a, nb::handle lo, nb::handle hi) { return clamp_any(a, lo, hi, Tensor(), false); },
        nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
    auto ip = [](Tensor& a, nb::handle lo, nb::handle hi) -> Tensor { return clamp_any(a, lo, hi, a, true); };
    std::string ipn = std::string(name) + "_";
    cls.def(ipn.c_str(), ip, nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
    m.def(ipn.c_str(), ip, nb::arg("input"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  }
  for (bool is_min : {true, false}) {
    const char* name = is_min ? "clamp_min" : "clamp_max";
    auto f = [is_min](const Tensor& a, nb::handle b, nb::handle out) {
      return is_min ? clamp_any(a, b, nb::none(), out_arg(out), false)
                    : clamp_any(a, nb::none(), b, out_arg(out), false);
    };
    m.def(name, f, nb::arg("input"), nb::arg(is_min ? "min" : "max"), nb::kw_only(), nb::arg("out") = nb::none());
    cls.def(
        name, [f](const Tensor& a, nb::handle b) { return f(a, b, nb::none()); }, nb::arg(is_min ? "min" : "max"));
    auto ip = [is_min](Tensor& a, nb::handle b) -> Tensor {
      return is_min ? clamp_any(a, b, nb::none(), a, true) : clamp_any(a, nb::none(), b, a, true);
    };
    std::string ipn = std::string(name) + "_";
    cls.def(ipn.c_str(), ip, nb::arg(is_min ? "min" : "max"));
    m.def(ipn.c_str(), ip, nb::arg("input"), nb::arg(is_min ? "min" : "max"));
  }

  // Activations with arguments. `_` variants are in place (nn.functional's inplace=True).
  auto def_act = [&](const char* name, UnaryOp op, auto params, auto... args) {
    m.def(
        name,
        [op, params](const Tensor& a, decltype(args.value)... v) { return unary_op(op, a, {}, false, params(v...)); },
        nb::arg("input"), nb::arg(args.name) = args.value...);
    std::string ip = std::string(name) + "_";
    m.def(
        ip.c_str(),
        [op, params](Tensor& a, decltype(args.value)... v) -> Tensor { return unary_op(op, a, a, true, params(v...)); },
        nb::arg("input"), nb::arg(args.name) = args.value...);
  };
  struct D {
    const char* name;
    double value;
  };
  def_act(
      "leaky_relu", UnaryOp::LeakyRelu, [](double s) { return UnaryParams{.p0 = s}; }, D{"negative_slope", 0.01});
  def_act(
      "elu", UnaryOp::Elu, [](double a, double s, double is) { return UnaryParams{.p0 = a, .p1 = s, .p2 = is}; },
      D{"alpha", 1.0}, D{"scale", 1.0}, D{"input_scale", 1.0});
  def_act(
      "celu", UnaryOp::Elu,
      [](double a) {
        EMBER_CHECK(a != 0, "ZeroDivisionError");
        return UnaryParams{.p0 = a, .p1 = 1.0, .p2 = 1.0 / a};
      },
      D{"alpha", 1.0});
  def_act(
      "softplus", UnaryOp::Softplus, [](double b, double t) { return UnaryParams{.p0 = b, .p1 = t}; }, D{"beta", 1.0},
      D{"threshold", 20.0});
  def_act(
      "hardtanh", UnaryOp::Hardtanh, [](double lo, double hi) { return UnaryParams{.p0 = lo, .p1 = hi}; },
      D{"min_val", -1.0}, D{"max_val", 1.0});
  m.def(
      "relu6_", [](Tensor& a) -> Tensor { return unary_op(UnaryOp::Relu6, a, a, true); }, nb::arg("input"));
  m.def(
      "threshold",
      [](const Tensor& a, nb::handle th, nb::handle v, nb::handle out) {
        return unary_op(UnaryOp::Threshold, a, out_arg(out), false, threshold_params(a, th, v));
      },
      nb::arg("input"), nb::arg("threshold"), nb::arg("value"), nb::kw_only(), nb::arg("out") = nb::none());
  m.def(
      "threshold_",
      [](Tensor& a, nb::handle th, nb::handle v) -> Tensor {
        return unary_op(UnaryOp::Threshold, a, a, true, threshold_params(a, th, v));
      },
      nb::arg("input"), nb::arg("threshold"), nb::arg("value"));
  m.def(
      "gelu", [](const Tensor& a, const std::string& approximate) { return gelu(a, approximate); }, nb::arg("input"),
      nb::arg("approximate") = "none");
  m.def("softsign", &softsign, nb::arg("input"));

  // Binary pointwise ops.
  def_pointwise(m, cls, "atan2", PointwiseOp::Atan2, true, false, "arctan2");
  def_pointwise(m, cls, "maximum", PointwiseOp::Maximum, false, false);
  def_pointwise(m, cls, "minimum", PointwiseOp::Minimum, false, false);
  def_pointwise(m, cls, "fmax", PointwiseOp::Fmax, false, false);
  def_pointwise(m, cls, "fmin", PointwiseOp::Fmin, false, false);
  def_pointwise(m, cls, "hypot", PointwiseOp::Hypot, true, false);
  def_pointwise(m, cls, "copysign", PointwiseOp::Copysign, true, true);
  def_pointwise(m, cls, "fmod", PointwiseOp::Fmod, true, true);
  def_pointwise(m, cls, "logical_and", PointwiseOp::LogicalAnd, true, false);
  def_pointwise(m, cls, "logical_or", PointwiseOp::LogicalOr, true, false);
  def_pointwise(m, cls, "logical_xor", PointwiseOp::LogicalXor, true, false);
  def_pointwise(m, cls, "bitwise_and", PointwiseOp::BitwiseAnd, true, true, nullptr, true);
  def_pointwise(m, cls, "bitwise_or", PointwiseOp::BitwiseOr, true, true, nullptr, true);
  def_pointwise(m, cls, "bitwise_xor", PointwiseOp::BitwiseXor, true, true, nullptr, true);
  def_pointwise(m, cls, "bitwise_left_shift", PointwiseOp::LeftShift, true, true, nullptr, true);
  def_pointwise(m, cls, "bitwise_right_shift", PointwiseOp::RightShift, true, true, nullptr, true);
  def_operator(cls, PointwiseOp::BitwiseAnd, "__and__", "__rand__", "__iand__");
  def_operator(cls, PointwiseOp::BitwiseOr, "__or__", "__ror__", "__ior__");
  def_operator(cls, PointwiseOp::BitwiseXor, "__xor__", "__rxor__", "__ixor__");
  def_operator(cls, PointwiseOp::LeftShift, "__lshift__", "__rlshift__", "__ilshift__");
  def_operator(cls, PointwiseOp::RightShift, "__rshift__", "__rrshift__", "__irshift__");

  // Ternary ops.
  auto weight = [](nb::handle w) { return tensor_arg(w, "lerp"); };
  m.def(
      "lerp",
      [weight](const Tensor& a, const Tensor& e, nb::handle w, nb::handle out) {
        return lerp(a, e, weight(w), out_arg(out));
      },
      nb::arg("input"), nb::arg("end"), nb::arg("weight"), nb::kw_only(), nb::arg("out") = nb::none());
  cls.def(
      "lerp", [weight](const Tensor& a, const Tensor& e, nb::handle w) { return lerp(a, e, weight(w)); },
      nb::arg("end"), nb::arg("weight"));
  cls.def(
      "lerp_", [weight](Tensor& a, const Tensor& e, nb::handle w) -> Tensor { return lerp(a, e, weight(w), a, true); },
      nb::arg("end"), nb::arg("weight"));
  for (bool is_div : {false, true}) {
    const char* name = is_div ? "addcdiv" : "addcmul";
    auto f = [is_div, name](const Tensor& a, const Tensor& t1, const Tensor& t2, nb::handle value, Tensor out,
                            bool ip) {
      Scalar v = number_arg(value, name, "value");
      return is_div ? addcdiv(a, t1, t2, v, out, ip) : addcmul(a, t1, t2, v, out, ip);
    };
    m.def(
        name,
        [f](const Tensor& a, const Tensor& t1, const Tensor& t2, nb::handle value, nb::handle out) {
          return f(a, t1, t2, value, out_arg(out), false);
        },
        nb::arg("input"), nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1,
        nb::arg("out") = nb::none());
    cls.def(
        name,
        [f](const Tensor& a, const Tensor& t1, const Tensor& t2, nb::handle value) {
          return f(a, t1, t2, value, Tensor(), false);
        },
        nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
    std::string ip = std::string(name) + "_";
    cls.def(
        ip.c_str(),
        [f](Tensor& a, const Tensor& t1, const Tensor& t2, nb::handle value) -> Tensor {
          return f(a, t1, t2, value, a, true);
        },
        nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  }
  m.def(
      "where",
      [](const Tensor& cond, nb::handle a, nb::handle b, nb::handle out) -> nb::object {
        if (a.is_none() && b.is_none() && out.is_none()) return nonzero_tuple(cond);
        return nb::cast(where(cond, tensor_arg(a, "where"), tensor_arg(b, "where"), out_arg(out)));
      },
      nb::arg("condition"), nb::arg("input") = nb::none(), nb::arg("other") = nb::none(), nb::kw_only(),
      nb::arg("out") = nb::none());
  cls.def(
      "where",
      [](const Tensor& self, const Tensor& cond, nb::handle b) { return where(cond, self, tensor_arg(b, "where")); },
      nb::arg("condition"), nb::arg("other"));

  m.def(
      "isclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
        return isclose(a, b, rtol, atol, equal_nan);
      },
      nb::arg("input"), nb::arg("other"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false);
  cls.def(
      "isclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
        return isclose(a, b, rtol, atol, equal_nan);
      },
      nb::arg("other"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false);
  m.def(
      "allclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
        return allclose(a, b, rtol, atol, equal_nan);
      },
      nb::arg("input"), nb::arg("other"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false);
  cls.def(
      "allclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
        return allclose(a, b, rtol, atol, equal_nan);
      },
      nb::arg("other"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false);
  m.def("equal", &equal, nb::arg("input"), nb::arg("other"));
  cls.def("equal", &equal, nb::arg("other"));
}

}  // namespace ember::py
