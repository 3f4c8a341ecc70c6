// Comparing a pipelined run's tensors with the non-pipelined reference's (reference.h) into a
// GradientCheck: the in-process run compares every cell's, a rank of a multi-process run the
// cells on its own device. Includes LibTorch (gradient_check.h is the LibTorch-free face).
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/run/gradient_check.h"

namespace pipeworks::hw {

// Compares `pipeline` (copied to the CPU, where the reference is, when elsewhere) with
// `reference` at check's rtol / atol and folds the result into `check`.
void check_tensors(GradientCheck& check, const std::vector<at::Tensor>& pipeline,
                   const std::vector<at::Tensor>& reference);

}  // namespace pipeworks::hw
