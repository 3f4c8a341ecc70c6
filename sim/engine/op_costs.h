// What one op costs, read from the cost model: a compute op's duration by kind (the usual one,
// its stage's first of a step, after its device idled) and a transfer's bytes and time. Kept
// apart from op_compiler.cc, which compiles ops into classes with these costs.
#pragma once

#include <cstdint>
#include <limits>

#include "sched/action.h"
#include "sched/result.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

// Time of one transfer of `bytes` over `link`: latency + ceil(bytes * 1e9 / bandwidth), exact for
// integral bandwidths. Fails when the result would exceed the simulator's time range.
sched::Result<Nanoseconds> transfer_ns(const Link& link, Bytes bytes);

// What a compute op of `duration` adds after its device idled for `idle` (CostModel::
// idle_slowdown): (slowdown - 1) x min(1, idle / after) of the duration. A linear ramp to a
// plateau, the shape of the slowdown measured on this VM's CPU (bench/README.md, "the idle
// slowdown").
inline Nanoseconds idle_extra_ns(Nanoseconds duration, Nanoseconds idle, double slowdown, Nanoseconds after) {
  if (slowdown <= 1.0 || idle <= 0 || duration <= 0) return 0;
  const double share = idle >= after ? 1.0 : static_cast<double>(idle) / static_cast<double>(after);
  return static_cast<Nanoseconds>(static_cast<double>(duration) * (slowdown - 1.0) * share + 0.5);
}

namespace detail {

// The simulator's time range: every time the engine computes stays within it (int64 / 4).
inline constexpr std::int64_t kMaxTime = std::numeric_limits<std::int64_t>::max() / 4;

Nanoseconds compute_cost(const StageCost& c, sched::ActionKind kind);
// The cost of the stage's first action of `kind` in a step; 0: as the others.
Nanoseconds first_cost(const StageCost& c, sched::ActionKind kind);
// Added to an action of `kind` that starts after its device idled; 0: none.
Nanoseconds resume_cost(const StageCost& c, sched::ActionKind kind);
// Bytes a SEND/RECV carries: stage s's output forwards, the same-sized gradient backwards.
Bytes transfer_bytes(const sched::Action& a, const CostModel& model);

}  // namespace detail
}  // namespace pipeworks::sim
