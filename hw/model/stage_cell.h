// A stage cell: the layers one pipeline stage runs, deep-copied out of the model so that the
// cell owns its parameters (no sharing through shallow module copies), placed on the device
// the schedule puts the stage on. The last stage's cell also computes the loss.
#pragma once

#include <optional>
#include <vector>

#include <torch/nn/modules/container/sequential.h>

#include "hw/model/layers.h"
#include "hw/model/model_zoo.h"
#include "sched/schedule.h"
#include "sim/plan/partition.h"

namespace pipeworks::hw {

struct StageCell {
  int stage = 0;
  int device = 0;
  int first_layer = 0;  // model layers [first_layer, end_layer)
  int end_layer = 0;
  bool is_last = false;
  LossKind loss = LossKind::kMse;
  torch::nn::Sequential layers;

  torch::Tensor forward(const torch::Tensor& input) { return layers->forward(input); }
  std::vector<torch::Tensor> parameters() const { return layers->parameters(); }
};

// One cell per stage of `partition`, on placement[stage]. `fail_at` (test hook) appends a
// FailLayer to that stage's cell.
sched::Result<std::vector<StageCell>> make_cells(const Model& model, const sim::Partition& partition,
                                                 const std::vector<int>& placement,
                                                 const std::optional<FailAt>& fail_at = std::nullopt);

// The parameters of all cells in stage order (the model's parameter order).
std::vector<torch::Tensor> cell_parameters(const std::vector<StageCell>& cells);

}  // namespace pipeworks::hw
