// The one place a synthesis problem is built from specs, so that `pipeworks synthesize`, Python's
// synthesize() and the planner's synthesized family ask the search the same question: K stages
// of a partition (uniform unless given), stage s on device s unless a placement is given, the
// micro-batch size the batch splits into, and the cost model sim/plan builds from them, with the
// executor's bytes beyond the stashes (sim/plan/stage_extra_bytes.h) so that the search bounds
// what a run would hold.
#pragma once

#include <optional>
#include <vector>

#include "sched/result.h"
#include "sim/plan/partition.h"
#include "sim/spec/batch_split.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"
#include "sim/synth/synthesis_report.h"

namespace pipeworks::sim {

struct SynthesisSetup {
  int num_stages = 4;
  int num_microbatches = 8;
  std::optional<int> batch;              // samples per mini-batch; nullopt: kDefaultSamplesPerMicrobatch x M (batch_split.h)
  OptimizerKind optimizer = OptimizerKind::kAdam;
  Bytes memory_cap_bytes = 0;            // on every device (synthesis_problem.h)
  std::optional<Partition> partition;    // nullopt: uniform over the K stages
  // placement[stage] = its device (several stages may share one, e.g. the V 0,1,2,3,3,2,1,0);
  // empty: stage s on device s
  std::vector<int> placement{};
};

// The search's problem and what its report says about the inputs.
struct SpecSynthesis {
  SynthesisProblem problem;
  SynthesisInputs inputs;
};

// The batch's micro-batch size; the error reads "batch 12 and 8 micro-batches: ...".
sched::Result<int> synthesis_microbatch_size(const SynthesisSetup& setup);

// Errors, in this order: K x M beyond sched/limits.h, a batch that does not split, more stages
// than the cluster's devices (no placement given), a placement that is not one of K stages on
// devices 0..D-1 each holding one (sched/placement.h's words) or D beyond the cluster's, a model with fewer layers than stages, a partition of another
// model or another K, a cost model that cannot be built. The search's own checks (the cap, the
// time limit) stay with sim::synthesize.
sched::Result<SpecSynthesis> problem_from_specs(const ModelSpec& model, const ClusterSpec& cluster,
                                                const SynthesisSetup& setup, const SearchOptions& options);

}  // namespace pipeworks::sim
