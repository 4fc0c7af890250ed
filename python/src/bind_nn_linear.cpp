// ember._C.linear / bilinear (nn.functional.linear / bilinear; ops/nn_linear.cpp).
#include "common.h"
#include "ember/ops/nn_linear.h"

namespace ember::py {

void bind_nn_linear(nb::module_& m) {
  m.def("linear", &linear, nb::arg("input"), nb::arg("weight"), nb::arg("bias").none() = nb::none());
  m.def("bilinear", &bilinear, nb::arg("input1"), nb::arg("input2"), nb::arg("weight"),
        nb::arg("bias").none() = nb::none());
}

}  // namespace ember::py
