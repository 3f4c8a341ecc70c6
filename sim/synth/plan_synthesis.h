// The plan's "synthesized" family (`pipeworks plan --synthesize`, Python plan(synthesize=True)):
// after the sweep, the fastest fitting row that synthesis can express -- tp 1, dp 1 (with or
// without recompute: the search decides R itself) -- is searched again by sim::synthesize on that
// row's own K, M, placement (one stage a device, the V, or the loop of its virtual stages),
// partition and micro-batch size under the plan's memory cap (else its devices' memory), and the
// schedule found joins the runners-up with a verdict against the plan's best row. It lives in
// sim/synth because sim/plan, below it, cannot call the search; Plan holds only its figures.
#pragma once

#include <cstdint>
#include <string>

#include "sched/result.h"
#include "sim/plan/planner.h"

namespace pipeworks::sim {

struct PlanSynthesisOptions {
  double time_limit_s = 5;            // the search's, as `synthesize --time-limit`
  std::uint64_t seed = 1;
  std::int64_t max_evaluations = -1;  // -1: what the time limit buys (synthesis_problem.h)
};

// Why synthesis cannot search a row of this configuration ("dp 2: synthesis models one pipeline
// without data parallelism", reasons joined by "; "), "" when it can.
std::string synthesis_unsupported(const SweepConfig& config);

// make_plan, then the synthesized family: plan.synthesis and one more runner-up line labelled
// "synthesized (searched from <row>)". Errors: those of make_plan, and search options out of
// range (the time limit in (0, kMaxTimeLimitS], evaluations -1 or more). A row that cannot be
// searched, or a search that finds nothing under the cap, is said in the family's reason.
sched::Result<Plan> make_plan_with_synthesis(const PlanRequest& request, const PlanSynthesisOptions& synthesis,
                                             const SweepOptions& options = {});

// The synthesized family added to a plan `request` made.
void add_synthesized_family(Plan& plan, const PlanRequest& request, const PlanSynthesisOptions& synthesis);

}  // namespace pipeworks::sim
