#include "ember/autograd/engine.h"

#include <atomic>
#include <cmath>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/accumulate.h"
#include "ember/autograd/anomaly.h"
#include "ember/autograd/forward_ad.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/dispatch.h"
#include "ember/ops/ops.h"
#include "ember/profiler/profiler.h"

namespace ember::autograd {
namespace {

std::atomic<PythonNodeRunner> g_python_runner{nullptr};

struct NodeTask {
  std::shared_ptr<Node> node;
  bool operator<(const NodeTask& o) const { return node->sequence_nr() < o.node->sequence_nr(); }
};

// Adds `g` into slot `i` of a node's input buffer.
void accumulate_into(TensorList& buf, size_t i, Tensor g) {
  if (!g.defined()) return;
  if (!buf[i].defined())
    buf[i] = std::move(g);
  else
    buf[i] = add(buf[i], g);  // out of place: recorded under create_graph
}

bool has_nan(const Tensor& t) {
  if (!is_floating_point(t.dtype())) return false;
  Tensor c = contiguous(t);
  return EMBER_DISPATCH_FLOAT(c.dtype(), "isnan", [&]() -> bool {
    const scalar_t* p = c.data<scalar_t>();
    for (int64_t i = 0; i < c.numel(); ++i)
      if (std::isnan(static_cast<double>(static_cast<float>(p[i])))) return true;
    return false;
  });
}

TensorList call_node(Node& node, TensorList&& grads) {
  for (auto& [idx, hook] : node.pre_hooks()) {
    if (idx < grads.size() && grads[idx].defined()) {
      Tensor r = hook(grads[idx]);
      if (r.defined()) grads[idx] = r;
    }
  }
  // Missing gradients for some outputs of a multi-output op are zeros of that output's shape.
  if (node.materialize_grads())
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined()) grads[i] = zeros(node.input_meta(i).shape, node.input_meta(i).dtype);
  PythonNodeRunner runner = g_python_runner.load(std::memory_order_relaxed);
  TensorList out = node.is_python() && runner ? runner(node, std::move(grads)) : node.apply(std::move(grads));
  if (AnomalyMode::is_enabled() && AnomalyMode::check_nan()) {
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].defined() && has_nan(out[i]))
        throw Error("Function '" + node.name() + "' returned nan values in its " + std::to_string(i) + "th output.");
  }
  return out;
}

}  // namespace

void set_python_node_runner(PythonNodeRunner runner) { g_python_runner = runner; }

TensorList run_backward(const TensorList& roots, const TensorList& grad_roots, const TensorList& inputs,
                        const BackwardOptions& opts) {
  // Queued forward-mode tangents need saved tensors this pass may free.
  if (forward_ad::is_active()) forward_ad::flush();
  AutoGradMode mode(opts.create_graph);
  // Root gradients.
  std::vector<std::pair<Edge, Tensor>> root_edges;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    EMBER_CHECK(requires_grad(r), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = i < grad_roots.size() ? grad_roots[i] : Tensor();
    if (!g.defined()) {
      EMBER_CHECK(r.numel() == 1, "grad can be implicitly created only for scalar outputs");
      EMBER_CHECK(!is_complex(r.dtype()), "grad can be implicitly created only for real scalar outputs");
      g = ones(r.sizes(), r.dtype());
    } else {
      EMBER_CHECK(g.sizes() == r.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ", g.shape_str(),
                  " and output[", i, "] has a shape of ", r.shape_str(), ".");
    }
    root_edges.emplace_back(gradient_edge(r), g);
  }

  // Capture targets: where gradients for `inputs` arrive.
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> targets;  // node -> (slot, input idx)
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(requires_grad(inputs[i]), "One of the differentiated Tensors does not require grad");
    Edge e = gradient_edge(inputs[i]);
    input_edges.push_back(e);
    targets[e.fn.get()].emplace_back(e.input_nr, i);
  }

  // Discover the graph; count, for each node, the edges into it from nodes that will run.
  std::unordered_map<Node*, std::shared_ptr<Node>> nodes;
  std::vector<Node*> order;  // DFS discovery order
  {
    std::vector<Node*> stack;
    for (auto& [e, g] : root_edges)
      if (e.fn && nodes.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      order.push_back(n);
      for (const Edge& e : n->next_edges)
        if (e.fn && nodes.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
    }
  }
  // With inputs given, only nodes that lead to a target need to run.
  std::unordered_set<Node*> needed;
  if (inputs.empty()) {
    for (Node* n : order) needed.insert(n);
  } else {
    // Reverse topological fixpoint: a node is needed if it is a target or feeds a needed node.
    bool changed = true;
    for (auto& [n, _] : targets)
      if (nodes.count(n)) needed.insert(n);
    while (changed) {
      changed = false;
      for (Node* n : order) {
        if (needed.count(n)) continue;
        for (const Edge& e : n->next_edges)
          if (e.fn && needed.count(e.fn.get())) {
            needed.insert(n);
            changed = true;
            break;
          }
      }
    }
  }
  std::unordered_map<Node*, int> deps;
  for (Node* n : order) {
    if (!needed.count(n)) continue;
    for (const Edge& e : n->next_edges)
      if (e.fn && needed.count(e.fn.get())) ++deps[e.fn.get()];
  }

  std::unordered_map<Node*, TensorList> buffers;
  auto buffer_of = [&](Node* n) -> TensorList& {
    auto it = buffers.find(n);
    if (it == buffers.end()) it = buffers.emplace(n, TensorList(n->num_inputs())).first;
    return it->second;
  };
  std::priority_queue<NodeTask> ready;
  for (auto& [e, g] : root_edges) {
    if (!e.fn || !needed.count(e.fn.get())) continue;
    accumulate_into(buffer_of(e.fn.get()), e.input_nr, g);
  }
  std::unordered_set<Node*> queued;
  for (auto& [e, g] : root_edges)
    if (e.fn && needed.count(e.fn.get()) && deps[e.fn.get()] == 0 && queued.insert(e.fn.get()).second)
      ready.push({e.fn});

  TensorList captured(inputs.size());
  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top().node;
    ready.pop();
    TensorList grads = std::move(buffer_of(node.get()));
    buffers.erase(node.get());

    bool is_target = targets.count(node.get()) > 0;
    if (is_target) {
      for (auto& [slot, idx] : targets[node.get()]) {
        Tensor g = slot < grads.size() ? grads[slot] : Tensor();
        // Tensor hooks registered on a non-leaf input still apply to what autograd.grad returns.
        for (auto& [hidx, hook] : node->pre_hooks())
          if (hidx == slot && g.defined()) {
            Tensor r = hook(g);
            if (r.defined()) g = r;
          }
        if (!opts.accumulate) captured[idx] = g;
      }
    }
    // autograd.grad stops at its targets' accumulators; everything else that is needed runs.
    bool run = !(is_target && !opts.accumulate && dynamic_cast<AccumulateGrad*>(node.get()));
    bool feeds_needed = false;
    for (const Edge& e : node->next_edges) feeds_needed |= e.fn && needed.count(e.fn.get());
    if (is_target && !opts.accumulate && !feeds_needed) run = false;
    if (!inputs.empty() && opts.accumulate && dynamic_cast<AccumulateGrad*>(node.get()) && !is_target) run = false;
    if (!run) continue;

    TensorList outs;
    {
      // Other threads may run backward through this node at once (Note [Autograd threads]).
      std::lock_guard<std::recursive_mutex> lock(node->apply_mutex());
      std::optional<profiler::Scope> event;  // Note [Profiler cost]
      if (profiler::active()) event.emplace(node->name(), profiler::EventKind::Backward, node->sequence_nr());
      try {
        outs = call_node(*node, std::move(grads));
      } catch (...) {
        if (AnomalyMode::is_enabled()) warn_anomaly(*node);  // the forward traceback, as torch
        throw;
      }
      if (!opts.keep_graph) node->release_variables();
      for (auto& hook : node->post_hooks()) hook(outs, TensorList());
    }
    for (size_t j = 0; j < node->next_edges.size(); ++j) {
      const Edge& e = node->next_edges[j];
      if (!e.fn || !needed.count(e.fn.get())) continue;
      if (j < outs.size()) accumulate_into(buffer_of(e.fn.get()), e.input_nr, outs[j]);
      if (--deps[e.fn.get()] == 0 && queued.insert(e.fn.get()).second) ready.push({e.fn});
    }
  }

  if (!opts.accumulate) {
    for (size_t i = 0; i < inputs.size(); ++i)
      EMBER_CHECK(captured[i].defined() || opts.allow_unused,
                  "One of the differentiated Tensors appears to not have been used in the graph. Set "
                  "allow_unused=True if this is the desired behavior.");
  }
  return captured;
}

}  // namespace ember::autograd
