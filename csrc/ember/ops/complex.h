// Complex-number ops: the parts of complex64/complex128 tensors, conjugation, construction.
#pragma once
#include "ember/core/tensor.h"

namespace ember {

// Views of a complex tensor as its (..., 2) real pairs and back; real/imag select from it.
Tensor view_as_real(const Tensor& t);
Tensor view_as_complex(const Tensor& t);
Tensor real(const Tensor& t);  // real tensors: the tensor itself
Tensor imag(const Tensor& t);
// Note [Conjugation is a copy]: PyTorch's conj() is a lazy view with a conjugate bit; ember
// materializes it (see docs/design.md), so is_conj() is always false and resolve_conj() is the
// identity. Real tensors are returned as they are.
Tensor conj(const Tensor& t);
Tensor conj_physical(const Tensor& t);
Tensor resolve_conj(const Tensor& t);
bool is_conj(const Tensor& t);
Tensor angle(const Tensor& t);
Tensor polar(const Tensor& abs, const Tensor& angle);
Tensor complex(const Tensor& real, const Tensor& imag);

}  // namespace ember
