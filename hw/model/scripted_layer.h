// One child of a user's TorchScript module as a layer of the model (model_zoo.h's Layer): an
// nn::Module that owns a deep copy of the scripted child and registers the child's parameters
// and buffers as its own, so stage cells clone it, optimizers update it and `to(device)` moves
// it like any zoo layer, while the scripted code computes its forward.
//
// Every copy runs its own code, the same on every call. A TorchScript method's graph executor
// belongs to its class type, and deepcopy keeps the type: two ReLU children on two stages, or a
// stage cell and the reference it is checked against, would share one executor, called from
// several worker threads (LibTorch's profiling record is not safe for that) and in an order set
// by the threads' timing. Its profiling optimizer also picks a plan from the calls it has seen
// (a forward under no_grad, then the recompute with grad), so the recompute and the reference
// could run other code than the forward. So each copy is a clone, with a class type of its own,
// and forward runs the executor's unoptimized plan: the eager operators in the method's order.
#pragma once

#include <torch/csrc/jit/api/module.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

namespace pipeworks::hw {

class ScriptedLayerImpl : public torch::nn::Cloneable<ScriptedLayerImpl> {
 public:
  // Keeps a clone of `module`: nothing is shared with the caller's, not even its class type.
  explicit ScriptedLayerImpl(torch::jit::Module module);

  // Clones the scripted module again (a clone's own parameters and class type) and registers its
  // parameters ('.' in their names becomes '_') and buffers.
  void reset() override;
  void train(bool on = true) override;  // also the scripted module's `training`
  // The scripted forward with the graph executor's optimizer off on this thread for the call.
  torch::Tensor forward(const torch::Tensor& x);
  const torch::jit::Module& scripted() const { return module_; }

 private:
  torch::jit::Module module_;
};
TORCH_MODULE(ScriptedLayer);

}  // namespace pipeworks::hw
