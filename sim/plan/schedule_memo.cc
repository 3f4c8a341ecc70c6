// ScheduleMemo: a map under a mutex. Two threads that miss on one key both build it (the same
// schedule); the first to finish is kept. Building outside the lock keeps the threads apart.
#include "sim/plan/schedule_memo.h"

namespace pipeworks::sim {

sched::Result<ScheduleMemo::Shared> ScheduleMemo::generated(sched::ScheduleKind kind, int num_stages,
                                                            int num_microbatches, int virtual_stages) {
  return remembered({kind, num_stages, num_microbatches, virtual_stages, -1, DataParallelActions::kNone}, [&] {
    return sched::generate(kind, {num_stages, num_microbatches, {}}, virtual_stages);
  });
}

sched::Result<ScheduleMemo::Shared> ScheduleMemo::lowered(sched::ScheduleKind kind, int num_stages,
                                                          int num_microbatches, int virtual_stages, bool recompute,
                                                          DataParallelActions actions,
                                                          const std::function<sched::Result<sched::Schedule>()>& lower) {
  return remembered({kind, num_stages, num_microbatches, virtual_stages, recompute ? 1 : 0, actions}, lower);
}

sched::Result<ScheduleMemo::Shared> ScheduleMemo::remembered(
    const Key& key, const std::function<sched::Result<sched::Schedule>()>& make) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (const auto found = schedules_.find(key); found != schedules_.end()) return found->second;
  }
  auto schedule = make();
  if (!schedule) return schedule.error();
  const auto actions = static_cast<std::int64_t>(schedule->num_actions());
  Shared shared = std::make_shared<const sched::Schedule>(std::move(schedule).value());
  const std::lock_guard<std::mutex> lock(mutex_);
  if (const auto found = schedules_.find(key); found != schedules_.end()) return found->second;
  if (held_actions_ + actions > max_actions_) return shared;
  held_actions_ += actions;
  return schedules_.emplace(key, std::move(shared)).first->second;
}

}  // namespace pipeworks::sim
