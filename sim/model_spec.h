// What a model costs, layer by layer, independent of any partition or device: the input of
// partitioning and of the cost-model builder. Costs scale with the micro-batch size as
// fixed + per_sample * size, so changing the number of micro-batches rescales everything.
// The JSON form is documented in docs/model_spec.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/result.h"
#include "sim/units.h"

namespace pipeworks::sim {

// A duration that grows linearly with the micro-batch size.
struct ScaledDuration {
  Nanoseconds fixed_ns = 0;
  Nanoseconds per_sample_ns = 0;
  // fixed + per_sample * microbatch_size; an error when that overflows int64.
  sched::Result<Nanoseconds> at(int microbatch_size) const;
  friend bool operator==(const ScaledDuration&, const ScaledDuration&) = default;
};

// A byte count that grows linearly with the micro-batch size.
struct ScaledBytes {
  Bytes fixed_bytes = 0;
  Bytes per_sample_bytes = 0;
  sched::Result<Bytes> at(int microbatch_size) const;
  friend bool operator==(const ScaledBytes&, const ScaledBytes&) = default;
};

ScaledDuration operator+(const ScaledDuration& a, const ScaledDuration& b);

struct LayerSpec {
  std::string name;
  ScaledDuration forward;
  // Backward split into the input-gradient (I) and weight-gradient (W) parts. When a spec
  // gives only the full backward B, the loader splits it I = B - B/2, W = B/2 (per part,
  // integer division) and leaves backward_split false; the writer then writes B back.
  ScaledDuration backward_input;
  ScaledDuration backward_weight;
  bool backward_split = false;
  ScaledBytes output_bytes;  // the activation sent to the next layer / across a stage boundary
  ScaledBytes stash_bytes;   // activations kept from forward until backward
  Bytes param_bytes = 0;

  ScaledDuration backward() const { return backward_input + backward_weight; }
  // Sets an unsplit backward B: I = B - B/2, W = B/2 (fixed and per-sample parts separately).
  void set_backward(const ScaledDuration& backward);
  friend bool operator==(const LayerSpec&, const LayerSpec&) = default;
};

// Storage precision of parameters; decides the optimizer's master copy (see optimizer.h).
enum class ParamDtype : std::uint8_t { kFp32, kFp16, kBf16 };
std::string_view dtype_name(ParamDtype dtype);  // "fp32", "fp16", "bf16"
int dtype_bytes(ParamDtype dtype);              // 4, 2, 2

struct ModelSpec {
  std::string name;
  std::string description;
  ParamDtype param_dtype = ParamDtype::kFp32;
  ScaledBytes input_bytes;  // the first layer's input (what the first stage receives)
  std::vector<LayerSpec> layers;

  int num_layers() const { return static_cast<int>(layers.size()); }
  Bytes total_param_bytes() const;
  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

// Checks at least one layer, unique non-empty names, non-negative costs.
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
