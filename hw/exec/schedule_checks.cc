// The executor's preconditions on a schedule (see schedule_checks.h).
#include "hw/exec/schedule_checks.h"

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/placement.h"
#include "sched/unit_timing.h"

namespace pipeworks::hw {
namespace {

using sched::Action;
using sched::ActionKind;

sched::Status need_comm(const sched::ActionIndex& index, const Action& consumer, ActionKind send_kind,
                        int send_stage, ActionKind recv_kind) {
  const Action send{send_stage, send_kind, consumer.microbatch};
  const Action recv{consumer.stage, recv_kind, consumer.microbatch};
  if (index.count(send) != 1 || index.count(recv) != 1) {
    return sched::Error{fmt::format("{} depends on stage {} on another device but the schedule lacks {} or {} "
                                    "exactly once (run lower_comm first)",
                                    to_string(consumer), send_stage, to_string(send), to_string(recv))};
  }
  return sched::Ok{};
}

// F exactly once, and the backward either as one B or split into one I and one W.
sched::Status check_backward_counts(const sched::ActionIndex& index, int s, int mb) {
  const auto count = [&](ActionKind kind) { return index.count({s, kind, mb}); };
  if (count(ActionKind::kForward) != 1) {
    return sched::Error{fmt::format("{}F{} occurs {} times; the executor needs it exactly once", s, mb,
                                    count(ActionKind::kForward))};
  }
  const bool whole = count(ActionKind::kBackward) == 1 && count(ActionKind::kBackwardInput) == 0 &&
                     count(ActionKind::kBackwardWeight) == 0;
  const bool split = count(ActionKind::kBackward) == 0 && count(ActionKind::kBackwardInput) == 1 &&
                     count(ActionKind::kBackwardWeight) == 1;
  if (whole || split) return sched::Ok{};
  return sched::Error{fmt::format("stage {}, micro-batch {}: {} B, {} I and {} W; the executor needs one B, or one I "
                                  "and one W",
                                  s, mb, count(ActionKind::kBackward), count(ActionKind::kBackwardInput),
                                  count(ActionKind::kBackwardWeight))};
}

}  // namespace

sched::Status check_executable(const sched::Schedule& schedule) {
  const int k = schedule.num_stages;
  const int m = schedule.num_microbatches;
  if (k < 1 || m < 1) return sched::Error{fmt::format("schedule has {} stages and {} micro-batches", k, m)};
  if (auto placed = sched::check_placement(schedule); !placed) return placed.error();
  auto index = sched::ActionIndex::build(schedule);
  if (!index) return index.error();
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    for (const Action& a : schedule.programs[d]) {
      if (!index->in_range(a)) return sched::Error{fmt::format("{} is out of range", to_string(a))};
      if (schedule.device_of(a.stage) != static_cast<int>(d)) {
        return sched::Error{fmt::format("{} is in device {}'s program but stage {} is placed on device {}",
                                        to_string(a), d, a.stage, schedule.device_of(a.stage))};
      }
    }
  }
  for (int s = 0; s < k; ++s) {
    for (int mb = 0; mb < m; ++mb) {
      if (auto once = check_backward_counts(*index, s, mb); !once) return once;
      if (index->count({s, ActionKind::kRecompute, mb}) > 1) {
        return sched::Error{fmt::format("{}R{} occurs more than once", s, mb)};
      }
      if (s > 0 && schedule.device_of(s - 1) != schedule.device_of(s)) {
        if (auto st = need_comm(*index, {s, ActionKind::kForward, mb}, ActionKind::kSendF, s - 1, ActionKind::kRecvF);
            !st) {
          return st;
        }
      }
      if (s + 1 < k && schedule.device_of(s + 1) != schedule.device_of(s)) {
        const ActionKind backward =
            index->count({s, ActionKind::kBackward, mb}) == 1 ? ActionKind::kBackward : ActionKind::kBackwardInput;
        if (auto st = need_comm(*index, {s, backward, mb}, ActionKind::kSendB, s + 1, ActionKind::kRecvB);
            !st) {
          return st;
        }
      }
    }
  }
  if (auto timing = sched::unit_timing(schedule); !timing) {
    return sched::Error{fmt::format("the schedule cannot make progress: {}", timing.error().message)};
  }
  return sched::Ok{};
}

}  // namespace pipeworks::hw
