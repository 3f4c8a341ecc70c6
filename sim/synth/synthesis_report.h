// The JSON report of `pipeworks synthesize --json` (schema "pipeworks.synthesis_report/1",
// docs/schedules.md lists its fields): the synthesized schedule's step, bubble and per-device peak
// against the cap, the lower bound and the gap, each hand-written family's figures, the search.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/synth/placement_trial.h"
#include "sim/synth/synthesize.h"

namespace pipeworks::sim {

// What the report says about the inputs besides the result.
struct SynthesisInputs {
  std::string model;
  std::string cluster;
  int microbatch_size = 1;
  double time_limit_s = 0;
  std::uint64_t seed = 0;
  std::vector<PlacementTrial> placements_tried;  // empty unless the placement was searched
};

// The report, pretty-printed with a final newline.
std::string synthesis_report_json(const SynthesisResult& result, const SynthesisInputs& inputs);

// The R actions of a compute-only schedule: backwards it re-materializes.
std::int64_t recomputed_backwards(const sched::Schedule& schedule);

// The largest peak over the devices of an evaluation (for the families' one-line figures).
Bytes largest_peak_bytes(const Evaluation& evaluation);

}  // namespace pipeworks::sim
