// Complex-number functions and Tensor methods (ops/complex.h).
#include "common.h"

namespace ember::py {

void bind_complex(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(m.attr("Tensor"));
  // Functions that are also Tensor methods of the same name.
  auto both = [&](const char* name, Tensor (*f)(const Tensor&)) {
    m.def(name, f, nb::arg("input"));
    cls.def(name, f);
  };
  both("view_as_real", &view_as_real);
  both("view_as_complex", &view_as_complex);
  both("conj", &conj);
  both("conj_physical", &conj_physical);
  both("resolve_conj", &resolve_conj);
  both("resolve_neg", [](const Tensor& t) { return t; });  // ember has no lazy negation either
  both("angle", &angle);
  m.def("real", &real, nb::arg("input"));
  m.def("imag", &imag, nb::arg("input"));
  m.def("is_conj", &is_conj, nb::arg("input"));
  m.def(
      "is_neg", [](const Tensor&) { return false; }, nb::arg("input"));
  cls.def("is_conj", &is_conj);
  cls.def("is_neg", [](const Tensor&) { return false; });
  // x.real / x.imag are views; assigning to them writes through (as torch's setters).
  cls.def_prop_rw(
      "real", [](const Tensor& t) { return real(t); },
      [](Tensor& t, nb::handle v) {
        Tensor r = real(t);
        copy_(r, tensor_arg(v, "real"));
      });
  cls.def_prop_rw(
      "imag", [](const Tensor& t) { return imag(t); },
      [](Tensor& t, nb::handle v) {
        Tensor r = imag(t);
        copy_(r, tensor_arg(v, "imag"));
      });
  m.def("complex", &complex, nb::arg("real"), nb::arg("imag"));
  m.def("polar", &polar, nb::arg("abs"), nb::arg("angle"));
  cls.def("conj_physical_", [](Tensor& t) -> Tensor {
    if (is_complex(t.dtype())) copy_(t, conj_physical(t));
    return t;
  });
}

}  // namespace ember::py
