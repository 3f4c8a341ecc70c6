// Cost models for the synthesis tests: uniform or given F, I, W per stage, free hand-offs (or
// given ones between devices where stages share them), and one byte of activations per
// micro-batch, so a cap in bytes is a count of micro-batches.
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

// synth_costs for `stages` stages on `devices` devices (the links of uniform_cost_model's
// `devices`, each with `latency_ns`): the costs of a placement that shares devices.
inline sim::CostModel placed_synth_costs(int stages, int devices, sim::Nanoseconds forward_ns,
                                         sim::Nanoseconds input_ns, sim::Nanoseconds weight_ns,
                                         sim::Nanoseconds latency_ns = 0) {
  sim::CostModel costs = synth_costs(stages, forward_ns, input_ns, weight_ns);
  const sim::CostModel on_devices = sim::uniform_cost_model(devices, forward_ns, input_ns + weight_ns, latency_ns);
  costs.num_devices = on_devices.num_devices;
  costs.device_memory_bytes = on_devices.device_memory_bytes;
  costs.links = on_devices.links;
  costs.link_of = on_devices.link_of;
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
