// LAPACK-level functions torch exposes outside torch.linalg (the torch.linalg ones are in ops.h).
#pragma once
#include <utility>

#include "ember/core/tensor.h"

namespace ember {

// torch.geqrf: the QR factorization in LAPACK's compact form for A (*, m, n): `a` holds R on and
// above the diagonal and the Householder vectors below it, `tau` (*, min(m, n)) their scales
// (Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H). Not differentiable, as in torch.
std::pair<Tensor, Tensor> geqrf(const Tensor& a);

}  // namespace ember
