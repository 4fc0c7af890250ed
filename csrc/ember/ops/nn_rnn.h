// Fused recurrent layers (Note [Fused LSTM layer] in ops/nn_rnn.cpp).
#pragma once
#include <array>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

// One LSTM layer in one direction over every time step. gi (N, 4H): the input projections of all
// steps with both biases added, rows laid out as PackedSequence data (step t's batch_sizes[t] rows,
// sequences sorted by decreasing length; a padded batch has equal sizes); h0, c0 (B, H) with
// B = batch_sizes[0]; w_hh (4H, H). reverse: steps run last to first. Returns the outputs (N, H) in
// gi's row order and h_n, c_n (B, H): each sequence's state after its own last step.
// float32/float64 on the CPU; differentiable, also to higher orders. gi_scratch: gi is the caller's
// temporary, which the activations may overwrite where no graph is recorded (saves a copy of it).
std::tuple<Tensor, Tensor, Tensor> lstm_layer(const Tensor& gi, IntArrayRef batch_sizes, const Tensor& h0,
                                              const Tensor& c0, const Tensor& w_hh, bool reverse,
                                              bool gi_scratch = false);

// Both directions of a bidirectional LSTM layer (fwd: reverse false, bwd: reverse true), each as
// lstm_layer. Where no graph is recorded they run at once, one thread each, with no barrier per step
// (a direction's steps in pieces on both threads waited at every step); otherwise one after the other.
std::array<std::tuple<Tensor, Tensor, Tensor>, 2> lstm_layer_pair(const Tensor& gi_fwd, const Tensor& gi_bwd,
                                                                  IntArrayRef batch_sizes, const Tensor& h0_fwd,
                                                                  const Tensor& c0_fwd, const Tensor& w_fwd,
                                                                  const Tensor& h0_bwd, const Tensor& c0_bwd,
                                                                  const Tensor& w_bwd, bool gi_scratch = false);

// One GRU layer in one direction, as lstm_layer: gi (N, 3H) the input projections with b_ih (b_hh
// stays inside the reset gate), w_hh (3H, H), b_hh (3H) or undefined. Returns the outputs (N, H) and h_n.
std::tuple<Tensor, Tensor> gru_layer(const Tensor& gi, IntArrayRef batch_sizes, const Tensor& h0, const Tensor& w_hh,
                                     const Tensor& b_hh, bool reverse);

}  // namespace ember
