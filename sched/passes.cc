// Re-materialization and communication-lowering passes (see passes.h for the pictures).
#include "sched/passes.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/dependencies.h"
#include "sched/unit_timing.h"

namespace pipeworks::sched {

Result<Schedule> add_recompute(const Schedule& schedule) {
  auto index = ActionIndex::build(schedule);
  if (!index) return index.error();
  Schedule out = schedule;
  for (Program& program : out.programs) {
    Program lowered;
    lowered.reserve(program.size() * 3 / 2);
    for (const Action& a : program) {
      if (is_input_backward(a.kind)) {
        const Action recompute{a.stage, ActionKind::kRecompute, a.microbatch};
        if (!index->contains(recompute)) lowered.push_back(recompute);
      }
      lowered.push_back(a);
    }
    program = std::move(lowered);
  }
  return out;
}

namespace {

// An action with the key that orders it inside its device's lowered program.
struct Keyed {
  std::int64_t time;
  int comm_last;  // 0 for SEND/RECV, 1 for compute: at equal time, comm goes first
  std::int64_t order;     // compute: position in program; pair: flow_order() below
  std::int64_t tiebreak;  // pair id (the same on both sides of a pair)
  Action action;
  auto key() const { return std::tie(time, comm_last, order, tiebreak); }
};

// Among pairs whose data is produced at the same step, the one further along its direction of
// flow goes first: forward pairs from the last stages first, backward pairs from the first
// stages first. A middle stage then passes micro-batch m on before it takes m+1 in:
//
//   d1: RECV_F0 F0 SEND_F0 RECV_F1 F1 SEND_F1 ...   (not: RECV_F0 F0 RECV_F1 SEND_F0 ...)
//
// Any order that depends only on the pair keeps both sides consistent (deadlock freedom).
std::int64_t flow_order(ActionKind send_kind, int producer_stage, int num_stages) {
  if (send_kind == ActionKind::kSendF) return num_stages - producer_stage;
  return std::int64_t{num_stages} + 1 + producer_stage;
}

}  // namespace

Result<Schedule> lower_comm(const Schedule& schedule) {
  if (schedule.has_comm()) return Error{"lower_comm: the schedule already has SEND/RECV actions"};
  if (static_cast<int>(schedule.placement.size()) != schedule.num_stages) {
    return Error{fmt::format("lower_comm: placement names {} stages but the schedule has {}",
                             schedule.placement.size(), schedule.num_stages)};
  }
  for (std::size_t s = 0; s < schedule.placement.size(); ++s) {
    const int d = schedule.placement[s];
    if (d < 0 || d >= schedule.num_devices()) {
      return Error{fmt::format("lower_comm: stage {} is placed on device {}, outside 0..{}", s, d,
                               schedule.num_devices() - 1)};
    }
  }
  auto timing = unit_timing(schedule);
  if (!timing) return Error{fmt::format("lower_comm: {}", timing.error().message)};
  auto index = ActionIndex::build(schedule);
  if (!index) return index.error();

  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  std::vector<std::vector<Keyed>> keyed(num_devices);
  for (std::size_t d = 0; d < num_devices; ++d) {
    const Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      keyed[d].push_back({timing->start[d][p], 1, static_cast<std::int64_t>(p), 0, program[p]});
    }
  }

  // One pair per cross-device edge, produced where its data is produced.
  std::int64_t next_pair = 0;
  for (std::size_t d = 0; d < num_devices; ++d) {
    const Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      const Action& a = program[p];
      const std::int64_t produced_at = timing->start[d][p] + 1;
      const int s = a.stage;
      if (s < 0 || s >= schedule.num_stages) return Error{fmt::format("lower_comm: stage of {} out of range", to_string(a))};
      const int here = schedule.device_of(s);
      if (here != static_cast<int>(d)) {
        return Error{fmt::format("lower_comm: {} runs on device {} but stage {} is placed on device {}", to_string(a), d,
                                 s, here)};
      }
      if (a.kind == ActionKind::kForward && s + 1 < schedule.num_stages && schedule.device_of(s + 1) != here) {
        const auto to = static_cast<std::size_t>(schedule.device_of(s + 1));
        const std::int64_t order = flow_order(ActionKind::kSendF, s, schedule.num_stages);
        keyed[d].push_back({produced_at, 0, order, next_pair, {s, ActionKind::kSendF, a.microbatch}});
        keyed[to].push_back({produced_at, 0, order, next_pair, {s + 1, ActionKind::kRecvF, a.microbatch}});
        ++next_pair;
      }
      if (is_input_backward(a.kind) && s > 0 && schedule.device_of(s - 1) != here) {
        const auto to = static_cast<std::size_t>(schedule.device_of(s - 1));
        const std::int64_t order = flow_order(ActionKind::kSendB, s, schedule.num_stages);
        keyed[d].push_back({produced_at, 0, order, next_pair, {s, ActionKind::kSendB, a.microbatch}});
        keyed[to].push_back({produced_at, 0, order, next_pair, {s - 1, ActionKind::kRecvB, a.microbatch}});
        ++next_pair;
      }
    }
  }
  // A pair's key (time, 0, flow order, id) is the same on both of its sides, so sorting every
  // device by it places all pairs in one global order.
  Schedule out = schedule;
  for (std::size_t d = 0; d < num_devices; ++d) {
    auto& items = keyed[d];
    std::stable_sort(items.begin(), items.end(), [](const Keyed& x, const Keyed& y) { return x.key() < y.key(); });
    Program lowered;
    lowered.reserve(items.size());
    for (const Keyed& k : items) lowered.push_back(k.action);
    out.programs[d] = std::move(lowered);
  }
  return out;
}

Schedule strip_comm(const Schedule& schedule) {
  Schedule out = schedule;
  for (Program& program : out.programs) {
    std::erase_if(program, [](const Action& a) { return is_comm(a.kind); });
  }
  return out;
}

}  // namespace pipeworks::sched
