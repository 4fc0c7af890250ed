// The public C++ API of Ember: tensors and operators.
#pragma once
#include "ember/core/allocator.h"
#include "ember/core/dtype.h"
#include "ember/core/parallel.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor.h"
#include "ember/ops/complex.h"
#include "ember/ops/nn.h"
#include "ember/ops/nn_linear.h"
#include "ember/ops/operators.h"
#include "ember/ops/ops.h"
#include "ember/ops/random.h"
