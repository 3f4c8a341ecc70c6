// The LibTorch side of a stage's compute actions: the tensors one (stage, micro-batch) keeps
// between its actions, and the split backward at operator granularity. I runs the backward from
// the stage output to the stage input only, keeping the graph, and captures the gradient flowing
// into every operation that uses a parameter; W then runs those operations again, for their
// parameters only, from the captured gradients. Nothing I computed is computed again:
//
//   F:  x -> [addmm W1] -> h -> relu -> [addmm W2] -> out
//   B:  d out -> addmm2 (d h', d W2) -> relu -> addmm1 (d x, d W1)          one walk
//   I:  d out -> addmm2 (d h' only) -> relu -> addmm1 (d x only)            captures g2, g1
//   W:  g2 -> addmm2 (d W2 only);  g1 -> addmm1 (d W1 only)                 into .grad
//
// An operation "uses a parameter" where the graph's activation path (what leads to the stage
// input) meets a subgraph that leads to parameters only (a transpose of a weight, a bias). On the
// first stage nothing leads to the input (the data needs no gradient): I has nothing to do and W
// runs the whole backward, as torch.distributed.pipelining does. Where one parameter is reached
// from two such operations (weights tied inside a stage), the split falls back to I = the input
// gradient and W = every parameter's gradient from the stage output, which walks the graph twice.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

namespace pipeworks::hw {

// What I leaves for W: the graph's nodes W starts from and the gradients captured for them
// (defined in stage_compute.cc, where LibTorch's autograd internals are included).
struct PendingWeightGradients;

// What one (stage, micro-batch) holds on its device between its actions. Only the worker of the
// stage's device touches it (a stage on the same device reads its neighbour's slot on that thread).
struct Slot {
  torch::Tensor input;        // stage input (a leaf that requires grad, except stage 0's data)
  torch::Tensor output;       // stage output with its graph (last stage: the loss)
  torch::Tensor grad_output;  // received gradient of the output (RECV_B)
  torch::Tensor input_grad;   // gradient of the input after B or I, for stage s-1
  std::shared_ptr<PendingWeightGradients> pending;  // from I to W of a split backward
};

// I: from `grad`, the gradient of slot.output, the gradient of slot.input (when it requires grad;
// into slot.input_grad), keeping the graph and what W needs for `params` (the stage's trainable
// parameters) in slot.pending.
void backward_input(Slot& slot, const torch::Tensor& grad, const std::vector<torch::Tensor>& params);

// W: the parameters' gradients, added to their .grad as the full backward would; frees the graph
// and everything I kept. Precondition: backward_input ran on the slot.
void backward_weight(Slot& slot);

// Bytes of the gradients the slot holds from I for W (the captured ones, or the output's
// gradient where W runs from the output).
std::int64_t pending_weight_bytes(const Slot& slot);

}  // namespace pipeworks::hw
