// GPipe and 1F1B stage orders, and their merge into per-device programs.
#include "sched/generators.h"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/action_index.h"
#include "sched/dependencies.h"
#include "sched/interleaved_zero_bubble.h"
#include "sched/virtual_stages.h"
#include "sched/zero_bubble.h"

namespace pipeworks::sched {
namespace {

Program gpipe_stage_order(int num_microbatches, int stage) {
  Program order;
  order.reserve(static_cast<std::size_t>(2 * num_microbatches));
  for (int m = 0; m < num_microbatches; ++m) order.push_back({stage, ActionKind::kForward, m});
  for (int m = 0; m < num_microbatches; ++m) order.push_back({stage, ActionKind::kBackward, m});
  return order;
}

Program one_f_one_b_stage_order(int num_stages, int num_microbatches, int stage) {
  Program order;
  order.reserve(static_cast<std::size_t>(2 * num_microbatches));
  const int warmup = std::min(num_stages - 1 - stage, num_microbatches);
  for (int m = 0; m < warmup; ++m) order.push_back({stage, ActionKind::kForward, m});
  for (int i = 0; i + warmup < num_microbatches; ++i) {
    order.push_back({stage, ActionKind::kForward, warmup + i});
    order.push_back({stage, ActionKind::kBackward, i});
  }
  for (int m = num_microbatches - warmup; m < num_microbatches; ++m) {
    order.push_back({stage, ActionKind::kBackward, m});
  }
  return order;
}

Result<Schedule> from_stage_orders(const ScheduleShape& shape, Program (*order_of)(int, int, int)) {
  auto placement = resolve_placement(shape);
  if (!placement) return placement.error();
  std::vector<Program> orders;
  orders.reserve(static_cast<std::size_t>(shape.num_stages));
  for (int s = 0; s < shape.num_stages; ++s) orders.push_back(order_of(shape.num_stages, shape.num_microbatches, s));
  return merge_stage_orders(shape.num_stages, shape.num_microbatches, *placement, orders);
}

}  // namespace

constexpr std::array<std::string_view, 9> kKindNames = {"gpipe", "1f1b",       "interleaved-1f1b", "looped-bfs",
                                                        "zb-h1", "zb-h2",      "zb-v",             "dualpipe-v",
                                                        "interleaved-zb"};

std::string_view schedule_kind_name(ScheduleKind kind) { return kKindNames.at(static_cast<std::size_t>(kind)); }

std::vector<std::string_view> schedule_kind_names() { return {kKindNames.begin(), kKindNames.end()}; }

Result<ScheduleKind> parse_schedule_kind(std::string_view name) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == name) return static_cast<ScheduleKind>(i);
  }
  return Error{fmt::format("unknown schedule '{}' (expected {} or {})", name,
                           fmt::join(kKindNames.begin(), kKindNames.end() - 1, ", "), kKindNames.back())};
}

bool has_virtual_stages(ScheduleKind kind) {
  return kind == ScheduleKind::kInterleaved1F1B || kind == ScheduleKind::kLoopedBfs ||
         kind == ScheduleKind::kInterleavedZb || is_v_shaped(kind);
}

bool is_v_shaped(ScheduleKind kind) { return kind == ScheduleKind::kZbV || kind == ScheduleKind::kDualPipeV; }

int stages_on_devices(ScheduleKind kind, int devices, int virtual_stages) {
  if (is_v_shaped(kind)) return 2 * devices;
  return has_virtual_stages(kind) ? virtual_stages * devices : devices;
}

bool splits_backward(ScheduleKind kind) {
  return kind == ScheduleKind::kZbH1 || kind == ScheduleKind::kZbH2 || kind == ScheduleKind::kInterleavedZb ||
         is_v_shaped(kind);
}

Result<Schedule> gpipe(const ScheduleShape& shape) {
  return from_stage_orders(shape, [](int, int m, int s) { return gpipe_stage_order(m, s); });
}

Result<Schedule> one_f_one_b(const ScheduleShape& shape) {
  return from_stage_orders(shape, [](int k, int m, int s) { return one_f_one_b_stage_order(k, m, s); });
}

Result<Schedule> generate(ScheduleKind kind, const ScheduleShape& shape, int virtual_stages) {
  if (is_v_shaped(kind) && virtual_stages != 1 && virtual_stages != 2) {
    return Error{fmt::format("{} places exactly two stages on each device (a V); {} virtual stages cannot be",
                             schedule_kind_name(kind), virtual_stages)};
  }
  if (!has_virtual_stages(kind) && virtual_stages != 1) {
    return Error{fmt::format("{} has one stage per device; virtual stages are for interleaved-1f1b, looped-bfs "
                             "and interleaved-zb (zb-v and dualpipe-v always have two)",
                             schedule_kind_name(kind))};
  }
  switch (kind) {
    case ScheduleKind::kGPipe: return gpipe(shape);
    case ScheduleKind::kOneFOneB: return one_f_one_b(shape);
    case ScheduleKind::kInterleaved1F1B: return interleaved_1f1b(shape, virtual_stages);
    case ScheduleKind::kLoopedBfs: return looped_bfs(shape, virtual_stages);
    case ScheduleKind::kZbH1: return zb_h1(shape);
    case ScheduleKind::kZbH2: return zb_h2(shape);
    case ScheduleKind::kZbV: return zb_v(shape);
    case ScheduleKind::kDualPipeV: return dualpipe_v(shape);
    case ScheduleKind::kInterleavedZb: return interleaved_zero_bubble(shape, virtual_stages);
  }
  return Error{"unknown schedule kind"};
}

std::vector<int> in_flight_microbatches(ScheduleKind kind, int num_stages, int num_microbatches) {
  if (kind == ScheduleKind::kInterleavedZb) kind = ScheduleKind::kZbH1;  // its one-virtual-stage schedule
  if (kind != ScheduleKind::kGPipe && kind != ScheduleKind::kOneFOneB) {
    auto schedule = generate(kind, ScheduleShape{num_stages, num_microbatches, {}});
    if (schedule) return peak_in_flight(*schedule);
  }
  std::vector<int> counts(static_cast<std::size_t>(std::max(num_stages, 0)));
  for (int s = 0; s < num_stages; ++s) {
    counts[static_cast<std::size_t>(s)] =
        kind == ScheduleKind::kGPipe ? num_microbatches : std::min(num_microbatches, num_stages - s);
  }
  return counts;
}

namespace {

// Of a device's stages, the one whose next action can run now (every dependency finished by the
// step `finished_by` asks about), the furthest behind first; -1 when none can.
template <class Finished>
int ready_stage(const std::vector<int>& stages, const std::vector<Program>& stage_orders,
                const std::vector<std::size_t>& next, const ActionIndex& index, int num_stages,
                const Finished& finished_by) {
  int best = -1;
  for (int s : stages) {
    const auto& order = stage_orders[static_cast<std::size_t>(s)];
    const std::size_t pos = next[static_cast<std::size_t>(s)];
    if (pos >= order.size()) continue;
    const Dependencies deps = data_dependencies(order[pos], index, num_stages);
    if (!std::all_of(deps.begin(), deps.end(), finished_by)) continue;
    if (best < 0 || pos < next[static_cast<std::size_t>(best)]) best = s;
  }
  return best;
}

// Interleaves the stage orders of devices that hold several stages by a unit-time list schedule:
// at each step every device runs the next action of one of its stages whose dependencies finished
// (ready_stage), appended to `programs`. done[stage][position] is the step at which that action
// completes. What a device can run at step t + 1 changes only when an action of its stages'
// neighbours (or its own) finished at t, so each step tries just those devices: time proportional
// to the actions, not to devices x steps.
Status unit_time_merge(const Schedule& all, const std::vector<std::vector<int>>& stages_of,
                       std::vector<Program>& programs) {
  const int num_stages = all.num_stages;
  const auto num_devices = stages_of.size();
  auto index = ActionIndex::build(all);
  if (!index) return index.error();
  std::vector<std::vector<std::int64_t>> done(static_cast<std::size_t>(num_stages));
  for (int s = 0; s < num_stages; ++s) {
    done[static_cast<std::size_t>(s)].assign(all.programs[static_cast<std::size_t>(s)].size(),
                                             std::numeric_limits<std::int64_t>::max());
  }
  std::vector<std::size_t> next(static_cast<std::size_t>(num_stages), 0);
  std::size_t remaining = all.num_actions();
  std::vector<int> trying(num_devices);
  for (std::size_t d = 0; d < num_devices; ++d) trying[d] = static_cast<int>(d);
  std::vector<int> woken;
  std::vector<std::int64_t> queued_for(num_devices, -1);
  for (std::int64_t step = 0; remaining > 0; ++step) {
    woken.clear();
    const auto wake_stage = [&](int s) {
      if (s < 0 || s >= num_stages) return;
      const auto d = static_cast<std::size_t>(all.placement[static_cast<std::size_t>(s)]);
      if (queued_for[d] != step + 1) queued_for[d] = step + 1, woken.push_back(static_cast<int>(d));
    };
    const auto finished_now = [&](const Action& a) {
      auto loc = index->find(a);
      if (!loc) return true;  // not in the schedule: nothing to wait for
      return done[static_cast<std::size_t>(loc->device)][static_cast<std::size_t>(loc->position)] <= step;
    };
    for (const int d : trying) {
      const int best =
          ready_stage(stages_of[static_cast<std::size_t>(d)], all.programs, next, *index, num_stages, finished_now);
      if (best < 0) continue;
      const std::size_t pos = next[static_cast<std::size_t>(best)]++;
      done[static_cast<std::size_t>(best)][pos] = step + 1;
      programs[static_cast<std::size_t>(d)].push_back(all.programs[static_cast<std::size_t>(best)][pos]);
      --remaining;
      for (int s = best - 1; s <= best + 1; ++s) wake_stage(s);
    }
    // Nothing ran this step and nothing is in flight: every action finished by `step`, so
    // no later step can make progress either.
    if (woken.empty() && remaining > 0) {
      return Error{fmt::format("stage orders cannot progress: {} actions are blocked", remaining)};
    }
    std::swap(trying, woken);
  }
  return Ok{};
}

}  // namespace

Result<Schedule> merge_stage_orders(int num_stages, int num_microbatches, const std::vector<int>& placement,
                                    const std::vector<Program>& stage_orders) {
  Schedule schedule;
  schedule.num_stages = num_stages;
  schedule.num_microbatches = num_microbatches;
  schedule.placement = placement;
  const int num_devices = placement.empty() ? 0 : *std::max_element(placement.begin(), placement.end()) + 1;
  schedule.programs.assign(static_cast<std::size_t>(num_devices), {});

  std::vector<std::vector<int>> stages_of(static_cast<std::size_t>(num_devices));
  for (int s = 0; s < num_stages; ++s) stages_of[static_cast<std::size_t>(placement[static_cast<std::size_t>(s)])].push_back(s);

  // Fast path: one stage per device keeps each stage order as it is.
  const bool one_per_device = std::all_of(stages_of.begin(), stages_of.end(), [](const auto& v) { return v.size() == 1; });
  if (one_per_device) {
    for (int s = 0; s < num_stages; ++s) {
      schedule.programs[static_cast<std::size_t>(placement[static_cast<std::size_t>(s)])] = stage_orders[static_cast<std::size_t>(s)];
    }
    return schedule;
  }
  Schedule all = schedule;  // every action once, a program per stage, so dependencies resolve against the full set
  all.programs = stage_orders;
  if (Status merged = unit_time_merge(all, stages_of, schedule.programs); !merged) return merged.error();
  return schedule;
}

}  // namespace pipeworks::sched
