// Cost models for the synthesis tests: uniform or given F, I, W per stage, free hand-offs, and
// one byte of activations per micro-batch, so a cap in bytes is a count of micro-batches.
#pragma once

#include "sched/passes.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/simulator.h"

namespace pipeworks::test {

inline sim::CostModel synth_costs(int stages, sim::Nanoseconds forward_ns, sim::Nanoseconds input_ns,
                                  sim::Nanoseconds weight_ns, sim::Bytes static_bytes = 0) {
  sim::CostModel costs = sim::uniform_cost_model(stages, forward_ns, input_ns + weight_ns);
  for (sim::StageCost& c : costs.stages) {
    c.backward_input_ns = input_ns;
    c.backward_weight_ns = weight_ns;
    c.stash_bytes = 1;
    c.param_bytes = static_bytes;
  }
  return costs;
}

// The lowered schedule simulated (as `simulate --schedule-file` does with a compute-only file).
inline sim::SimResult simulate_lowered(const sched::Schedule& schedule, const sim::CostModel& costs) {
  auto lowered = sched::lower_comm(schedule);
  REQUIRE(lowered.ok());
  auto result = sim::simulate(*lowered, costs);
  REQUIRE(result.ok());
  return std::move(result).value();
}

}  // namespace pipeworks::test
