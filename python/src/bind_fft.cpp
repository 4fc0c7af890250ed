// The FFT primitives (ops/fft.h) as ember._C._fft_c2c/_fft_r2c/_fft_c2r (torch's names and
// arguments); python/ember/fft.py builds torch.fft's API on them.
#include "common.h"
#include "ember/cpu/fft_kernels.h"
#include "ember/ops/fft.h"

namespace ember::py {
namespace {
FftNorm norm_arg(int64_t v) {
  EMBER_CHECK(v >= 0 && v <= 2, "Invalid normalization mode: ", v);
  return static_cast<FftNorm>(v);
}
}  // namespace

void bind_fft(nb::module_& m) {
  m.def(
      "_fft_c2c",
      [](const Tensor& self, nb::handle dim, int64_t normalization, bool forward) {
        return fft_c2c(self, int_or_ints(dim, "_fft_c2c"), norm_arg(normalization), forward);
      },
      nb::arg("self"), nb::arg("dim"), nb::arg("normalization"), nb::arg("forward"));
  m.def(
      "_fft_r2c",
      [](const Tensor& self, nb::handle dim, int64_t normalization, bool onesided) {
        return fft_r2c(self, int_or_ints(dim, "_fft_r2c"), norm_arg(normalization), onesided);
      },
      nb::arg("self"), nb::arg("dim"), nb::arg("normalization"), nb::arg("onesided"));
  m.def(
      "_fft_c2r",
      [](const Tensor& self, nb::handle dim, int64_t normalization, int64_t last_dim_size) {
        return fft_c2r(self, int_or_ints(dim, "_fft_c2r"), norm_arg(normalization), last_dim_size);
      },
      nb::arg("self"), nb::arg("dim"), nb::arg("normalization"), nb::arg("last_dim_size"));
  m.def("_fft_plan_cache_size", &cpu::fft_plan_cache_size);
  m.def("_fft_plan_cache_clear", &cpu::fft_plan_cache_clear);
}

}  // namespace ember::py
