// The node at the end of every leaf's history: adds incoming gradients into leaf.grad.
#pragma once
#include "ember/autograd/node.h"

namespace ember::autograd {

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {}
  TensorList apply(TensorList&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

}  // namespace ember::autograd
