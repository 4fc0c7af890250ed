// Forward-mode AD hooks for custom autograd.Function (python/ember/autograd/function.py).
//
// A Function's forward runs with every dual level hidden; its jvp then maps the inputs' tangents
// to the outputs' tangents once per visible level at which an input has one, with that level and
// the inner ones hidden (Note [Forward AD] in forward_ad.h). Kept out of forward_ad.h, which
// record.h includes everywhere.
#pragma once
#include <vector>

#include "ember/autograd/node.h"

namespace ember::autograd::forward_ad {

// Visible open levels at which one of `ts` has a tangent, outermost first.
std::vector<int64_t> levels_with_tangents(const TensorList& ts);

// Sets t's tangent at `level` to what a jvp returned (cast to t's dtype, size checked as torch
// does). `inplace`: t is an input the Function modified in place and had no tangent at `level`;
// a view then also gives its base a tangent it is a view of (as copy_ does).
void set_tangent(const Tensor& t, const Tensor& tan, int64_t level, bool inplace);

// A view of t that carries no tangent at any level (an input a Function returns as is).
Tensor alias_without_tangents(const Tensor& t);

}  // namespace ember::autograd::forward_ad
