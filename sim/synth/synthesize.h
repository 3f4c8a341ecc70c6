// `pipeworks synthesize`'s search in one call: the schedule of K stages (one per device, or on a
// given placement) and M micro-batches with the shortest simulated step whose peak fits the
// memory cap on every device, how far it is from the lower bound, and the best hand-written
// family under the same cap. With a placement that shares devices the cap is each device's,
// shared by its stages (device_memory.h), the list rule decides per device among its stages
// (list_rule.h), and the families are those written for that placement (hand_written.h).
//
//   1. the cap becomes per-stage in-flight limits (in_flight_limits.h), and where it holds fewer
//      than M micro-batches somewhere, limits under re-materialization too (unless the options
//      forbid R); a cap that holds not one micro-batch somewhere is an error
//   2. the list rule (list_rule.h) runs over every setting of policies.h (with an R before every
//      backward on the re-materializing limits); each schedule is lowered and simulated
//      (evaluation.h), and so are gpipe, 1f1b, zb-h1, zb-h2, each with R too (hand_written.h)
//   3. the best list-rule schedule and the best family that fit are each improved by the seeded
//      local search (local_search.h; R toggles among its moves where R is searched), half the
//      evaluations each, until they are spent, the bound is reached or the time limit passes;
//      the better result is the answer
//   4. the result is lowered and checked by sched::validate before it is returned
//
// The evaluations are a fixed number derived from the time limit (kEvaluatedActionsPerSecond), so
// one seed gives one schedule on any machine fast enough to spend them within the limit; where the
// clock stops the search first, the result says so.
#pragma once

#include <string>
#include <vector>

#include "sim/synth/hand_written.h"
#include "sim/synth/local_search.h"
#include "sim/synth/lower_bound.h"
#include "sim/synth/synthesis_problem.h"

namespace pipeworks::sim {

struct SynthesisResult {
  Evaluation best;                     // the synthesized schedule (compute only) and its simulation
  std::vector<Bytes> caps_bytes;       // per device
  std::vector<int> in_flight_limits;   // per stage, what the cap allows
  // Per stage, what the cap allows re-materializing; empty where R is not searched (not allowed,
  // or the cap holds all M micro-batches on every stage)
  std::vector<int> recompute_in_flight_limits;
  LowerBound bound;
  // gpipe, 1f1b, zb-h1, zb-h2, or the placement's families (then each with R, where searched)
  std::vector<HandWritten> hand_written;
  std::string origin;                  // the start the answer was searched from ("list rule ..." or a family)
  int list_schedules = 0;              // list-rule settings evaluated
  std::int64_t evaluation_budget = 0;  // the local search's evaluations allowed
  LocalSearchStats search;
  double gap() const { return gap_to_bound(best.step_ns(), bound.step_ns); }
};

sched::Result<SynthesisResult> synthesize(const SynthesisProblem& problem, const SearchOptions& options);

}  // namespace pipeworks::sim
