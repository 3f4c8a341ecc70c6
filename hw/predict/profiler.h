// The profiler behind `pipeworks profile` and `pipeworks run --predict`: measures every layer of a
// model-zoo model on this CPU or a GPU (forward with and without the autograd graph, backward; warm-up,
// repetitions, median and spread; output, stash and backward-transient bytes under the counting
// allocator) at several micro-batch sizes, fits the simulator's fixed + per-sample shape, and
// measures what the executor adds on this machine (machine_profile.h). LibTorch-free header.
//
//   per layer, per size:  F (graph kept) = what F and R cost     F (no graph) = F under recompute
//                         B = backward from the output gradient (the last layer includes the loss)
//                         I, W = the same backward split (I keeps the graph, W walks it again)
//   times:                each layer timed inside whole-model passes (layers back to back in
//                         model order, backward in reverse), as a stage runs them, on the
//                         device's own clock (host clock on the CPU, CUDA events on a GPU)
//   bytes:                from the layer alone, as the device's allocator counts them (the
//                         counting allocator on the CPU, the caching allocator on a GPU)
//   fit:                  time(size) = fixed + per_sample * size   (least squares, clamped >= 0),
//                         and the measured sizes as a table the spec interpolates, each time
//                         table with the kernel block its sizes support (sim/spec/size_table.h)
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hw/exec/device_kind.h"
#include "hw/model/model_config.h"
#include "hw/predict/cost_fit.h"
#include "hw/predict/machine_profile.h"
#include "hw/predict/stage_memory.h"
#include "sched/result.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::hw {

class ComputeDevices;  // hw/exec/compute_devices.h

struct ProfileOptions {
  ModelConfig model;
  // Where the layers, stage temporaries and hand-offs are measured (make_compute_devices; the
  // model spec and cluster spec then describe that device).
  DeviceKind device = DeviceKind::kCpu;
  std::vector<int> microbatch_sizes{1, 2, 4, 8};
  int warmup = 2;
  int repetitions = 7;
  // The layer timings in `rounds` rounds, `round_gap_s` seconds apart; per layer, size and kind
  // the median of the rounds' medians. A slow spell of a shared machine lasts seconds to tens of
  // seconds; a profile taken inside one is off for every configuration predicted from it.
  int rounds = 1;
  double round_gap_s = 0;
  // Intra-op threads while timing; use the run's threads per worker so layers are timed the way
  // the pipeline runs them.
  int threads = 1;
  // Devices of the cluster spec; with 2 or more, the contention factor of that many workers
  // running at once is measured (machine_profile.h).
  int workers = 2;
  std::vector<std::vector<int>> worker_cpus;  // per worker, the cores of its contention timing; empty: unpinned
  bool measure_machine = true;  // hand-off, dispatch overhead, contention
  // Every contiguous range of layers' temporaries at every size (sim::StageTemporaries), ranges
  // of up to `max_range_layers` layers (0: as many as stage_memory.h's budget allows).
  bool measure_stage_temporaries = true;
  int max_range_layers = 0;
  // Above 1: the layers of rank 0's shard over this many tensor-parallel ranks, timed alone
  // (their all-reduces counted, not run: tensor_parallel_profile.h); the spec is that rank's
  // (tensor_parallel = N, each layer's collectives in its TensorParallelSplit). No stage
  // temporaries: they are measured on the unsharded model.
  int tensor_parallel = 1;
};

// One layer at one micro-batch size.
struct LayerSample {
  int microbatch_size = 1;
  Timing forward;          // with the autograd graph kept (F; R under re-materialization)
  Timing forward_no_grad;  // under NoGradGuard (F of a re-materializing stage)
  Timing backward;
  // The backward split as the executor runs it for zero-bubble schedules (hw/exec/stage_compute.h):
  // I, the gradient of the layer's input with the graph kept (nothing to compute on the first
  // layer, whose input needs none), then W, its operations that use parameters run again for
  // their parameters (0 for a layer without parameters).
  Timing backward_input;
  Timing backward_weight;
  sched::Bytes output_bytes = 0;  // the layer's output (before the loss on the last layer)
  sched::Bytes stash_bytes = 0;   // live after the forward: output + what autograd saved (+ loss)
  sched::Bytes backward_transient_bytes = 0;  // peak during backward above its start (grads exist)
  // What the split backward's I leaves for W (hw/exec/stage_compute.h); 0 when not measured.
  sched::Bytes split_held_bytes = 0;
  sched::Bytes collective_bytes = 0;  // the buffer of its tensor-parallel all-reduces (0: none)
};

struct LayerProfile {
  std::string name;
  sched::Bytes param_bytes = 0;
  std::vector<LayerSample> samples;        // one per micro-batch size, in the options' order
  int forward_collectives = 0;   // tensor-parallel all-reduces in its forward
  int backward_collectives = 0;  // and in its backward
};

struct Profile {
  ProfileOptions options;
  sim::ModelSpec spec;  // fitted: what `pipeworks simulate` reads
  std::vector<LayerProfile> layers;
  MachineProfile machine;   // zeros when not measured
  sim::ClusterSpec cluster;  // `workers` devices of this machine (cluster_from_machine)
  std::vector<std::string> notes;  // clamped fits and other things a reader should know
  // Optional, per stage of the partition `stage_boundaries`: forward and backward temporaries,
  // measured on each stage as a whole (stage_memory.h). predict_run uses them instead of the
  // per-layer composition when it predicts a run with exactly that partition.
  std::vector<int> stage_boundaries;
  std::vector<StageExtraBytes> stage_extra_bytes;
};

// Errors name the layer and size that failed. `progress` gets one line per finished step.
sched::Result<Profile> profile_model(const ProfileOptions& options,
                                     const std::function<void(const std::string&)>& progress = {});

// Times and bytes of one model's layers at the given sizes (no fitting, no machine figures), in
// `rounds` rounds `round_gap_s` apart (see ProfileOptions), measured on `where` (the CPU without it).
sched::Result<std::vector<LayerProfile>> profile_layers(const ModelConfig& model, const std::vector<int>& sizes,
                                                        int warmup, int repetitions, int threads, int rounds = 1,
                                                        double round_gap_s = 0);
sched::Result<std::vector<LayerProfile>> profile_layers(const ModelConfig& model, const std::vector<int>& sizes,
                                                        int warmup, int repetitions, int threads, int rounds,
                                                        double round_gap_s, const ComputeDevices& where,
                                                        int tensor_parallel = 1);

// A spec layer from its samples: every quantity (forward with and without the graph, backward,
// output, stash and backward-transient bytes) as the fitted line plus the table of measured sizes
// (when more than one), with notes for every clamped fit ("fc3 forward: negative fixed part
// clamped to 0"), and its tensor-parallel collectives when it runs any.
sched::Result<sim::LayerSpec> fit_layer(const LayerProfile& layer, std::vector<std::string>& notes);

}  // namespace pipeworks::hw
