// Special functions of torch.special on one tensor that need more than the unary family's kernels:
// erfcx, log_ndtr, ndtri, airy_ai and entr, elementwise in double (ops/special_unary.cpp). Not part of
// ember.h: include this header where they are used.
#pragma once
#include <cstdint>

#include "ember/core/tensor.h"

namespace ember {

enum class SpecialUnaryOp : uint8_t {
  Erfcx,    // exp(x^2) erfc(x)
  LogNdtr,  // log of the standard normal CDF
  Ndtri,    // the inverse of the standard normal CDF
  AiryAi,   // the Airy function Ai
  Entr,     // -x log x (0 at 0, -inf below)
};

// op over a floating (else default-dtype) input, the result in its dtype; complex, and float16/bfloat16
// except for entr, raise NotImplementedError as torch ("<name>_cpu" not implemented for ...). erfcx,
// log_ndtr, ndtri and entr are differentiable (their derivatives written with ops, so they
// differentiate again); airy_ai has no derivative, as in torch.
Tensor special_unary(SpecialUnaryOp op, const Tensor& x);

namespace math {
double erfcx(double x);
double log_ndtr(double x);
double ndtri(double p);
double airy_ai(double x);
double entr(double x);
}  // namespace math

}  // namespace ember
