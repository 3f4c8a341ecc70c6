// What a model costs, layer by layer, independent of any partition or device: the input of
// partitioning and of the cost-model builder. Costs scale with the micro-batch size as
// fixed + per_sample * size, or, where a profile measured them, through a table of sizes read as
// size_table.h draws it (kernels change shape between sizes: a line fitted over 1..32 misses
// small sizes by tens of percent). The JSON form is documented in docs/model_spec.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/result.h"
#include "sim/spec/size_table.h"
#include "sim/spec/units.h"

namespace pipeworks::sim {

// A duration that grows with the micro-batch size; its table may declare the machine's kernel
// block (size_table.h), which a profile picks per table from its own sizes.
struct ScaledDuration {
  ScaledDuration() = default;
  ScaledDuration(Nanoseconds fixed, Nanoseconds per_sample, std::vector<SizePoint> table = {}, int block = 1)
      : fixed_ns(fixed), per_sample_ns(per_sample), measured(std::move(table)), size_block(block) {}
  Nanoseconds fixed_ns = 0;
  Nanoseconds per_sample_ns = 0;
  std::vector<SizePoint> measured;  // optional table (profiled sizes)
  int size_block = 1;               // 1..kMaxSizeBlock; above 1 only with a table
  sched::Result<Nanoseconds> at(int microbatch_size) const {
    return scaled_value(fixed_ns, per_sample_ns, measured, microbatch_size, size_block);
  }
  friend bool operator==(const ScaledDuration&, const ScaledDuration&) = default;
};

// A byte count that grows with the micro-batch size.
struct ScaledBytes {
  ScaledBytes() = default;
  ScaledBytes(Bytes fixed, Bytes per_sample, std::vector<SizePoint> table = {})
      : fixed_bytes(fixed), per_sample_bytes(per_sample), measured(std::move(table)) {}
  Bytes fixed_bytes = 0;
  Bytes per_sample_bytes = 0;
  std::vector<SizePoint> measured;  // optional table (profiled sizes)
  sched::Result<Bytes> at(int microbatch_size) const {
    return scaled_value(fixed_bytes, per_sample_bytes, measured, microbatch_size);
  }
  friend bool operator==(const ScaledBytes&, const ScaledBytes&) = default;
};

// Parts added; the table holds the sum at every size either table measured (a line alone counts
// as measured everywhere), its block combined_size_block of the two. Saturates rather than
// overflow (check_model_spec rejects such specs).
ScaledDuration operator+(const ScaledDuration& a, const ScaledDuration& b);

// How a layer divides over a tensor-parallel group of t ranks, Megatron-style (Shoeybi et al.
// 2019, "Megatron-LM", sec. 3; Korthikanti et al. 2022, sec. 4), stated on the whole layer;
// tensor_parallel.h derives one rank's layer from it: its times, the rest of its stash and
// parameters and its output (Megatron's scatter/gather of the boundary activation, Narayanan et
// al. 2021 sec. 4.1) divide by t; its collectives run on the group's links.
struct TensorParallelSplit {
  int forward_collectives = 0;   // all-reduces in the forward (an all-gather + reduce-scatter pair each with SP)
  int backward_collectives = 0;  // in the input-gradient backward
  ScaledBytes collective_bytes;  // each collective's buffer
  // The share of stash_bytes every rank keeps whole without sequence parallelism (layer-norm and
  // dropout inputs: 10 of a block's 34 s h); with it, all of the stash divides by t.
  double replicated_stash_fraction = 0;
  Bytes replicated_param_bytes = 0;  // the part of param_bytes every rank keeps whole (norms, some biases)
  // One rank's pass times where they are known for a group size (a GPU cost model's GEMMs lose
  // efficiency as t narrows them, so a rank of t rarely takes 1/t of the whole); sizes >= 2,
  // strictly increasing. A size without an entry divides the whole layer's times by t.
  struct RankTimes {
    int tp = 2;
    ScaledDuration forward;
    ScaledDuration backward_input;
    ScaledDuration backward_weight;
    friend bool operator==(const RankTimes&, const RankTimes&) = default;
  };
  std::vector<RankTimes> rank_times;
  const RankTimes* rank_times_for(int tp) const;
  friend bool operator==(const TensorParallelSplit&, const TensorParallelSplit&) = default;
};

struct LayerSpec {
  std::string name;
  ScaledDuration forward;
  // Backward split into the input-gradient (I) and weight-gradient (W) parts. When a spec
  // gives only the full backward B, the loader splits it I = B - B/2, W = B/2 (per part,
  // integer division) and leaves backward_split false; the writer then writes B back.
  ScaledDuration backward_input;
  ScaledDuration backward_weight;
  bool backward_split = false;
  // With a split backward, what the backward costs run whole (a B action), when measured apart
  // from I and W: split, the weight gradient walks again through what one backward walks once
  // (a block's inner graph), so I + W can exceed B. None: B = I + W.
  std::optional<ScaledDuration> whole_backward;
  ScaledBytes output_bytes;  // the activation sent to the next layer / across a stage boundary
  ScaledBytes stash_bytes;   // activations kept from forward until backward
  Bytes param_bytes = 0;
  // The forward of a micro-batch the stage will re-materialize runs without keeping the autograd
  // graph; what that costs when measured (none: the same as `forward`).
  std::optional<ScaledDuration> forward_no_grad;
  // Temporaries of the layer's backward above what it starts with (its output gradient and
  // stash), at their peak: workspaces, the input gradient being made. Default 0.
  ScaledBytes backward_transient_bytes;
  // What the layer's I leaves for its W in a split backward (hw/exec/stage_compute.h): the
  // gradients flowing into its operations that use parameters. None: its output's gradient,
  // output_bytes.
  std::optional<ScaledBytes> split_held_bytes;
  // How the layer divides over a tensor-parallel group; none: it does not (a model with such a
  // layer runs with tp 1 only).
  std::optional<TensorParallelSplit> tensor_parallel;

  // B: whole_backward when measured, else I + W.
  ScaledDuration backward() const { return whole_backward ? *whole_backward : backward_input + backward_weight; }
  // Sets an unsplit backward B: I = B - B/2, W = B/2 (fixed and per-sample parts and every
  // measured point separately, B's size block on both), no whole_backward.
  void set_backward(const ScaledDuration& backward);
  friend bool operator==(const LayerSpec&, const LayerSpec&) = default;
};

// Temporaries of a stage made of layers [begin, end), measured on those layers run as one unit:
// bytes above what the stage holds when the action ends, at the action's peak. Summing layers
// measured alone misses buffers freed or reused across layer boundaries and a forward's own
// temporaries; a profile measures every contiguous range, so any partition finds its stages.
struct StageTemporaries {
  int begin = 0;  // first layer
  int end = 0;    // one past the last
  ScaledBytes forward;          // a forward that keeps the graph (F; R under re-materialization)
  ScaledBytes forward_no_grad;  // a forward without it (F of a micro-batch re-materialized later)
  ScaledBytes first_backward;   // the step's first backward (the parameter gradients made in it)
  ScaledBytes later_backward;   // every later backward (gradients exist and accumulate)
  friend bool operator==(const StageTemporaries&, const StageTemporaries&) = default;
};

// Storage precision of parameters; decides the optimizer's master copy (see optimizer.h).
enum class ParamDtype : std::uint8_t { kFp32, kFp16, kBf16 };
std::string_view dtype_name(ParamDtype dtype);  // "fp32", "fp16", "bf16"
int dtype_bytes(ParamDtype dtype);              // 4, 2, 2

// The most layers a model has, from a preset or a spec file alike: the balanced partition's
// work grows with layers x stages, and a profile of a real network has a few thousand.
inline constexpr int kMaxModelLayers = 100'000;
// The largest tensor-parallel group (a node's devices; NVL72 has 72) and the most collectives a
// layer's pass may state.
inline constexpr int kMaxTensorParallel = 1024;
inline constexpr int kMaxTensorParallelCollectives = 1000;

struct ModelSpec {
  std::string name;
  std::string description;
  ParamDtype param_dtype = ParamDtype::kFp32;
  ScaledBytes input_bytes;  // the first layer's input (what the first stage receives)
  std::vector<LayerSpec> layers;
  std::vector<StageTemporaries> stage_temporaries;  // optional, any number of ranges
  // The model's FLOPs for one sample's forward and backward (no re-materialization counted),
  // for model FLOPs utilization (MFU); 0: unknown.
  double flops_per_sample = 0;
  std::int64_t tokens_per_sample = 0;  // for tokens/s; 0: unknown (not a sequence model)
  // The costs are one rank's of a tensor-parallel group of this size (tensor_parallel.h), with or
  // without sequence parallelism; 1: the whole model on each device.
  int tensor_parallel = 1;
  bool sequence_parallel = false;
  // The collectives overlap the layer's own GEMMs (Transformer Engine's userbuffers, Megatron's
  // --tp-comm-overlap): a pass pays only what a collective takes beyond its layer's compute.
  bool tensor_parallel_overlap = false;

  int num_layers() const { return static_cast<int>(layers.size()); }
  // The measured temporaries of layers [begin, end); null when the spec has none for that range.
  const StageTemporaries* temporaries_of(int begin, int end) const;
  Bytes total_param_bytes() const;
  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

// True when backward() would overflow: a split backward whose parts (or measured points) add up
// past int64.
bool backward_overflows(const LayerSpec& layer);

// Checks at least one layer, unique non-empty names, non-negative costs, valid tables, a backward()
// that does not overflow, stage temporaries on distinct ranges inside the model.
sched::Status check_model_spec(const ModelSpec& spec);

// Loads a spec from JSON text; errors start with `source` and name the field by JSON pointer:
//   model.json: /layers/3/forward/per_sample: "1.5xs": unknown unit 'xs' (...)
sched::Result<ModelSpec> parse_model_spec(std::string_view json_text,
                                          std::string_view source = "<model spec>");
sched::Result<ModelSpec> load_model_spec(const std::string& path);

// Writes the spec as JSON (exact unit strings) that parse_model_spec reads back unchanged.
std::string model_spec_to_json(const ModelSpec& spec);
sched::Status save_model_spec(const ModelSpec& spec, const std::string& path);

}  // namespace pipeworks::sim
