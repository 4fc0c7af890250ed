// unsafe_view (ops/view.cpp). Not part of ember.h: include this header where used.
#pragma once
#include "ember/core/tensor.h"

namespace ember {

// An op's fresh result reshaped without becoming a view of it, as torch's _unsafe_view: in-place ops on
// it then need no view bookkeeping (and a reshape made under no_grad, as an op's internal one is, would
// refuse them under grad mode). `t` must be the op's own buffer, shared with nothing else. Its history,
// when t has one, is UnsafeViewBackward0 (the gradient reshaped back).
Tensor unsafe_view(const Tensor& t, const Shape& shape);

}  // namespace ember
