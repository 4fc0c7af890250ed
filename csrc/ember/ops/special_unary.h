// Special functions of torch.special on one tensor that need more than the unary family's kernels:
// erfcx, log_ndtr, ndtri and airy_ai, elementwise in double (ops/special_unary.cpp). Not part of
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
};

// op over a floating (else default-dtype) input, the result in its dtype; float16/bfloat16 and
// complex raise NotImplementedError as torch ("<name>_cpu" not implemented for ...). erfcx, log_ndtr
// and ndtri are differentiable (their derivatives written with ops, so they differentiate again);
// airy_ai has no derivative, as in torch.
Tensor special_unary(SpecialUnaryOp op, const Tensor& x);

namespace math {
double erfcx(double x);
double log_ndtr(double x);
double ndtri(double p);
double airy_ai(double x);
}  // namespace math

}  // namespace ember
