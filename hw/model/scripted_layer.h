// One child of a user's TorchScript module as a layer of the model (model_zoo.h's Layer): an
// nn::Module that owns a deep copy of the scripted child and registers the child's parameters
// and buffers as its own, so stage cells clone it, optimizers update it and `to(device)` moves
// it like any zoo layer, while the scripted code computes its forward.
#pragma once

#include <torch/csrc/jit/api/module.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

namespace pipeworks::hw {

class ScriptedLayerImpl : public torch::nn::Cloneable<ScriptedLayerImpl> {
 public:
  // Keeps a deep copy of `module`: nothing is shared with the caller's.
  explicit ScriptedLayerImpl(torch::jit::Module module);

  // Deep-copies the scripted module again (a clone's own parameters) and registers its
  // parameters ('.' in their names becomes '_') and buffers.
  void reset() override;
  void train(bool on = true) override;  // also the scripted module's `training`
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::jit::Module module_;
};
TORCH_MODULE(ScriptedLayer);

}  // namespace pipeworks::hw
