#include <cmath>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/core/checked_math.h"
#include "ember/core/dispatch.h"
#include "ember/cpu/binary_kernels.h"
#include "ember/cpu/complex_kernels.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

struct PromotionState {
  ScalarType dim = ScalarType::Undefined, zero = ScalarType::Undefined, wrapped = ScalarType::Undefined;
  void add(const Tensor& t) {
    ScalarType dt = t.dtype();
    if (t.impl()->wrapped_number) {
      if (is_floating_point(dt)) dt = default_dtype();
      if (is_complex(dt)) dt = complex_for(default_dtype());
      wrapped = promote_types(wrapped, dt);
    } else if (t.dim() == 0) {
      zero = promote_types(zero, dt);
    } else {
      dim = promote_types(dim, dt);
    }
  }
  // A lower-priority group only matters when it is of a higher category.
  static ScalarType combine(ScalarType higher, ScalarType lower) {
    if (higher == ScalarType::Undefined) return lower;
    if (lower == ScalarType::Undefined || is_complex(higher)) return higher;
    if (is_complex(lower)) {  // a float keeps its precision: float32 + complex128 0-d is complex64
      if (higher == ScalarType::Float16)
        EMBER_NOT_IMPLEMENTED(
            "complex32 (ComplexHalf) is not supported: a float16 tensor combined with a complex number");
      if (is_floating_point(higher)) return complex_for(higher);
      return lower;
    }
    if (is_floating_point(higher)) return higher;
    if (higher == ScalarType::Bool || is_floating_point(lower) || is_complex(lower))
      return promote_types(higher, lower);
    return higher;
  }
  ScalarType result() const { return combine(dim, combine(zero, wrapped)); }
};

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "add";
    case BinaryOp::Sub:
      return "sub";
    case BinaryOp::Mul:
      return "mul";
    case BinaryOp::Div:
      return "div";
    case BinaryOp::DivTrunc:
      return "div_trunc";
    case BinaryOp::DivFloor:
      return "floor_divide";
    case BinaryOp::Remainder:
      return "remainder";
    case BinaryOp::Pow:
      return "pow";
    case BinaryOp::Eq:
      return "eq";
    case BinaryOp::Ne:
      return "ne";
    case BinaryOp::Lt:
      return "lt";
    case BinaryOp::Le:
      return "le";
    case BinaryOp::Gt:
      return "gt";
    case BinaryOp::Ge:
      return "ge";
  }
  return "?";
}
bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

bool any_zero(const Tensor& t) {
  return EMBER_DISPATCH_ALL(t.dtype(), "check", [&]() -> bool {
    Tensor c = contiguous(t);
    const scalar_t* p = c.data<scalar_t>();
    for (int64_t i = 0; i < c.numel(); ++i)
      if (static_cast<opmath_t<scalar_t>>(p[i]) == 0) return true;
    return false;
  });
}
bool any_negative(const Tensor& t) {
  return EMBER_DISPATCH_ALL(t.dtype(), "check", [&]() -> bool {
    if constexpr (std::is_unsigned_v<scalar_t> || std::is_same_v<scalar_t, bool>) {
      return false;
    } else {
      Tensor c = contiguous(t);
      const scalar_t* p = c.data<scalar_t>();
      for (int64_t i = 0; i < c.numel(); ++i)
        if (static_cast<double>(static_cast<opmath_t<scalar_t>>(p[i])) < 0) return true;
      return false;
    }
  });
}

void run_kernel(BinaryOp op, const TensorIter& it, ScalarType compute, Scalar alpha) {
  if (is_complex(compute)) return cpu::complex_binary_kernel(op, it, compute, alpha);
  cpu::binary_kernel(op, it, compute, alpha, op_name(op));
}

void check_cast(ScalarType result, ScalarType out) {
  EMBER_CHECK(can_cast(result, out), "result type ", dtype_name(result), " can't be cast to the desired output type ",
              dtype_name(out));
}

}  // namespace

ScalarType result_type(const Tensor& a, const Tensor& b) {
  PromotionState st;
  st.add(a);
  st.add(b);
  return st.result();
}

ScalarType result_type(std::initializer_list<Tensor> ts) {
  PromotionState st;
  for (const Tensor& t : ts)
    if (t.defined()) st.add(t);
  return st.result();
}

namespace {
Tensor binary_op_raw(BinaryOp op, const Tensor& a, const Tensor& b, Tensor out, bool inplace, Scalar alpha) {
  const char* name = op_name(op);
  ScalarType common = result_type(a, b);
  if (op == BinaryOp::Div && is_integral(common, true)) common = default_dtype();
  if (op == BinaryOp::Sub && a.dtype() == ScalarType::Bool && b.dtype() == ScalarType::Bool)
    throw Error(
        "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
        "`logical_xor()` operator instead.");
  if (op == BinaryOp::Sub && (a.dtype() == ScalarType::Bool || b.dtype() == ScalarType::Bool))
    throw Error(
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
        "mask, use the `~` or `logical_not()` operator instead.");
  if (is_complex(common) &&
      (op == BinaryOp::DivTrunc || op == BinaryOp::DivFloor || op == BinaryOp::Remainder || op >= BinaryOp::Lt)) {
    const char* kname = op == BinaryOp::DivTrunc   ? "div_trunc_cpu"
                        : op == BinaryOp::DivFloor ? "div_floor_cpu"
                                                   : nullptr;
    EMBER_NOT_IMPLEMENTED("\"", kname ? kname : name, kname ? "" : "_cpu", "\" not implemented for '",
                          dtype_name(common), "'");
  }
  if (op == BinaryOp::DivFloor && common == ScalarType::Bool)
    EMBER_NOT_IMPLEMENTED("\"div_floor_cpu\" not implemented for 'Bool'");
  if (op == BinaryOp::Remainder && common == ScalarType::Bool)  // x % False divides by zero; as floor_divide, fmod
    EMBER_NOT_IMPLEMENTED("\"remainder_cpu\" not implemented for 'Bool'");
  if (op == BinaryOp::Add || op == BinaryOp::Sub) {
    EMBER_CHECK(!(is_integral(common, true) && (alpha.is_floating() || alpha.is_complex())),
                "For integral input tensors, argument alpha must not be a floating point number.");
    EMBER_CHECK(!(alpha.is_bool() && common != ScalarType::Bool), "Boolean alpha only supported for Boolean results.");
    EMBER_CHECK(!alpha.is_complex() || is_complex(common),
                "For non-complex input tensors, argument alpha must not be a complex number.");
  }
  // A Python-number exponent must fit the result type, except float/double whose pow takes a double exponent.
  if (op == BinaryOp::Pow && b.defined() && common != ScalarType::Float32 && common != ScalarType::Float64)
    check_number_fits(b, common);
  ScalarType result = is_comparison(op) ? ScalarType::Bool : common;
  Tensor ca = to_dtype(a, common), cb = to_dtype(b, common);
  if (is_integral(common, false) && ca.numel() > 0 && cb.numel() > 0) {
    if ((op == BinaryOp::DivTrunc || op == BinaryOp::DivFloor || op == BinaryOp::Remainder) && any_zero(cb))
      throw Error("ZeroDivisionError");
    // A negative Python-number exponent is an error; negative tensor exponents truncate (as PyTorch).
    if (op == BinaryOp::Pow && b.impl()->wrapped_number && any_negative(cb))
      throw Error("Integers to negative integer powers are not allowed.");
  }
  if (inplace || out.defined()) {
    check_cast(result, out.dtype());
    if (out.dtype() != result) {  // compute in the result type, then convert into out
      check_elementwise_overlap(out, {&a, &b});
      Tensor tmp;
      if (inplace) {
        TensorIter it(tmp, {ca, cb}, result, name);
        EMBER_CHECK(tmp.sizes() == out.sizes(), "output with shape ", out.shape_str(),
                    " doesn't match the broadcast shape ", tmp.shape_str());
        run_kernel(op, it, common, alpha);
      } else {
        TensorIter it(tmp, {ca, cb}, result, name);
        run_kernel(op, it, common, alpha);
        resize_(out, tmp.sizes());
      }
      copy_(out, tmp);
      return out;
    }
    TensorIter it(out, {ca, cb}, result, name, /*resize_out=*/!inplace);
    run_kernel(op, it, common, alpha);
    out.bump_version();
    return out;
  }
  TensorIter it(out, {ca, cb}, result, name);
  run_kernel(op, it, common, alpha);
  return out;
}

using namespace autograd;

std::shared_ptr<Node> binary_node(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& result, Scalar alpha) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      std::shared_ptr<AddBackward0> n =
          op == BinaryOp::Add ? make_node<AddBackward0>(a, b) : make_node<SubBackward0>(a, b);
      if (!n) return nullptr;
      n->alpha = op == BinaryOp::Sub ? Scalar(-alpha.to_double()) : alpha;
      if (op == BinaryOp::Sub && alpha.is_integral()) n->alpha = Scalar(-alpha.to_int());
      if (op == BinaryOp::Sub && alpha.is_complex()) n->alpha = Scalar(-alpha.to_complex());
      n->self_sizes = a.sizes(), n->other_sizes = b.sizes();
      n->self_dtype = a.dtype(), n->other_dtype = b.dtype();
      return n;
    }
    case BinaryOp::Mul: {
      auto n = make_node<MulBackward0>(a, b);
      if (n) n->self = SavedVariable(a, false), n->other = SavedVariable(b, false);
      return n;
    }
    case BinaryOp::Div: {
      auto n = make_node<DivBackward0>(a, b);
      if (n) n->self = SavedVariable(a, false), n->other = SavedVariable(b, false);
      return n;
    }
    case BinaryOp::Pow: {
      auto n = make_node<PowBackward0>(a, b);
      if (n) n->self = SavedVariable(a, false), n->exponent = SavedVariable(b, false);
      // torch's overloads: pow(Tensor, Scalar) PowBackward0, (Tensor, Tensor) 1, (Scalar, Tensor) 2.
      if (n && !is_wrapped_number(b)) n->name_override = is_wrapped_number(a) ? "PowBackward2" : "PowBackward1";
      (void)result;
      return n;
    }
    case BinaryOp::DivTrunc: {  // piecewise constant: zero gradient
      auto n = make_node<LambdaBackward>(a, b);
      if (!n) return nullptr;
      n->name_ = "DivBackward2";
      Shape sa = a.sizes(), sb = b.sizes();
      ScalarType da = a.dtype(), db = b.dtype();
      n->fn = [sa, sb, da, db](const TensorList&, const TensorList&) -> TensorList {
        return {zeros(sa, da), zeros(sb, db)};
      };
      return n;
    }
    case BinaryOp::DivFloor:
    case BinaryOp::Remainder: {
      auto n = make_node<LambdaBackward>(a, b);
      if (!n) return nullptr;
      bool rem = op == BinaryOp::Remainder;
      n->name_ = rem ? "RemainderBackward0" : "NotImplemented";
      n->saved = {SavedVariable(a, false), SavedVariable(b, false)};
      n->fn = [rem](const TensorList& g, const TensorList& s) -> TensorList {
        if (!rem) throw Error("derivative for aten::floor_divide is not implemented");
        // a - floor(a / b) * b: d/da = 1, d/db = -floor(a / b)
        return {sum_to(g[0], s[0].sizes()), sum_to(neg(mul(g[0], floor_divide(s[0], s[1]))), s[1].sizes())};
      };
      return n;
    }
    default:  // comparisons: boolean results carry no gradient
      return nullptr;
  }
}

bool is_differentiable(BinaryOp op) { return op < BinaryOp::Eq; }

}  // namespace

Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, Tensor out, bool inplace, Scalar alpha) {
  if (inplace && a.impl()->view_made_no_grad) check_no_grad_view_inplace(a, {&b});
  if (is_differentiable(op) && needs_history({&a, &b})) {
    if (inplace) {
      check_elementwise_overlap(a, {&b});
      check_inplace(a, true);
      Tensor prev = clone(a);
      Tensor r = binary_op(op, prev, b, Tensor(), false, alpha);
      EMBER_CHECK(r.sizes() == a.sizes(), "output with shape ", a.shape_str(), " doesn't match the broadcast shape ",
                  r.shape_str());
      EMBER_CHECK(can_cast(r.dtype(), a.dtype()), "result type ", dtype_name(r.dtype()),
                  " can't be cast to the desired output type ", dtype_name(a.dtype()));
      {
        NoGradGuard no_grad;
        copy_(out, r);
      }
      if (auto fn = grad_fn(r)) rebase_history(a, fn);
      return a;
    }
    ew::check_no_out_grad(op_name(op), out, {&a, &b});
    Tensor r = binary_op_raw(op, a, b, Tensor(), false, alpha);
    if (auto node = binary_node(op, a, b, r, alpha)) set_history(r, node);
    return r;
  }
  return binary_op_raw(op, a, b, std::move(out), inplace, alpha);
}

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) { return binary_op(BinaryOp::Add, a, b, {}, false, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) { return binary_op(BinaryOp::Sub, a, b, {}, false, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b, const std::string& mode) {
  if (mode.empty()) return binary_op(BinaryOp::Div, a, b);
  if (mode == "trunc") return binary_op(BinaryOp::DivTrunc, a, b);
  if (mode == "floor") return binary_op(BinaryOp::DivFloor, a, b);
  throw Error("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + mode + "'");
}
Tensor floor_divide(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::DivFloor, a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Remainder, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Pow, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Ge, a, b); }

// neg and relu live with the unary family (ops/unary.cpp).

}  // namespace ember
