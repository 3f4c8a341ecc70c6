// The LibTorch side of a stage's compute actions: the tensors one (stage, micro-batch) keeps
// between its actions, and the split backward. I computes the gradient of the stage input and of
// every layer output of the stage, keeping the graph; W then back-propagates each layer's output
// gradient into that layer's own parameters only, so no gradient I computed is computed again:
//
//   F:  x -> [layer 0] -> y0 -> [layer 1] -> y1 -> ... -> [layer n-1] -> out (last stage: loss)
//   I:  d out  ->  d y(n-2), ..., d y0, d x          (autograd::grad, graph retained)
//   W:  (y_l, d y_l) -> d params of layer l, each l   (autograd::grad, added to .grad)
//
// The split is at layer granularity: inside a layer of several operations (a transformer block)
// W re-runs the part of the layer's backward that leads to its earlier parameters.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/model/stage_cell.h"

namespace pipeworks::hw {

// What one (stage, micro-batch) holds on its device between its actions. Only the worker of the
// stage's device touches it (a stage on the same device reads its neighbour's slot on that thread).
struct Slot {
  torch::Tensor input;        // stage input (a leaf that requires grad, except stage 0's data)
  torch::Tensor output;       // stage output with its graph (last stage: the loss)
  torch::Tensor grad_output;  // received gradient of the output (RECV_B)
  torch::Tensor input_grad;   // gradient of the input after B or I, for stage s-1
  // Split backward only: the outputs of every layer but the last (from F or R), then from I on
  // their gradients and the output's.
  std::vector<torch::Tensor> layer_outputs;
  std::vector<torch::Tensor> layer_output_grads;
  torch::Tensor output_grad;
};

// The cell's layers applied to `input` one by one; every layer's output but the last goes to
// `layer_outputs` when it is given.
torch::Tensor forward_layers(StageCell& cell, const torch::Tensor& input, std::vector<torch::Tensor>* layer_outputs);

// I: from `grad`, the gradient of slot.output, the gradients of slot.input (when it requires
// grad; into slot.input_grad) and of slot.layer_outputs, keeping the graph for W.
void backward_input(Slot& slot, const torch::Tensor& grad);

// W: each layer's parameter gradients from its output's gradient, added to the parameters'
// .grad as the full backward would; frees the graph and everything I kept.
void backward_weight(Slot& slot, StageCell& cell);

}  // namespace pipeworks::hw
