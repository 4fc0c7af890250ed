// Backward nodes of the differentiable ops. Each formula is written with ember ops, so it is
// itself recorded under create_graph=True (higher-order gradients).
#pragma once
#include "ember/autograd/node.h"
#include "ember/core/scalar.h"

namespace ember::autograd {

// A node whose name is fixed at construction (most nodes only differ in apply()). name_override
// names the overload that recorded it where torch distinguishes them (pow(Tensor, Tensor) is
// PowBackward1; the C++ frontend's add(Tensor, Scalar) is AddBackward1, as in libtorch).
template <const char* Name>
struct Named : Node {
  const char* name_override = nullptr;
  std::string name() const override { return name_override ? name_override : Name; }
};

#define EMBER_NODE_NAME(N) inline constexpr char k##N[] = #N;

EMBER_NODE_NAME(AddBackward0)
EMBER_NODE_NAME(SubBackward0)
EMBER_NODE_NAME(MulBackward0)
EMBER_NODE_NAME(DivBackward0)
EMBER_NODE_NAME(PowBackward0)
EMBER_NODE_NAME(SumBackward1)
EMBER_NODE_NAME(MmBackward0)
EMBER_NODE_NAME(AddmmBackward0)
EMBER_NODE_NAME(BmmBackward0)
EMBER_NODE_NAME(ToCopyBackward0)
EMBER_NODE_NAME(CloneBackward0)
EMBER_NODE_NAME(CopyBackwards)
EMBER_NODE_NAME(FillBackward0)

struct AddBackward0 : Named<kAddBackward0> {  // also sub (alpha negated)
  Scalar alpha = 1;
  Shape self_sizes, other_sizes;
  ScalarType self_dtype, other_dtype;
  TensorList apply(TensorList&& grads) override;
  TensorList jvp(const TensorList& t) override;
};
struct SubBackward0 : AddBackward0 {
  std::string name() const override { return name_override ? name_override : kSubBackward0; }
};
struct MulBackward0 : Named<kMulBackward0> {
  SavedVariable self, other;
  TensorList apply(TensorList&& grads) override;
  TensorList jvp(const TensorList& t) override;
  void release_variables() override { self.reset(), other.reset(); }
};
struct DivBackward0 : Named<kDivBackward0> {
  SavedVariable self, other;
  TensorList apply(TensorList&& grads) override;
  TensorList jvp(const TensorList& t) override;
  void release_variables() override { self.reset(), other.reset(); }
};
struct PowBackward0 : Named<kPowBackward0> {
  SavedVariable self, exponent, result;
  TensorList apply(TensorList&& grads) override;
  void release_variables() override { self.reset(), exponent.reset(), result.reset(); }
};
struct SumBackward1 : Named<kSumBackward1> {
  Shape self_sizes;
  std::vector<int64_t> dims;  // reduced dims, wrapped; empty = all
  bool keepdim = false;
  bool no_dims = false;  // sum() without dims: torch names that overload's node SumBackward0
  std::string name() const override { return no_dims ? "SumBackward0" : kSumBackward1; }
  TensorList apply(TensorList&& grads) override;
  TensorList jvp(const TensorList& t) override;
};
struct MmBackward0 : Named<kMmBackward0> {
  SavedVariable self, mat2;
  bool mat2_transposed = false;  // as AddmmBackward0's: mat2's gradient comes in mat2's layout
  TensorList apply(TensorList&& grads) override;
  TensorList jvp(const TensorList& t) override;
  void release_variables() override { self.reset(), mat2.reset(); }
};
// addmm with beta = alpha = 1 (nn.Linear's product): self's gradient is the column sums; mat2's
// comes in mat2's own layout (mat2_transposed, as at forward), as torch's.
struct AddmmBackward0 : Named<kAddmmBackward0> {
  SavedVariable mat1, mat2;
  Shape self_sizes, out_sizes;
  bool mat2_transposed = false;
  TensorList apply(TensorList&& grads) override;
  TensorList jvp(const TensorList& t) override;
  void release_variables() override { mat1.reset(), mat2.reset(); }
};
struct BmmBackward0 : Named<kBmmBackward0> {
  SavedVariable self, mat2;
  TensorList apply(TensorList&& grads) override;
  TensorList jvp(const TensorList& t) override;
  void release_variables() override { self.reset(), mat2.reset(); }
};
struct ToCopyBackward0 : Named<kToCopyBackward0> {
  ScalarType self_dtype;
  TensorList apply(TensorList&& grads) override;
  TensorList jvp(const TensorList& t) override { return {t[0]}; }  // cast to the output dtype later
};
struct CloneBackward0 : Named<kCloneBackward0> {
  TensorList apply(TensorList&& grads) override { return {grads[0]}; }
  TensorList jvp(const TensorList& t) override { return {t[0]}; }
};
// copy_(self, src): self's old value gets no gradient; src gets grad summed to its shape.
struct CopyBackwards : Named<kCopyBackwards> {
  Shape src_sizes;
  ScalarType src_dtype;
  TensorList apply(TensorList&& grads) override;
};
struct FillBackward0 : Named<kFillBackward0> {
  TensorList apply(TensorList&&) override { return {Tensor()}; }
};

// For less common ops: a named node whose formula is a lambda over its saved tensors.
struct LambdaBackward : Node {
  using Fn = std::function<TensorList(const TensorList& grads, const TensorList& saved)>;
  std::string name_;
  std::vector<SavedVariable> saved;
  Fn fn;
  // Optional forward-mode formula (tangents, saved) -> output tangents; without it forward AD
  // derives the tangents from fn (Note [Forward AD]).
  std::function<TensorList(const TensorList& tangents, const TensorList& saved)> jvp_fn;
  std::string name() const override { return name_; }
  TensorList jvp(const TensorList& t) override {
    if (!jvp_fn) return {};
    TensorList s;
    auto me = shared_from_this();
    for (const SavedVariable& v : saved) s.push_back(v.unpack(me));
    return jvp_fn(t, s);
  }
  // The usual recording in one call: names the node, makes it the history of `outputs`, then
  // saves `inputs` followed by `saved_outputs` (outputs are saved after set_history, as they must
  // be) for `f(grads, saved)`. Use as `if (auto n = make_node<LambdaBackward>(x)) n->record(...)`.
  void record(const char* name, std::initializer_list<Tensor> outputs, std::initializer_list<Tensor> inputs,
              std::initializer_list<Tensor> saved_outputs, Fn f);
  TensorList apply(TensorList&& grads) override {
    TensorList s;
    auto me = shared_from_this();
    for (const SavedVariable& v : saved) s.push_back(v.unpack(me));
    return fn(grads, s);
  }
  void release_variables() override {
    for (SavedVariable& v : saved) v.reset();
  }
};

// A view's backward: the gradient of the view scattered into zeros shaped like the input.
// `regrad(grad, input)` maps it back; the view ops give their own inverse.
struct ViewBackward : Node {
  std::string name_;
  Shape self_sizes, self_strides;
  int64_t self_offset = 0;
  ScalarType self_dtype;
  std::function<Tensor(const Tensor& grad)> backward;
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override { return {backward(grads[0])}; }
};

}  // namespace ember::autograd
