// Compatibility header: <ATen/ATen.h> (at::Tensor and the at:: functions) from Ember's C++ frontend.
#pragma once
#include "ember/frontend/torch.h"
