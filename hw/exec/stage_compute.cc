// Layer-by-layer forward and the split backward (see stage_compute.h).
#include "hw/exec/stage_compute.h"

#include <torch/torch.h>

namespace pipeworks::hw {
namespace {

// Adds `grads` to the parameters' .grad the way autograd's accumulation does: the first one is
// taken as it is, later ones added in place.
void accumulate(std::vector<torch::Tensor> params, const std::vector<torch::Tensor>& grads) {
  const torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!grads[i].defined()) continue;
    torch::Tensor& grad = params[i].mutable_grad();
    if (grad.defined()) {
      grad.add_(grads[i]);
    } else {
      grad = grads[i];
    }
  }
}

std::vector<torch::Tensor> trainable(const torch::nn::Module& layer) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : layer.parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

}  // namespace

torch::Tensor forward_layers(StageCell& cell, const torch::Tensor& input, std::vector<torch::Tensor>* layer_outputs) {
  // Sequential's own forward hands each layer its input by move, so a forward without the graph
  // frees a layer's input while the next layer runs; kept layer outputs stay alive anyway.
  if (layer_outputs == nullptr) return cell.forward(input);
  torch::Tensor x = input;
  const std::size_t n = cell.layers->size();
  std::size_t done = 0;
  for (torch::nn::AnyModule& layer : *cell.layers) {
    x = layer.forward(x);
    if (++done < n) layer_outputs->push_back(x);
  }
  return x;
}

void backward_input(Slot& slot, const torch::Tensor& grad) {
  std::vector<torch::Tensor> targets;
  std::vector<std::size_t> layer_of_target;
  const bool wants_input = slot.input.defined() && slot.input.requires_grad();
  if (wants_input) targets.push_back(slot.input);
  for (std::size_t l = 0; l < slot.layer_outputs.size(); ++l) {
    if (!slot.layer_outputs[l].requires_grad()) continue;
    targets.push_back(slot.layer_outputs[l]);
    layer_of_target.push_back(l);
  }
  slot.layer_output_grads.assign(slot.layer_outputs.size(), torch::Tensor());
  if (!targets.empty()) {
    std::vector<torch::Tensor> grads = torch::autograd::grad({slot.output}, targets, {grad}, /*retain_graph=*/true,
                                                             /*create_graph=*/false, /*allow_unused=*/true);
    const std::size_t first_layer = wants_input ? 1 : 0;
    if (wants_input) slot.input_grad = grads[0];
    for (std::size_t i = 0; i < layer_of_target.size(); ++i) {
      slot.layer_output_grads[layer_of_target[i]] = grads[first_layer + i];
    }
  }
  slot.output_grad = grad;
}

void backward_weight(Slot& slot, StageCell& cell) {
  const std::vector<std::shared_ptr<torch::nn::Module>> layers = cell.layers->children();
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const bool last = l + 1 == layers.size();
    const torch::Tensor& root = last ? slot.output : slot.layer_outputs.at(l);
    const torch::Tensor& root_grad = last ? slot.output_grad : slot.layer_output_grads.at(l);
    const std::vector<torch::Tensor> params = trainable(*layers[l]);
    if (params.empty() || !root.defined() || !root.requires_grad() || !root_grad.defined()) continue;
    accumulate(params, torch::autograd::grad({root}, params, {root_grad}, /*retain_graph=*/true,
                                             /*create_graph=*/false, /*allow_unused=*/true));
  }
  slot.output = torch::Tensor();
  slot.output_grad = torch::Tensor();
  slot.layer_outputs.clear();
  slot.layer_output_grads.clear();
}

}  // namespace pipeworks::hw
