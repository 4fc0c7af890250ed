// Everything of the C++ frontend (what <torch/torch.h> gives a libtorch program; the compatibility
// include directory csrc/compat maps that header here). Note [C++ frontend] in frontend/tensor.h.
#pragma once
// Standard headers libtorch's <torch/torch.h> brings in, which programs written for it rely on.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ember/frontend/autograd.h"
#include "ember/frontend/c10.h"
#include "ember/frontend/data.h"
#include "ember/frontend/functions.h"
#include "ember/frontend/nn_containers.h"
#include "ember/frontend/nn_functional.h"
#include "ember/frontend/nn_init.h"
#include "ember/frontend/nn_module.h"
#include "ember/frontend/nn_modules.h"
#include "ember/frontend/optim.h"
#include "ember/frontend/serialize.h"
#include "ember/frontend/tensor.h"
#include "ember/ops/random.h"

namespace torch {

// Seeds the default generator (ember's Philox streams: the numbers differ from libtorch's).
inline void manual_seed(uint64_t seed) { ember::manual_seed(seed); }

// Ember is a CPU build: no CUDA device is ever available.
namespace cuda {
inline bool is_available() { return false; }
inline int64_t device_count() { return 0; }
inline bool cudnn_is_available() { return false; }
inline void manual_seed(uint64_t) {}
inline void manual_seed_all(uint64_t) {}
inline void synchronize(int64_t = -1) {
  EMBER_NOT_IMPLEMENTED("Ember was built without CUDA support; torch::cuda::synchronize is unavailable");
}
}  // namespace cuda
namespace mps {
inline bool is_available() { return false; }
}  // namespace mps

using at::indexing::Slice;  // NOLINT: torch::indexing is at::indexing
namespace indexing = at::indexing;

}  // namespace torch
