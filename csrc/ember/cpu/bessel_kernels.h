// The vectorized Bessel kernel (Note [Bessel functions] in ops/bessel.cpp), compiled per ISA level.
#pragma once
#include <cstdint>

#include "ember/cpu/isa.h"

namespace ember::cpu {

// y[i] = f(x[i]) for the function numbered `op` (BesselOp's order: I0, I0e, I1, I1e, K0, K0e, K1,
// K1e, J0, J1, Y0, Y1), x and y not overlapping. The common range runs branch-free, vectorized; the
// rest (zero and tiny x, x past the exponent range or 2^20, infinities, NaN, negative x for K and Y)
// goes element by element through `scalar`, the libm-based form. float_result: y will be rounded to
// float (or a 16-bit float), so the series stop at the terms that can change it.
EMBER_DECLARE_ISA_KERNEL(void, bessel_kernel,
                         (int op, bool float_result, const double* x, double* y, int64_t n, double (*scalar)(double)))
inline void bessel_kernel(int op, bool float_result, const double* x, double* y, int64_t n, double (*scalar)(double)) {
  EMBER_ISA_SELECT(bessel_kernel)(op, float_result, x, y, n, scalar);
}

}  // namespace ember::cpu
