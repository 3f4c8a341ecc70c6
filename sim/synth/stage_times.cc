// Stage times and hand-offs for the synthesis, from the simulator's own cost rules (stage_times.h).
#include "sim/synth/stage_times.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/zero_bubble.h"
#include "sim/engine/op_costs.h"

namespace pipeworks::sim {
namespace {

// One transfer of `bytes` from device `from` to `to` (engine.h's overlap, eager and blocking rules).
sched::Result<Nanoseconds> handoff_ns(const CostModel& costs, int from, int to, Bytes bytes) {
  const Link* link = costs.link(from, to);
  if (link == nullptr) return Nanoseconds{0};
  auto wire = transfer_ns(*link, bytes);
  if (!wire) return wire.error();
  const Nanoseconds overhead = costs.comm_mode == CommMode::kBlocking ? 0 : link->send_overhead_ns;
  return *wire + overhead;
}

// Ok when every time is within what a list schedule's clock holds (sched::kMaxStageTime each).
sched::Status check_times(const SynthStageTimes& t, int stage) {
  for (const Nanoseconds ns : {t.forward_ns, t.first_forward_ns, t.input_grad_ns, t.weight_grad_ns, t.backward_ns,
                               t.first_backward_ns, t.handoff_forward_ns, t.handoff_backward_ns, t.tail_ns}) {
    if (ns > sched::kMaxStageTime) {
      return sched::Error{fmt::format("stage {}: an action or hand-off of {} ns is beyond the {} ns a synthesized "
                                      "schedule's actions may take",
                                      stage, ns, sched::kMaxStageTime)};
    }
  }
  return sched::Ok{};
}

}  // namespace

bool stage_splits_backward(const StageCost& cost) { return cost.backward_weight_ns > 0; }

sched::Result<std::vector<SynthStageTimes>> synth_stage_times(const CostModel& costs) {
  return synth_stage_times(costs, sched::identity_placement(static_cast<int>(costs.stages.size())));
}

sched::Result<std::vector<SynthStageTimes>> synth_stage_times(const CostModel& costs,
                                                             const std::vector<int>& placement) {
  std::vector<SynthStageTimes> times;
  const Nanoseconds o = costs.per_action_overhead_ns;
  const int k = static_cast<int>(costs.stages.size());
  for (int s = 0; s < k; ++s) {
    const StageCost& c = costs.stages[static_cast<std::size_t>(s)];
    SynthStageTimes t;
    t.split = stage_splits_backward(c);
    t.forward_ns = c.forward_ns + o;
    t.first_forward_ns = (c.first_forward_ns > 0 ? c.first_forward_ns : c.forward_ns) + o;
    t.first_backward_ns = (c.first_backward_ns > 0 ? c.first_backward_ns : c.backward_ns) + o;
    t.input_grad_ns = c.backward_input_ns + o;
    t.weight_grad_ns = c.backward_weight_ns + o;
    t.backward_ns = c.backward_ns + o;
    t.tail_ns = c.optimizer_step_ns + c.param_gather_ns;
    t.forward_no_grad_ns = (c.forward_no_grad_ns > 0 ? c.forward_no_grad_ns : c.forward_ns) + o;
    const Nanoseconds first_r = c.first_recompute_ns > 0 ? c.first_recompute_ns : c.recompute_ns;
    t.recompute_ns = std::min(c.recompute_ns, first_r) + o;
    if (s + 1 < k) {
      const int here = placement.at(static_cast<std::size_t>(s));
      const int next = placement.at(static_cast<std::size_t>(s) + 1);
      auto forward = handoff_ns(costs, here, next, c.output_bytes);
      if (!forward) return forward.error();
      auto backward = handoff_ns(costs, next, here, c.output_bytes);
      if (!backward) return backward.error();
      t.handoff_forward_ns = *forward;
      t.handoff_backward_ns = *backward;
    }
    if (auto fits = check_times(t, s); !fits) return fits.error();
    times.push_back(t);
  }
  return times;
}

}  // namespace pipeworks::sim
