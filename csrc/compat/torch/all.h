// Compatibility header: a libtorch program's #include <torch/torch.h> gets Ember's C++ frontend
// when this directory (csrc/compat, installed as include/ember/compat) is on its include path.
#pragma once
#include "ember/frontend/torch.h"
