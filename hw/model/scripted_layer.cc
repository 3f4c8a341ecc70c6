// A scripted child as a layer (see scripted_layer.h).
#include "hw/model/scripted_layer.h"

#include <algorithm>
#include <map>
#include <string>

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/torch.h>

namespace pipeworks::hw {
namespace {

std::string flat_name(std::string name) {
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

}  // namespace

ScriptedLayerImpl::ScriptedLayerImpl(torch::jit::Module module) : module_(std::move(module)) { reset(); }

void ScriptedLayerImpl::reset() {
  std::map<std::string, bool> requires_grad;
  for (const auto& p : module_.named_parameters(/*recurse=*/true)) requires_grad[p.name] = p.value.requires_grad();
  {
    // Outside autograd, the copies are leaves; their flags are set again below.
    torch::NoGradGuard no_grad;
    module_ = module_.clone();
  }
  for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
    register_parameter(flat_name(p.name), p.value, requires_grad[p.name]);
  }
  for (const auto& b : module_.named_buffers(/*recurse=*/true)) register_buffer(flat_name(b.name), b.value);
  module_.train(is_training());
}

void ScriptedLayerImpl::train(bool on) {
  torch::nn::Module::train(on);
  module_.train(on);
}

torch::Tensor ScriptedLayerImpl::forward(const torch::Tensor& x) {
  const torch::jit::GraphOptimizerEnabledGuard unoptimized(false);  // thread-local; restored on return
  return module_.forward({x}).toTensor();
}

}  // namespace pipeworks::hw
