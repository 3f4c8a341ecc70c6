// Temporaries measured per pipeline stage, on the stage's layers run as one unit under the
// counting allocator, rather than composed from per-layer measurements: the composition
// over-estimates stages whose layers free or reuse buffers across layer boundaries (the
// convnet's convolution backward) and knows nothing of a forward's own temporaries (the
// transformer's attention, whose forward peak on top of the stash exceeds its backward's).
// LibTorch-free header.
//
// A stage's backward behaves differently the first time in a step: the executor drops the
// parameter gradients at the step's start, so its first backward makes them layer by layer
// while it frees the stash, later backwards accumulate into gradients that already exist.
//
//   live before F --F(stage)--> live after F (stash)      forward = peak during F - live after F
//   --grad of output--> b0
//   first:  no grads  --B(stage)--> first = peak during B - b0   (grads made inside)
//   later:  grads exist --B(stage)--> later = peak during B - b0
//   the same forward without the graph (F under re-materialization):
//                                    forward_no_grad = peak during F - live after F
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hw/exec/device_kind.h"
#include "hw/model/model_config.h"
#include "sched/result.h"
#include "sched/timeline.h"
#include "sim/engine/cost_model.h"
#include "sim/plan/partition.h"

namespace pipeworks::hw {

class ComputeDevices;  // hw/exec/compute_devices.h

// Bytes above what a stage holds when an action of it ends, at the action's peak (the
// simulator's cost model carries them per stage; split_held is not measured here: it comes from
// the model spec, sim/plan/stage_extra_bytes.h).
using sim::StageExtraBytes;

// Repetitions a run's prediction measures each stage's temporaries with.
inline constexpr int kStageMemoryRepetitions = 3;

// Per stage of `partition`, at `microbatch_size` samples: the largest of each over `repetitions`
// (first, later) pairs of passes, after one warm-up pass. The last stage's backward starts from
// its loss, as in the executor. On `device` (the CPU: the counting allocator; CUDA: one GPU's
// caching allocator, whose kernels have temporaries of their own, e.g. convolution workspaces).
// With `tensor_parallel` above 1, of rank 0's shard timed alone (profiler.h's tensor_parallel).
sched::Result<std::vector<StageExtraBytes>> measure_stage_extra_bytes(const ModelConfig& config,
                                                                      const sim::Partition& partition,
                                                                      int microbatch_size, int repetitions,
                                                                      DeviceKind device = DeviceKind::kCpu,
                                                                      int tensor_parallel = 1);

// The same for every contiguous range [begin, end) of the model's layers, on `where`: what a
// profile writes into the model spec (sim::StageTemporaries), so any partition finds its stages.
struct RangeExtraBytes {
  int begin = 0;
  int end = 0;
  StageExtraBytes bytes;
};
// Ranges of at most `max_layers` layers (measured_range_layers); `progress` hears (ranges done,
// ranges to do) about every tenth of the work.
sched::Result<std::vector<RangeExtraBytes>> measure_range_extra_bytes(
    const ModelConfig& config, int microbatch_size, int repetitions, const ComputeDevices& where, int max_layers,
    const std::function<void(std::int64_t, std::int64_t)>& progress = {});

// Measuring the ranges of up to W of L layers runs sum_{n=1..W} (L - n + 1) * n layers per pass,
// which for every range (W = L) grows as L^3. A profile measures every range while that work
// stays within kRangeLayerBudget layer runs per micro-batch size (every range of up to 48
// layers, the zoo's and ResNet-50's included), else the
// longest W that fits (longer stages compose their layers' bytes, prediction.h); `requested` > 0
// asks for exactly min(requested, L).
inline constexpr std::int64_t kRangeLayerBudget = 20'000;
std::int64_t range_layer_runs(int layers, int max_layers);
int measured_range_layers(int layers, int requested);

}  // namespace pipeworks::hw
