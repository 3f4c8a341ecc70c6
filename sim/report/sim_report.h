// What `pipeworks simulate` prints and writes: the aligned summary table for people and the JSON
// report for programs (schema in docs/simulate_report.md), both from one SimResult plus the
// inputs that produced it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/generators.h"
#include "sim/engine/simulator.h"
#include "sim/plan/partition.h"
#include <nlohmann/json.hpp>

#include "sim/spec/model_spec.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::sim {

// The layers of one stage: [layer_begin, layer_end) of the model, with the first/last names.
struct StageLayers {
  int layer_begin = 0;
  int layer_end = 0;
  std::string first_layer;
  std::string last_layer;
};

// Each stage's layers under `partition` (which must fit `model`).
std::vector<StageLayers> stage_layers(const Partition& partition, const ModelSpec& model);

// The inputs of a simulation, echoed in the report.
struct ReportInputs {
  std::string model;
  std::string cluster;
  std::string schedule;  // "gpipe", "1f1b"
  int num_stages = 0;
  int num_microbatches = 0;
  int microbatch_size = 1;
  bool recompute = false;
  bool comm_lowered = true;
  std::vector<StageLayers> stages;  // one per stage; empty when unknown
  // The kind `schedule` names; none for a schedule file, whose closed-form reference is GPipe's.
  std::optional<sched::ScheduleKind> kind;
  // How the simulated pipeline is laid out beside its data-parallel replicas; none: one pipeline.
  std::optional<ParallelLayout> layout;
  // What the inputs make doubtful, one sentence each: a spec read outside its profiled sizes
  // (size_extrapolation.h), a schedule that does not do what its name says.
  std::vector<std::string> warnings;
};

// The layout as the JSON report writes it: tp, pp, virtual_stages, dp, zero, rank_order,
// devices and the headline's text.
nlohmann::ordered_json layout_json(const ParallelLayout& layout);

// What the simulation did not time, one sentence each (none when the schedule has neither):
// "12 stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) cost nothing: the cost model gives them
// no time (no data-parallel group)" (only when no collective took time), "6 OVERLAP_F_B actions run as their
// forward then their backward: overlap is not modelled" (or, overlapped, how).
std::vector<std::string> simulation_notes(const SimResult& result);

// ReportInputs::warnings for `model` read at `microbatch_size` (size_extrapolation.h) and a
// schedule generated as `kind` with `virtual_stages` (sched/schedule_notes.h; none: a file).
std::vector<std::string> input_warnings(const ModelSpec& model, int microbatch_size,
                                        std::optional<sched::ScheduleKind> kind, int virtual_stages);

// (K-1)/(M+K-1): GPipe's bubble with uniform stages and free communication.
double gpipe_closed_form_bubble(int num_stages, int num_microbatches);

// Pretty-printed JSON (2-space indent, trailing newline). Field names carry their units. The
// inputs, then the result's fields (sim/engine/sim_result_fields.h; those the inputs echo, once),
// the notes, the stages and the devices (docs/simulate_report.md).
std::string report_json(const SimResult& result, const ReportInputs& inputs);

// The per-stage table (layers, busy, bubble, peak memory, capacity, fits) and the totals:
//
//   stage  device  layers                 busy      bubble  peak memory  capacity   fits
//       0       0  [0,7) embedding..h5     9.81 ms    27.3%    21.39 GiB  80.00 GiB  yes
//   ...
//   makespan     13.49 ms
//   throughput   2372.0 samples/s (32 samples per iteration)
//   bubble       27.3% simulated, 27.3% GPipe closed form (K-1)/(M+K-1) = 3/11
//   memory       fits on every device
//   note         ... (a line per simulation_notes entry)
std::string summary_table(const SimResult& result, const ReportInputs& inputs);

}  // namespace pipeworks::sim
