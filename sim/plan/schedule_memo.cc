// ScheduleMemo: a map of futures under a mutex. The first thread to ask for a key builds it
// outside the lock; one that asks meanwhile waits on its future (a sweep's threads evaluate
// neighbouring configurations, which ask for the same schedule at once). The timed keys also sit
// in a queue, oldest first, which says what to drop.
#include "sim/plan/schedule_memo.h"

#include <exception>

namespace pipeworks::sim {

sched::Result<ScheduleMemo::Shared> ScheduleMemo::generated(sched::ScheduleKind kind, int num_stages,
                                                            int num_microbatches, int virtual_stages) {
  return remembered({kind, num_stages, num_microbatches, virtual_stages, Form::kGenerated, DataParallelActions::kNone, {}},
                    [&] { return sched::generate(kind, {num_stages, num_microbatches, {}}, virtual_stages); });
}

sched::Result<ScheduleMemo::Shared> ScheduleMemo::timed(sched::ScheduleKind kind, int num_stages,
                                                        int num_microbatches, int virtual_stages,
                                                        std::vector<std::int64_t> decided_on,
                                                        const std::function<sched::Result<sched::Schedule>()>& time) {
  return remembered(
      {kind, num_stages, num_microbatches, virtual_stages, Form::kTimed, DataParallelActions::kNone, std::move(decided_on)},
      time);
}

sched::Result<ScheduleMemo::Shared> ScheduleMemo::lowered(sched::ScheduleKind kind, int num_stages,
                                                          int num_microbatches, int virtual_stages, bool recompute,
                                                          DataParallelActions actions,
                                                          std::vector<std::int64_t> decided_on,
                                                          const std::function<sched::Result<sched::Schedule>()>& lower) {
  const Form form = recompute ? Form::kLoweredRecomputed : Form::kLowered;
  return remembered({kind, num_stages, num_microbatches, virtual_stages, form, actions, std::move(decided_on)}, lower);
}

sched::Result<ScheduleMemo::Shared> ScheduleMemo::remembered(
    Key key, const std::function<sched::Result<sched::Schedule>()>& make) {
  std::promise<sched::Result<Shared>> promise;
  std::shared_future<sched::Result<Shared>> pending;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto [entry, inserted] = schedules_.try_emplace(key);
    if (inserted) {
      entry->second = promise.get_future().share();
    } else {
      pending = entry->second;
    }
  }
  if (pending.valid()) return pending.get();  // built, or being built by another thread
  sched::Result<Shared> built = sched::Error{""};
  try {
    auto schedule = make();
    built = schedule ? sched::Result<Shared>{std::make_shared<const sched::Schedule>(std::move(schedule).value())}
                     : sched::Result<Shared>{schedule.error()};
  } catch (...) {
    promise.set_exception(std::current_exception());
    const std::lock_guard<std::mutex> lock(mutex_);
    schedules_.erase(key);
    throw;
  }
  promise.set_value(built);
  const std::lock_guard<std::mutex> lock(mutex_);
  keep_or_drop(key, built);
  return built;
}

void ScheduleMemo::keep_or_drop(const Key& key, const sched::Result<Shared>& built) {
  const auto actions = built ? static_cast<std::int64_t>((*built)->num_actions()) : 0;
  const bool timed = !std::get<6>(key).empty();
  if (!built || actions > (timed ? max_timed_actions_ : max_actions_ - held_actions_)) {
    schedules_.erase(key);  // errors are not remembered; past the bound, built again when asked
  } else if (timed) {
    keep_timed(key, actions);
  } else {
    held_actions_ += actions;
  }
}

void ScheduleMemo::keep_timed(const Key& key, std::int64_t actions) {
  while (!timed_.empty() && held_timed_actions_ + actions > max_timed_actions_) {  // the oldest first
    held_timed_actions_ -= timed_.front().second;
    schedules_.erase(timed_.front().first);
    timed_.pop_front();
  }
  timed_.emplace_back(key, actions);
  held_timed_actions_ += actions;
}

}  // namespace pipeworks::sim
