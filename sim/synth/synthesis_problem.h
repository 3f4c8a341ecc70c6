// What `pipeworks synthesize` is asked, as one value: K stages on the devices of a placement
// (stage s on device s unless given; several stages may share a device, e.g. a V 0,1,1,0), M
// micro-batches, their cost model, a memory cap per device and the search's time and seed, with
// the checks that turn hostile values into errors before any search starts.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/result.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

struct SynthesisProblem {
  int num_stages = 1;
  int num_microbatches = 1;
  CostModel costs;              // K stages on the placement's devices (costs.num_devices of them)
  // On every device, shared by its stages; a device's own smaller memory caps it further.
  Bytes memory_cap_bytes = 0;
  // placement[stage] = its device (sched::Schedule's meaning); empty: stage s on device s
  std::vector<int> placement{};
};

// The problem's placement: the given one, or stage s on device s where none is given.
std::vector<int> problem_placement(const SynthesisProblem& problem);

// True when some device holds more than one stage (the search then shares each device's cap
// among its stages and decides among them, device_memory.h and list_rule.h).
bool shares_devices(const std::vector<int>& placement);

struct SearchOptions {
  double time_limit_s = 10;  // the whole search, hand-written families and local search included
  std::uint64_t seed = 1;   // the local search's random moves
  // The local search's evaluations; -1: what the time limit buys (synthesize.h). Either way the
  // time limit still stops the search.
  std::int64_t max_evaluations = -1;
  // Re-materialization searched too (R before a backward, in_flight_limits.h): where the cap holds
  // fewer than M micro-batches' activations on some stage, or none.
  bool recompute = true;
};

// The simulator's pace the evaluation budget assumes: lowered actions lowered and simulated per
// second, about half the pace measured on the 2-core CI machine (docs/schedules.md has the figures).
inline constexpr double kEvaluatedActionsPerSecond = 3.0e6;

// The lowered actions of one candidate at most, about: F, I, W and the four SEND/RECV around each
// stage boundary per micro-batch.
std::int64_t lowered_actions_estimate(int num_stages, int num_microbatches);

// The longest search accepted (an hour): a limit is for people waiting on a command.
inline constexpr double kMaxTimeLimitS = 3600;

// Ok when K and M are within sched/limits.h, the cost model has K stages and (no placement given)
// K devices, a given placement places K stages on the cost model's devices and leaves none idle
// (sched::placement_problems' rule and words), the cost model is valid, the cap is positive, the
// time limit in (0, kMaxTimeLimitS] and the evaluations -1 or at least 0, and the time limit
// holds the first five evaluations (the four hand-written families and one list-rule setting) at
// kEvaluatedActionsPerSecond.
sched::Status check_problem(const SynthesisProblem& problem, const SearchOptions& options);

// The part of check_problem on the options alone: the time limit in (0, kMaxTimeLimitS], the
// evaluations -1 or at least 0 (the planner checks them before its sweep).
sched::Status check_search_options(const SearchOptions& options);

// Per device, the cap the schedule must fit: memory_cap_bytes, or the device's own memory where
// the cost model gives a smaller one.
std::vector<Bytes> device_caps_bytes(const SynthesisProblem& problem);

}  // namespace pipeworks::sim
