// Flat stage x kind x micro-batch table of action locations (the kinds with a micro-batch).
#include "sched/action_index.h"

#include <fmt/format.h>

#include "sched/limits.h"

namespace pipeworks::sched {

Result<ActionIndex> ActionIndex::build(const Schedule& schedule) {
  if (schedule.num_stages < 0 || schedule.num_microbatches < 0) {
    return Error{"schedule has a negative number of stages or micro-batches"};
  }
  const std::int64_t cells = std::int64_t{schedule.num_stages} * schedule.num_microbatches;
  if (cells > kMaxScheduleCells) {
    return Error{fmt::format("schedule too large to index: {} stages x {} micro-batches exceeds {} cells",
                             schedule.num_stages, schedule.num_microbatches, kMaxScheduleCells)};
  }
  ActionIndex index;
  index.num_stages_ = schedule.num_stages;
  index.num_microbatches_ = schedule.num_microbatches;
  const auto size = static_cast<std::size_t>(cells) * kNumMicrobatchKinds;
  index.first_.assign(size, Location{});
  index.count_.assign(size, 0);
  for (int d = 0; d < schedule.num_devices(); ++d) {
    const Program& program = schedule.programs[static_cast<std::size_t>(d)];
    for (std::size_t p = 0; p < program.size(); ++p) {
      const Action& a = program[p];
      if (!index.in_range(a) || is_stage_level(a.kind)) continue;
      const std::size_t s = index.slot(a);
      if (index.count_[s] == 0) index.first_[s] = Location{d, static_cast<int>(p)};
      if (index.count_[s] < UINT16_MAX) ++index.count_[s];
    }
  }
  return index;
}

bool ActionIndex::in_range(const Action& a) const {
  if (a.stage < 0 || a.stage >= num_stages_ || kind_index(a.kind) < 0 || kind_index(a.kind) >= kNumActionKinds) {
    return false;
  }
  if (is_stage_level(a.kind)) return a.microbatch == 0;
  return a.microbatch >= 0 && a.microbatch < num_microbatches_;
}

std::size_t ActionIndex::slot(const Action& a) const {
  return (static_cast<std::size_t>(a.stage) * kNumMicrobatchKinds + static_cast<std::size_t>(kind_index(a.kind))) *
             static_cast<std::size_t>(num_microbatches_) +
         static_cast<std::size_t>(a.microbatch);
}

std::optional<Location> ActionIndex::find(const Action& a) const {
  if (!in_range(a) || is_stage_level(a.kind)) return std::nullopt;
  const std::size_t s = slot(a);
  if (count_[s] == 0) return std::nullopt;
  return first_[s];
}

int ActionIndex::count(const Action& a) const {
  return in_range(a) && !is_stage_level(a.kind) ? count_[slot(a)] : 0;
}

}  // namespace pipeworks::sched
