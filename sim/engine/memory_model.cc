// The memory rules of the simulator (see memory_model.h for the table).
#include "sim/engine/memory_model.h"

namespace pipeworks::sim {

std::vector<StaticMemory> static_memory(const sched::Schedule& schedule, const CostModel& model) {
  std::vector<StaticMemory> out(static_cast<std::size_t>(schedule.num_devices()));
  for (std::size_t s = 0; s < schedule.placement.size() && s < model.stages.size(); ++s) {
    const int d = schedule.placement[s];
    if (d < 0 || d >= schedule.num_devices()) continue;
    const StageCost& c = model.stages[s];
    StaticMemory& m = out[static_cast<std::size_t>(d)];
    m.param_bytes += c.param_bytes;
    m.grad_bytes += c.grad_bytes;
    m.optimizer_bytes += c.optimizer_bytes;
  }
  return out;
}

Bytes activation_delta_bytes(const sched::Action& a, const sched::ActionIndex& index, const CostModel& model) {
  using sched::Action;
  using sched::ActionKind;
  return activation_delta_bytes(a.kind, model.stages[static_cast<std::size_t>(a.stage)],
                                index.contains(Action{a.stage, ActionKind::kRecompute, a.microbatch}),
                                index.contains(Action{a.stage, ActionKind::kBackwardWeight, a.microbatch}));
}

Bytes activation_delta_bytes(sched::ActionKind kind, const StageCost& c, bool recompute, bool split) {
  using sched::ActionKind;
  const Bytes held = recompute ? c.input_bytes + c.stash_bytes : c.stash_bytes;
  switch (kind) {
    case ActionKind::kForward:
      return recompute ? c.input_bytes : c.stash_bytes;
    case ActionKind::kRecompute:
      return c.stash_bytes;
    case ActionKind::kBackward:
    case ActionKind::kBackwardInput:
      return split ? 0 : -held;
    case ActionKind::kBackwardWeight:
      return -held;
    default:
      return 0;
  }
}

MemoryReport memory_report(const StaticMemory& fixed, Bytes peak_activation_bytes, Bytes capacity_bytes) {
  MemoryReport r;
  r.param_bytes = fixed.param_bytes;
  r.grad_bytes = fixed.grad_bytes;
  r.optimizer_bytes = fixed.optimizer_bytes;
  r.peak_activation_bytes = peak_activation_bytes;
  r.peak_bytes = fixed.total_bytes() + peak_activation_bytes;
  r.capacity_bytes = capacity_bytes;
  r.fits = capacity_bytes == 0 || r.peak_bytes <= capacity_bytes;
  return r;
}

}  // namespace pipeworks::sim
