// Shared driver of the fused optimizer steps (Note [Fused optimizer step]).
#pragma once
#include <array>
#include <initializer_list>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "ember/optim/optim.h"

namespace ember::optim::detail {

// Note [Fused optimizer step]
// A step updates every parameter of a group in one call: the group's (param, grad, state...)
// memory is cut into chunks of kChunk elements and the chunks of all parameters are shared among
// the threads, so 60 small tensors and one large tensor both use the pool, and each element is
// read and written once (the whole update of an element happens in registers). Per-parameter
// scalars (bias corrections from that parameter's step count) are computed before the pass.
// Non-contiguous tensors go through contiguous copies that are written back afterwards.
constexpr int64_t kChunk = 1 << 14;
constexpr int kMaxStates = 4;

template <typename T>
struct Ptrs {
  T* p;
  const T* g;
  std::array<T*, kMaxStates> s;
};

// Checks one group and makes its state tensors usable by the element loop.
struct Prepared {
  std::vector<Tensor> params, grads;                   // contiguous (copies where needed)
  std::vector<std::array<Tensor, kMaxStates>> states;  // contiguous (copies where needed)
  std::vector<std::pair<Tensor, Tensor>> write_back;   // (original, contiguous copy)
  int64_t total = 0;
};
Prepared prepare(const char* name, const TensorList& params, const TensorList& grads,
                 std::initializer_list<TensorList*> states);
void finish(Prepared& pr, const TensorList& params, std::initializer_list<TensorList*> states);

// Undefined entries of `list` become tensors like params[i] filled with `value`.
void ensure_state(TensorList& list, const TensorList& params, double value = 0);
// Undefined entries become 0-d float32 tensors holding `value` (PyTorch's scalar state dtype).
void ensure_scalar(TensorList& list, size_t n, double value);
double read_scalar(const Tensor& t);  // a 0-d (or one-element) float/int tensor's value
void write_scalar(const Tensor& t, double v);
// Adds one to each step counter; returns the new counts.
std::vector<double> bump_steps(TensorList& steps, size_t n);

// Runs body(T{}, i, Ptrs<T>, n) over chunks of every parameter (in parallel).
template <typename Body>
void run(const char* name, const TensorList& params, const TensorList& grads, std::initializer_list<TensorList*> states,
         const Body& body) {
  Prepared pr = prepare(name, params, grads, states);
  struct Chunk {
    int64_t i, b, e;
  };
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < pr.params.size(); ++i) {
    int64_t n = pr.params[i].numel();
    for (int64_t b = 0; b < n; b += kChunk) chunks.push_back({static_cast<int64_t>(i), b, std::min(n, b + kChunk)});
  }
  size_t ns = states.size();
  auto one = [&]<typename T>(const Chunk& c) {
    Ptrs<T> q;
    q.p = pr.params[c.i].template data<T>() + c.b;
    q.g = pr.grads[c.i].template data<T>() + c.b;
    for (size_t k = 0; k < kMaxStates; ++k) q.s[k] = k < ns ? pr.states[c.i][k].template data<T>() + c.b : nullptr;
    body(T{}, c.i, q, c.e - c.b);
  };
  int64_t grain = pr.total > kGrainSize ? 1 : static_cast<int64_t>(chunks.size()) + 1;
  parallel_for(0, static_cast<int64_t>(chunks.size()), grain, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      if (pr.params[chunks[c].i].dtype() == ScalarType::Float64)
        one.template operator()<double>(chunks[c]);
      else
        one.template operator()<float>(chunks[c]);
    }
  });
  finish(pr, params, states);
}

}  // namespace ember::optim::detail
