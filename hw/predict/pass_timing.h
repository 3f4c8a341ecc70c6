// The profiler's whole-model passes: each layer run and timed as a pipeline stage runs it, at
// every profiled micro-batch size in turns (hw/predict/profiler.cc reads them into its samples).
// LibTorch types inside: only hw/predict's profiler includes this header.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/exec/action_clock.h"
#include "hw/model/model_zoo.h"
#include "hw/predict/cost_fit.h"
#include "sched/result.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

using ProfileClock = std::chrono::steady_clock;

inline sched::Nanoseconds elapsed_ns_since(ProfileClock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(ProfileClock::now() - t0).count();
}

struct LayerRun {
  Layer& layer;
  bool is_first = false;
  bool is_last = false;
  LossKind loss = LossKind::kMse;
  const torch::Tensor& target;

  // What the executor's F does for this layer: the module, plus the loss (read back with item(),
  // as the executor does) on the last layer.
  torch::Tensor forward(const torch::Tensor& input) const;
};

// Stage inputs require grad (the executor detaches them so), the model's data does not.
torch::Tensor fresh_input(const torch::Tensor& x, bool is_data);

std::vector<torch::Tensor> trainable_parameters(Layer& layer);

// Times every layer inside whole-model passes, layer after layer in model order (backward in
// reverse), as a pipeline stage runs them: a layer's weights and inputs are as cold or warm as
// after its neighbour, not after itself repeated. One pass:
//
//   F:  x0 -> [layer 0] -> x1 -> [layer 1] -> ... -> loss      (each input detached, requires grad)
//   B:  loss -> [layer L-1] -> x_{L-1}.grad -> ... -> [layer 0]
//   F without the graph: the same forward pass under NoGradGuard
//
// The passes of all sizes take turns (size 1, 2, 4, ..., then again), so a slow spell of the
// machine lands on every size alike instead of bending the curve between two of them.
//
// Every layer is timed between two marks of the device's clock, the executor's ActionClock
// (compute_devices.h): on the CPU the host's steady clock, on a GPU CUDA events on its stream,
// resolved after the pass (one synchronize), so a span is when the GPU ran the layer's kernels.
struct PassTimes {
  // per layer, per pass
  std::vector<std::vector<std::int64_t>> forward, forward_no_grad, backward, backward_input, backward_weight;
  explicit PassTimes(std::size_t layers)
      : forward(layers), forward_no_grad(layers), backward(layers), backward_input(layers), backward_weight(layers) {}
};

// `warmup` + `repetitions` rounds of one pass per size, timed on `clock`; per size, per layer,
// the timings. An error when the clock cannot resolve its marks.
sched::Result<std::vector<PassTimes>> time_sizes_in_turns(Model& model, const std::vector<Batch>& batches, int warmup,
                                                          int repetitions, ActionClock& clock);

// Per round the median of one layer's timings at size `i`; the median round's median, with the
// whole spread (min and max over every round's samples).
Timing median_of_rounds(const std::vector<std::vector<PassTimes>>& rounds, std::size_t i,
                        std::vector<std::vector<std::int64_t>> PassTimes::*what, std::size_t layer);

}  // namespace pipeworks::hw
