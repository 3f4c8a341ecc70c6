// What the pipeline and its non-pipelined reference share about training, so both update
// parameters the same way: the optimizer (SGD, momentum SGD or Adam) and dropping gradients.
#pragma once

#include <memory>
#include <vector>

#include <torch/optim/optimizer.h>

#include "hw/model/optimizer_config.h"

namespace pipeworks::hw {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::vector<torch::Tensor>& parameters,
                                                        const OptimizerConfig& config);

// Sets every parameter's gradient to none (undefined), the same on every LibTorch version.
void drop_grads(const std::vector<torch::Tensor>& parameters);

}  // namespace pipeworks::hw
