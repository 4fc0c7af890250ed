// The backward engine: runs Nodes in dependency order from the given roots.
#pragma once
#include "ember/autograd/node.h"

namespace ember::autograd {

struct BackwardOptions {
  bool keep_graph = false;    // retain_graph
  bool create_graph = false;  // record the backward pass itself (higher-order gradients)
  bool accumulate = true;     // true: Tensor.backward (into .grad); false: autograd.grad
  bool allow_unused = false;
};

// roots[i] receives grad_roots[i] (undefined: ones, only for single-element roots). When
// `inputs` is non-empty, only gradients for those are computed: returned (accumulate=false)
// or accumulated into their .grad (accumulate=true).
TensorList run_backward(const TensorList& roots, const TensorList& grad_roots, const TensorList& inputs,
                        const BackwardOptions& opts);

// Lets the Python bindings wrap a Python node's apply with the GIL (the engine runs without it).
using PythonNodeRunner = TensorList (*)(Node& node, TensorList&& grads);
void set_python_node_runner(PythonNodeRunner runner);

}  // namespace ember::autograd
