// timed_schedule: a cost model's stage times and hand-off handed to the rule that decides on them.
#include "sim/engine/timed_orders.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "sched/zero_bubble.h"
#include "sim/engine/op_costs.h"

namespace pipeworks::sim {
namespace {

// The slowest hand-off between neighbouring stages' devices: the output's (and, backwards, its
// gradient's, the same bytes) transfer with the sender's overhead.
sched::Result<Nanoseconds> slowest_handoff(const sched::Schedule& schedule, const CostModel& costs) {
  Nanoseconds slowest = 0;
  for (int s = 0; s + 1 < schedule.num_stages; ++s) {
    for (const auto& [from, to] : {std::pair{s, s + 1}, std::pair{s + 1, s}}) {
      const Link* link = costs.link(schedule.device_of(from), schedule.device_of(to));
      if (link == nullptr) continue;
      auto time = transfer_ns(*link, costs.stages[static_cast<std::size_t>(s)].output_bytes);
      if (!time) return time.error();
      slowest = std::max(slowest, *time + link->send_overhead_ns);
    }
  }
  return slowest;
}

// Each time divided by `scale` (>= 1), at least 1.
std::int64_t scaled(Nanoseconds ns, double scale) {
  return std::max<std::int64_t>(1, std::llround(static_cast<double>(ns) / scale));
}

}  // namespace

bool decides_on_times(sched::ScheduleKind kind) {
  return kind == sched::ScheduleKind::kZbH2 || kind == sched::ScheduleKind::kZbV;
}

std::vector<std::int64_t> RuleTimes::flat() const {
  std::vector<std::int64_t> values{handoff};
  for (const sched::StageTimes& t : stages) values.insert(values.end(), {t.forward, t.input_grad, t.weight_grad});
  return values;
}

sched::Result<std::optional<RuleTimes>> rule_times(sched::ScheduleKind kind, const sched::Schedule& generated,
                                                   const CostModel& costs) {
  const std::set<int> devices(generated.placement.begin(), generated.placement.end());
  const bool one_per_device = static_cast<int>(devices.size()) == generated.num_stages;
  const bool v = kind == sched::ScheduleKind::kZbV && generated.placement == sched::v_placement(generated.num_stages);
  if (!decides_on_times(kind) || (kind == sched::ScheduleKind::kZbH2 && !one_per_device) ||
      (kind == sched::ScheduleKind::kZbV && !v) || costs.stages.size() != generated.placement.size()) {
    return std::optional<RuleTimes>{};
  }
  auto handoff = slowest_handoff(generated, costs);
  if (!handoff) return handoff.error();
  Nanoseconds longest = *handoff;
  for (const StageCost& c : costs.stages) {
    longest = std::max({longest, c.forward_ns, c.backward_input_ns, c.backward_weight_ns});
  }
  const double scale = std::max(1.0, static_cast<double>(longest) / static_cast<double>(sched::kMaxStageTime));
  RuleTimes times;
  for (const StageCost& c : costs.stages) {
    times.stages.push_back(
        {scaled(c.forward_ns, scale), scaled(c.backward_input_ns, scale), scaled(c.backward_weight_ns, scale)});
  }
  times.handoff = std::llround(static_cast<double>(*handoff) / scale);
  return std::optional<RuleTimes>{std::move(times)};
}

sched::Result<sched::Schedule> timed_schedule(sched::ScheduleKind kind, const sched::Schedule& generated,
                                              const RuleTimes& times, std::int64_t search_wake_ups) {
  const sched::ScheduleShape shape{generated.num_stages, generated.num_microbatches, generated.placement};
  return kind == sched::ScheduleKind::kZbV ? sched::zb_v_timed(shape, times.stages, times.handoff, search_wake_ups)
                                           : sched::zb_h2_timed(shape, times.stages, times.handoff, search_wake_ups);
}

sched::Result<sched::Schedule> timed_schedule(sched::ScheduleKind kind, const sched::Schedule& generated,
                                              const CostModel& costs, std::int64_t search_wake_ups) {
  auto times = rule_times(kind, generated, costs);
  if (!times) return times.error();
  if (!*times) return generated;
  return timed_schedule(kind, generated, **times, search_wake_ups);
}

}  // namespace pipeworks::sim
