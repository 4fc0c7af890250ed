// Internal helpers shared by the elementwise op families (unary.cpp, pointwise.cpp): PyTorch's
// out= and in-place conventions, and the autograd path of in-place ops.
#pragma once
#include <initializer_list>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/record.h"
#include "ember/core/mem_overlap.h"
#include "ember/cpu/iter.h"
#include "ember/ops/ops.h"

namespace ember::ew {

inline Tensor num(double v) { return scalar_tensor(Scalar(v), std::nullopt, /*wrapped=*/true); }

inline void check_cast(ScalarType result, ScalarType out) {
  EMBER_CHECK(can_cast(result, out), "result type ", dtype_name(result), " can't be cast to the desired output type ",
              dtype_name(out));
}

// Runs kernel(iter) over `inputs` (already in the dtype the kernel reads) writing dtype
// `result`: into a fresh tensor; into `out` (resized to the broadcast shape; the result is cast
// when out's dtype differs and PyTorch's can_cast allows it); or, when `inplace`, into `out`
// without resizing.
template <typename Kernel>
Tensor run(const char* name, std::initializer_list<Tensor> inputs, ScalarType result, Tensor out, bool inplace,
           const Kernel& kernel) {
  if (!out.defined()) {
    TensorIter it(out, inputs, result, name);
    kernel(it);
    return out;
  }
  check_cast(result, out.dtype());
  if (out.dtype() != result) {  // compute in the result type, then convert into out
    if (!inplace && inputs.size() > 0) {
      // out takes the broadcast shape before the iterator reads the inputs' data pointers:
      // growing out can move a storage an input shares (a libFuzzer find: use after free).
      Shape shape = inputs.begin()->sizes();
      for (const Tensor& t : inputs) shape = broadcast_shapes(shape, t.sizes(), name);
      resize_(out, shape);
    }
    assert_no_internal_overlap(out);
    for (const Tensor& t : inputs) assert_no_partial_overlap(out, t);
    Tensor tmp;
    TensorIter it(tmp, inputs, result, name);
    EMBER_CHECK(tmp.sizes() == out.sizes(), "output with shape ", out.shape_str(),
                " doesn't match the broadcast shape ", tmp.shape_str());
    kernel(it);
    autograd::NoGradGuard no_grad;
    copy_(out, tmp);
    return out;
  }
  TensorIter it(out, inputs, result, name, /*resize_out=*/!inplace);
  kernel(it);
  out.bump_version(name);
  return out;
}

// Note [In-place under autograd]: runs f(prev) out of place on a clone of self (recording as
// usual), copies the data back without recording and makes f's node self's history. `inputs`
// are the op's other operands, checked for overlap with self first (Note [Memory overlap]).
template <typename F>
Tensor inplace_with_grad(Tensor self, const F& f, std::initializer_list<const Tensor*> inputs = {}) {
  check_elementwise_overlap(self, inputs);
  autograd::check_inplace(self, true);
  Tensor prev = clone(self);
  Tensor r = f(prev);
  EMBER_CHECK(r.sizes() == self.sizes(), "output with shape ", self.shape_str(), " doesn't match the broadcast shape ",
              r.shape_str());
  check_cast(r.dtype(), self.dtype());
  {
    autograd::NoGradGuard no_grad;
    copy_(self, r);
  }
  if (auto fn = autograd::grad_fn(r)) autograd::rebase_history(self, fn);
  return self;
}

inline void check_no_out_grad(const char* name, const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  if (!out.defined()) return;
  EMBER_CHECK(!(autograd::GradMode::is_enabled() && autograd::any_requires_grad(inputs)), name,
              "(): functions with out=... arguments don't support automatic differentiation, but one of the "
              "arguments requires grad.");
  throw NotImplementedError(std::string("Trying to use forward AD with ") + name +
                            "_out that does not support it because it is an out= function");
}

}  // namespace ember::ew
