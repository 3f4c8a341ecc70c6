// The tensors a rank of a multi-process run owns -- the parameters and gradients of the cells on
// its device -- beside the reference's at the same positions: what the rank checks every step
// (a rank has only its own cells' values) and what the PIPEWORKS_TEST_DUMP_DIR hook saves.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/model/reference.h"
#include "hw/model/stage_cell.h"
#include "hw/run/gradient_check.h"
#include "sched/result.h"

namespace pipeworks::hw {

struct RankTensors {
  // On the CPU, in the model's parameter order; a gradient never computed stays undefined.
  std::vector<at::Tensor> parameters, gradients;
  std::vector<at::Tensor> reference_parameters, reference_gradients;  // empty without a reference
};

// The cells on device `rank`, and (when `reference` is given) the reference's tensors at the
// same positions of the model's parameter list.
RankTensors rank_tensors(const std::vector<StageCell>& cells, int rank, const Reference* reference);

// This step's gradients and parameters against the reference's (reference_check.h).
GradientCheck check_rank_tensors(const RankTensors& own);

// With PIPEWORKS_TEST_DUMP_DIR set: torch::save's the parameters, then the gradients, to
// <dir>/rank<r>.pt. An error names the file.
sched::Status dump_rank_tensors(const RankTensors& own, int rank);

}  // namespace pipeworks::hw
