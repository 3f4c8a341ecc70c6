// A user's own model: a TorchScript module saved from Python (torch.jit.script(model).save),
// cut into stages at its top-level children. The module must be a sequence: its forward is its
// children applied one after the other (a scripted nn.Sequential is), each child maps one
// tensor to one tensor, and a sample of the given shape runs through them. pipeworks.torch_models
// in the Python package turns models such as torchvision's ResNets into such a sequence.
#pragma once

#include <vector>

#include "hw/model/model_zoo.h"
#include "sched/result.h"

namespace pipeworks::hw {

// Loads config.scripted.path and checks the rules above on a batch of two synthetic samples
// (eval mode, no gradients); fills the scripted config's layer names, output shape, random
// layers and parameter count. With a data file, the sample's shape and dtype come from it
// and its targets are checked against the output and the loss. Every error names the file or the child: not readable, not
// TorchScript, no children, a child that is not one tensor to one tensor or has no forward, a
// sample shape that does not fit (the child where it failed and the shape it got), a forward
// that is not the children in order, an output the loss cannot take.
sched::Status load_scripted_model(ModelConfig& config);

// The loaded module's children as the model's layers (a loaded config: load_scripted_model).
sched::Result<std::vector<Layer>> scripted_layers(const ModelConfig& config);

// A batch of `batch_size` samples drawn by `seed` from the data file (data_file.h), or
// synthetic ones: float inputs ~ N(0, 1) or int64 inputs in [0, input_high); targets N(0, 1) of
// the output's shape (mse) or classes in [0, C) where C is the output's last size
// (cross_entropy).
Batch scripted_batch(const ScriptedModelConfig& config, int batch_size, std::uint64_t seed);

}  // namespace pipeworks::hw
