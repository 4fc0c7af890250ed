// The orthogonal polynomials of torch.special (Note [Orthogonal polynomials] in
// ops/polynomials.cpp), compiled per ISA level.
#pragma once
#include <cstdint>

#include "ember/core/dtype.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

// y[i] = P_{n[i]}(x[i]) for the family `kind` (PolynomialKind's order: Chebyshev T, U, V, W,
// Hermite H, He, Laguerre L, Legendre P), x, n, y contiguous float32/float64 (dt) arrays of
// `count`. n is truncated toward zero; a negative or non-finite n gives 0.
EMBER_DECLARE_ISA_KERNEL(void, orthogonal_polynomial,
                         (int kind, ScalarType dt, const void* x, const void* n, void* y, int64_t count))

}  // namespace ember::cpu
