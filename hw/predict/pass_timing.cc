// Whole-model pass timing of the profiler (see pass_timing.h).
#include "hw/predict/pass_timing.h"

#include <algorithm>
#include <functional>

#include <torch/torch.h>

#include "hw/exec/stage_compute.h"

namespace pipeworks::hw {
namespace {

using Keep = std::function<void(std::vector<std::vector<std::int64_t>> PassTimes::*, std::size_t, std::int64_t)>;

// The split backward of one pass, as the executor runs a zero-bubble stage (stage_compute.h): a
// fresh forward (untimed) builds the graph, then per layer from the last, I (the input's
// gradient, graph kept, the gradients into the operations that use parameters captured) and W
// (those operations again, for their parameters only).
//
//   B:      loss -> [layer L-1] -> ... -> [layer 0]          one walk, both gradients
//   I, W:   loss -> I[L-1] -> I[L-2] -> ... ;  W[l] runs layer l's parameter operations
void time_split_backward(Model& model, const Batch& batch, const Keep& keep) {
  const std::size_t n = model.layers.size();
  std::vector<Slot> slots(n);
  torch::Tensor x = batch.inputs;
  for (std::size_t l = 0; l < n; ++l) {
    const LayerRun run{model.layers[l], l == 0, l + 1 == n, model.loss, batch.targets};
    slots[l].input = fresh_input(x, l == 0);
    slots[l].output = run.forward(slots[l].input);
    x = slots[l].output.detach();
  }
  torch::Tensor grad = torch::ones_like(slots[n - 1].output);
  for (std::size_t l = n; l-- > 0;) {
    const std::vector<torch::Tensor> params = trainable_parameters(model.layers[l]);
    auto t0 = ProfileClock::now();
    backward_input(slots[l], grad, params);
    // Nothing to compute for the model's input (the cost model gives the first stage no I).
    keep(&PassTimes::backward_input, l, slots[l].input.requires_grad() ? elapsed_ns_since(t0) : 0);
    // An output that does not depend on its input passes a zero gradient on.
    grad = slots[l].input_grad.defined() || l == 0 ? slots[l].input_grad : torch::zeros_like(slots[l].input);
    t0 = ProfileClock::now();
    backward_weight(slots[l]);
    keep(&PassTimes::backward_weight, l, params.empty() ? 0 : elapsed_ns_since(t0));
  }
}

void time_pass(Model& model, const Batch& batch, PassTimes* into) {
  const std::size_t n = model.layers.size();
  std::vector<torch::Tensor> inputs(n), outputs(n);
  torch::Tensor x = batch.inputs;
  const Keep keep = [into](std::vector<std::vector<std::int64_t>> PassTimes::*what, std::size_t l, std::int64_t ns) {
    if (into != nullptr) ((*into).*what)[l].push_back(ns);
  };
  for (std::size_t l = 0; l < n; ++l) {
    const LayerRun run{model.layers[l], l == 0, l + 1 == n, model.loss, batch.targets};
    inputs[l] = fresh_input(x, l == 0);
    const auto t0 = ProfileClock::now();
    outputs[l] = run.forward(inputs[l]);
    keep(&PassTimes::forward, l, elapsed_ns_since(t0));
    x = outputs[l].detach();
  }
  for (std::size_t l = n; l-- > 0;) {
    const torch::Tensor grad = l + 1 == n ? torch::ones_like(outputs[l]) : inputs[l + 1].grad();
    const auto t0 = ProfileClock::now();
    torch::autograd::backward({outputs[l]}, {grad});
    keep(&PassTimes::backward, l, elapsed_ns_since(t0));
  }
  time_split_backward(model, batch, keep);
  const torch::NoGradGuard no_grad;
  x = batch.inputs;
  for (std::size_t l = 0; l < n; ++l) {
    const LayerRun run{model.layers[l], l == 0, l + 1 == n, model.loss, batch.targets};
    const auto t0 = ProfileClock::now();
    x = run.forward(x);
    keep(&PassTimes::forward_no_grad, l, elapsed_ns_since(t0));
  }
}

}  // namespace

torch::Tensor LayerRun::forward(const torch::Tensor& input) const {
  torch::Tensor out = layer.module.forward(input);
  if (is_last) {
    out = compute_loss(loss, out, target);
    (void)out.item<double>();
  }
  return out;
}

torch::Tensor fresh_input(const torch::Tensor& x, bool is_data) {
  return x.is_floating_point() && !is_data ? x.detach().requires_grad_(true) : x;
}

std::vector<torch::Tensor> trainable_parameters(Layer& layer) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : layer.module.ptr()->parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

std::vector<PassTimes> time_sizes_in_turns(Model& model, const std::vector<Batch>& batches, int warmup,
                                           int repetitions) {
  std::vector<PassTimes> times(batches.size(), PassTimes(model.layers.size()));
  for (int r = 0; r < warmup + repetitions; ++r) {
    for (std::size_t i = 0; i < batches.size(); ++i) time_pass(model, batches[i], r >= warmup ? &times[i] : nullptr);
  }
  return times;
}

Timing median_of_rounds(const std::vector<std::vector<PassTimes>>& rounds, std::size_t i,
                        std::vector<std::vector<std::int64_t>> PassTimes::*what, std::size_t layer) {
  std::vector<std::int64_t> medians;
  std::vector<std::int64_t> all;
  for (const std::vector<PassTimes>& round : rounds) {
    const std::vector<std::int64_t>& samples = (round[i].*what)[layer];
    medians.push_back(summarize_timings(samples).median_ns);
    all.insert(all.end(), samples.begin(), samples.end());
  }
  Timing out = summarize_timings(all);
  std::sort(medians.begin(), medians.end());
  out.median_ns = medians[(medians.size() - 1) / 2];
  return out;
}

}  // namespace pipeworks::hw
