// Optimizers and gradient dropping shared by the executor and the reference (see training.h).
#include "hw/model/training.h"

#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include "hw/model/torch_compat.h"

namespace pipeworks::hw {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::vector<torch::Tensor>& parameters,
                                                        const OptimizerConfig& config) {
  switch (config.kind) {
    case sim::OptimizerKind::kSgd:
      return std::make_unique<torch::optim::SGD>(parameters, torch::optim::SGDOptions(config.learning_rate));
    case sim::OptimizerKind::kMomentum:
      return std::make_unique<torch::optim::SGD>(
          parameters, torch::optim::SGDOptions(config.learning_rate).momentum(config.momentum));
    case sim::OptimizerKind::kAdam:
      return std::make_unique<torch::optim::Adam>(parameters, torch::optim::AdamOptions(config.learning_rate));
  }
  return nullptr;
}

void drop_grads(const std::vector<torch::Tensor>& parameters) {
  for (torch::Tensor p : parameters) compat::drop_grad(p);
}

}  // namespace pipeworks::hw
