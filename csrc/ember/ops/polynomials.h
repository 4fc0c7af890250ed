// torch.special's orthogonal polynomials (Note [Orthogonal polynomials] in ops/polynomials.cpp).
#pragma once
#include "ember/core/tensor.h"

namespace ember {

enum class PolynomialKind { ChebyshevT, ChebyshevU, ChebyshevV, ChebyshevW, HermiteH, HermiteHe, LaguerreL, LegendreP };

// P_n(x) elementwise for x and n of one float32/float64 dtype and shape (the Python layer
// promotes and broadcasts, as torch's TensorIterator); n truncated toward zero, 0 for a negative
// or non-finite n. No gradient, as torch's.
Tensor orthogonal_polynomial(PolynomialKind kind, const Tensor& x, const Tensor& n);

}  // namespace ember
