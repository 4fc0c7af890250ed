#include "ember/ops/complex.h"

#include <numbers>

#include "ember/autograd/functions.h"
#include "ember/autograd/record.h"
#include "ember/cpu/complex_kernels.h"
#include "ember/ops/ops.h"

namespace ember {
namespace {

using autograd::LambdaBackward;

// A view of t's storage with another dtype and geometry (shares the version counter and base).
Tensor reinterpret_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset, ScalarType dtype) {
  auto impl = IntrusivePtr<TensorImpl>::make(t.impl()->storage(), dtype, std::move(sizes), std::move(strides), offset);
  impl->share_version_counter(t.impl()->version_counter());
  impl->view_base = t.impl()->view_base ? t.impl()->view_base : t.impl_ptr();
  impl->is_inference = impl->is_inference || t.impl()->is_inference;
  impl->view_version.store(impl->version(), std::memory_order_relaxed);  // Note [View history]
  impl->view_made_no_grad = !autograd::GradMode::is_enabled();
  return Tensor(std::move(impl));
}

Tensor i_unit() { return scalar_tensor(Scalar(std::complex<double>(0, 1)), std::nullopt, /*wrapped=*/true); }

}  // namespace

Tensor view_as_real(const Tensor& t) {
  EMBER_CHECK(is_complex(t.dtype()), "view_as_real is only supported for complex tensors");
  Shape sizes = t.sizes(), strides = t.strides();
  for (int64_t& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  Tensor out = reinterpret_view(t, std::move(sizes), std::move(strides), 2 * t.storage_offset(), to_real(t.dtype()));
  autograd::set_view_history(t, out, "ViewAsRealBackward0",
                             [](const Tensor& g) { return view_as_complex(contiguous(g)); });
  return out;
}

Tensor view_as_complex(const Tensor& t) {
  ScalarType dt = t.dtype();
  EMBER_CHECK(dt == ScalarType::Float32 || dt == ScalarType::Float64,
              "view_as_complex is only supported for float and double tensors, but got a tensor of scalar type: ",
              dtype_name(dt));
  EMBER_CHECK(t.dim() != 0, "Input tensor must have one or more dimensions");
  EMBER_CHECK(t.sizes().back() == 2, "Tensor must have a last dimension of size 2");
  EMBER_CHECK(t.strides().back() == 1, "Tensor must have a last dimension with stride 1");
  Shape sizes(t.sizes().begin(), t.sizes().end() - 1), strides(t.strides().begin(), t.strides().end() - 1);
  for (int64_t& s : strides) {
    EMBER_CHECK(s % 2 == 0, "Tensor must have a stride divisible by 2 for all but last dimension");
    s /= 2;
  }
  EMBER_CHECK(t.storage_offset() % 2 == 0, "Tensor must have a storage_offset divisible by 2");
  Tensor out = reinterpret_view(t, std::move(sizes), std::move(strides), t.storage_offset() / 2, complex_for(dt));
  autograd::set_view_history(t, out, "ViewAsComplexBackward0", [](const Tensor& g) { return view_as_real(g); });
  return out;
}

// As PyTorch: select(view_as_real(t), -1, k), so gradients and in-place writes come from the views.
Tensor real(const Tensor& t) { return is_complex(t.dtype()) ? select(view_as_real(t), -1, 0) : t; }
Tensor imag(const Tensor& t) {
  EMBER_CHECK(is_complex(t.dtype()), "imag is not implemented for tensors with non-complex dtypes.");
  return select(view_as_real(t), -1, 1);
}

Tensor conj_physical(const Tensor& t) {
  if (!is_complex(t.dtype())) return t;
  Tensor out;
  TensorIter it(out, {t}, t.dtype(), "conj");
  cpu::conj_kernel(it, t.dtype());
  if (auto n = autograd::make_node<LambdaBackward>(t)) {
    n->name_ = "ConjPhysicalBackward0";
    n->fn = [](const autograd::TensorList& g, const autograd::TensorList&) -> autograd::TensorList {
      return {conj_physical(g[0])};
    };
    n->jvp_fn = [](const autograd::TensorList& t, const autograd::TensorList&) -> autograd::TensorList {
      return {t[0].defined() ? conj_physical(t[0]) : Tensor()};
    };
    autograd::set_history(out, n);
  }
  return out;
}
Tensor conj(const Tensor& t) { return conj_physical(t); }
Tensor resolve_conj(const Tensor& t) { return t; }
bool is_conj(const Tensor&) { return false; }

Tensor angle(const Tensor& t) {
  ScalarType dt = t.dtype();
  if (!is_complex(dt)) {  // 0 or pi by sign; NaN stays NaN
    Tensor x = is_floating_point(dt) ? t : to_dtype(t, default_dtype());
    Tensor zero = scalar_tensor(Scalar(0.0), x.dtype()), pi = scalar_tensor(Scalar(std::numbers::pi), x.dtype());
    Tensor r;
    {
      autograd::NoGradGuard no_grad;  // piecewise constant
      r = where(isnan(x), x, where(lt(x, zero), pi, zero));
    }
    if (auto n = autograd::make_node<LambdaBackward>(t)) {
      n->name_ = "AngleBackward0";
      Shape s = t.sizes();
      n->fn = [s, dt](const autograd::TensorList&, const autograd::TensorList&) -> autograd::TensorList {
        return {zeros(s, dt)};
      };
      autograd::set_history(r, n);
    }
    return r;
  }
  Tensor out;
  TensorIter it(out, {t}, to_real(dt), "angle");
  cpu::complex_angle_kernel(it, dt);
  if (auto n = autograd::make_node<LambdaBackward>(t)) {
    n->name_ = "AngleBackward0";
    n->saved = {autograd::SavedVariable(t, false)};
    // d angle: g * i z / |z|^2, zero at z = 0.
    n->fn = [](const autograd::TensorList& g, const autograd::TensorList& s) -> autograd::TensorList {
      const Tensor& z = s[0];
      Tensor a = abs(z);
      Tensor r = mul(div(mul(g[0], z), mul(a, a)), i_unit());
      return {where(eq(z, scalar_tensor(Scalar(0.0), z.dtype())), zeros({}, z.dtype()), r)};
    };
    autograd::set_history(out, n);
  }
  return out;
}

Tensor complex(const Tensor& re, const Tensor& im) {
  auto ok = [](ScalarType d) { return d == ScalarType::Float32 || d == ScalarType::Float64; };
  if (!ok(re.dtype()) || !ok(im.dtype())) {
    bool half = re.dtype() == ScalarType::Float16 && im.dtype() == ScalarType::Float16;
    if (half) EMBER_NOT_IMPLEMENTED("complex32 (ComplexHalf) is not supported");
    throw Error(detail::str_cat("Expected both inputs to be Half, Float or Double tensors but got ",
                                dtype_name(re.dtype()), " and ", dtype_name(im.dtype())));
  }
  EMBER_CHECK(re.dtype() == im.dtype(), "Expected object of scalar type ", dtype_name(re.dtype()),
              " but got scalar type ", dtype_name(im.dtype()), " for second argument");
  ScalarType ct = complex_for(re.dtype());
  Tensor out;
  TensorIter it(out, {re, im}, ct, "complex");
  cpu::complex_from_parts_kernel(it, ct);
  if (auto n = autograd::make_node<LambdaBackward>(re, im)) {
    n->name_ = "ComplexBackward0";
    Shape sr = re.sizes(), si = im.sizes();
    n->fn = [sr, si](const autograd::TensorList& g, const autograd::TensorList&) -> autograd::TensorList {
      return {autograd::sum_to(real(g[0]), sr), autograd::sum_to(imag(g[0]), si)};
    };
    autograd::set_history(out, n);
  }
  return out;
}

Tensor polar(const Tensor& abs_, const Tensor& angle_) {
  EMBER_CHECK(abs_.dtype() == angle_.dtype(), "Expected object of scalar type ", dtype_name(abs_.dtype()),
              " but got scalar type ", dtype_name(angle_.dtype()), " for second argument");
  return complex(mul(abs_, cos(angle_)), mul(abs_, sin(angle_)));
}

}  // namespace ember
