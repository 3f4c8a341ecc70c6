// Schedules remembered by what they depend on, for a sweep whose configurations build a few
// hundred schedules thousands of times: the generated order (kind, stages, micro-batches, virtual
// stages) is the same for recompute on and off, each sharding and each tensor-parallel count with
// the same micro-batch count, and the lowered one (with recompute and the data-parallel actions)
// for each sharding and tensor-parallel count where the kind's order does not depend on the
// costs. Safe to share between threads; what it hands out is never changed. It holds at most
// max_actions actions (kMaxRememberedActions unless told) and builds the rest without remembering them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "sched/generators.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/plan/data_parallel.h"

namespace pipeworks::sim {

// About 12 bytes each: under 200 MB. A plan of GPT-3 175B on 1024 GPUs holds about 6 million.
inline constexpr std::int64_t kMaxRememberedActions = 16'000'000;

class ScheduleMemo {
 public:
  using Shared = std::shared_ptr<const sched::Schedule>;

  explicit ScheduleMemo(std::int64_t max_actions = kMaxRememberedActions) : max_actions_(max_actions) {}

  // sched::generate's schedule.
  sched::Result<Shared> generated(sched::ScheduleKind kind, int num_stages, int num_microbatches, int virtual_stages);

  // What `lower` builds for the generated schedule of (kind, stages, micro-batches, virtual
  // stages) with recompute or not and `actions` added; the caller's `lower` must depend on nothing
  // else (a kind whose order is timed on the costs must not come here).
  sched::Result<Shared> lowered(sched::ScheduleKind kind, int num_stages, int num_microbatches, int virtual_stages,
                                bool recompute, DataParallelActions actions,
                                const std::function<sched::Result<sched::Schedule>()>& lower);

 private:
  using Key = std::tuple<sched::ScheduleKind, int, int, int, int, DataParallelActions>;  // recompute: -1 generated
  sched::Result<Shared> remembered(const Key& key, const std::function<sched::Result<sched::Schedule>()>& make);

  std::mutex mutex_;
  std::map<Key, Shared> schedules_;
  std::int64_t max_actions_;
  std::int64_t held_actions_ = 0;
};

}  // namespace pipeworks::sim
