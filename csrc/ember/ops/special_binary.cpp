// logaddexp, logaddexp2 and special.zeta (ops/special_binary.h): type promotion, out= and the
// derivatives here, the elementwise kernels in cpu/special_binary_kernels.cpp (Note [logaddexp]).
#include "ember/ops/special_binary.h"

#include "ember/autograd/functions.h"
#include "ember/core/type_name.h"
#include "ember/cpu/special_binary_kernels.h"
#include "ember/ops/elementwise.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

const char* op_name(SpecialBinaryOp op) {
  switch (op) {
    case SpecialBinaryOp::LogAddExp:
      return "logaddexp";
    case SpecialBinaryOp::LogAddExp2:
      return "logaddexp2";
    case SpecialBinaryOp::Zeta:
      return "zeta";
  }
  return "?";
}

// The dtype the kernel computes and returns: the promoted type, integers to the default dtype
// for zeta; anything else without a kernel raises torch's NotImplementedError.
ScalarType compute_dtype(SpecialBinaryOp op, const Tensor& a, const Tensor& b) {
  const ScalarType common = result_type(a, b);
  const bool half = common == ScalarType::Float16 || common == ScalarType::BFloat16;
  if (op == SpecialBinaryOp::Zeta && !is_complex(common) && !half)
    return is_floating_point(common) ? common : default_dtype();
  if (op != SpecialBinaryOp::Zeta && is_floating_point(common)) return common;
  EMBER_NOT_IMPLEMENTED("\"", op_name(op), "_cpu\" not implemented for '", scalar_type_name(common), "'");
}

Tensor values(SpecialBinaryOp op, const Tensor& a, const Tensor& b, Tensor out) {
  const char* name = op_name(op);
  // Shapes before dtypes, as torch's iterator: a size mismatch outranks a dtype without a kernel.
  if (!(a.sizes() == b.sizes())) broadcast_shapes(a.sizes(), b.sizes(), name);
  const ScalarType dt = compute_dtype(op, a, b);
  const Tensor ca = to_dtype(a, dt), cb = to_dtype(b, dt);
  // The iterator sees the converted copies; the written-to tensor must not overlap the originals.
  if (out.defined() && (!ca.is_same(a) || !cb.is_same(b))) check_elementwise_overlap(out, {&a, &b});
  return ew::run(name, {ca, cb}, dt, std::move(out), false,
                 [&](const TensorIter& it) { cpu::special_binary_kernel(op, it, dt); });
}

// g reduced to the shape and dtype of `like` (undoes broadcasting).
Tensor reduce_to(const Tensor& g, const Tensor& like) {
  Tensor r = autograd::sum_to(g, like.sizes());
  return r.dtype() == like.dtype() ? r : to_dtype(r, like.dtype());
}

}  // namespace

Tensor special_binary(SpecialBinaryOp op, const Tensor& a, const Tensor& b, Tensor out) {
  if (!autograd::needs_history({&a, &b})) return values(op, a, b, std::move(out));
  ew::check_no_out_grad(op_name(op), out, {&a, &b});
  Tensor y;
  {
    autograd::NoGradGuard no_grad;
    y = values(op, a, b, Tensor());
  }
  static constexpr const char* kNodes[] = {"LogaddexpBackward0", "Logaddexp2Backward0", "SpecialZetaBackward0"};
  if (auto n = autograd::make_node<autograd::LambdaBackward>(a, b)) {
    const bool a_grad = autograd::requires_grad(a);
    n->record(kNodes[static_cast<int>(op)], {y}, {a, b}, {},
              [op, a_grad](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
                const Tensor &av = s[0], &bv = s[1];
                if (op == SpecialBinaryOp::Zeta) {  // d/dq zeta(x, q) = -x zeta(x + 1, q); none in x, as torch
                  if (a_grad) EMBER_NOT_IMPLEMENTED("the derivative for 'zeta' is not implemented.");
                  Tensor z = special_binary(SpecialBinaryOp::Zeta, add(av, ew::num(1.0)), bv);
                  return {Tensor(), reduce_to(mul(g[0], neg(mul(av, z))), bv)};
                }
                // torch's forms: g / (1 + e^(b - a)) and g / (1 + e^(a - b)) (2^ for logaddexp2)
                auto base = [op](const Tensor& t) { return op == SpecialBinaryOp::LogAddExp ? exp(t) : exp2(t); };
                Tensor ga = div(g[0], add(base(sub(bv, av)), ew::num(1.0)));
                Tensor gb = div(g[0], add(base(sub(av, bv)), ew::num(1.0)));
                return {reduce_to(ga, av), reduce_to(gb, bv)};
              });
  }
  return y;
}

}  // namespace ember
