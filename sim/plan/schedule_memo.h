// Schedules remembered by what they depend on, for a sweep whose configurations build a few
// hundred schedules thousands of times: the generated order (kind, stages, micro-batches, virtual
// stages) is the same for recompute on and off, each sharding and each tensor-parallel count with
// the same micro-batch count, and the lowered one (with recompute and the data-parallel actions)
// for each sharding and tensor-parallel count. A kind whose order is timed on the costs (zb-h2,
// zb-v) adds the values its rule decided on to the key: the shardings of one layout share them.
// Safe to share between threads: a thread that asks for a key another is building waits for it;
// what it hands out is never changed. It holds at most max_actions actions of orders that do not
// depend on the costs (kMaxRememberedActions unless told) and builds the rest without remembering
// them; timed ones, many and rarely asked for again once the sweep has moved on, it keeps up to
// max_timed_actions, dropping the oldest first.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "sched/generators.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/plan/data_parallel.h"

namespace pipeworks::sim {

// About 12 bytes each: under 200 MB. A plan of GPT-3 175B on 1024 GPUs holds about 6 million.
inline constexpr std::int64_t kMaxRememberedActions = 16'000'000;
// The sweep asks for a timed order again only within its group (the shardings of one layout, which
// one thread evaluates in turn; sweep.cc): a few schedules' worth is enough.
inline constexpr std::int64_t kMaxRememberedTimedActions = 4'000'000;

class ScheduleMemo {
 public:
  using Shared = std::shared_ptr<const sched::Schedule>;

  explicit ScheduleMemo(std::int64_t max_actions = kMaxRememberedActions,
                        std::int64_t max_timed_actions = kMaxRememberedTimedActions)
      : max_actions_(max_actions), max_timed_actions_(max_timed_actions) {}

  // sched::generate's schedule.
  sched::Result<Shared> generated(sched::ScheduleKind kind, int num_stages, int num_microbatches, int virtual_stages);

  // What `time` builds: the order of (kind, stages, micro-batches, virtual stages) its rule gives
  // on `decided_on` (sim::RuleTimes::flat and the search budget), before recompute and lowering.
  sched::Result<Shared> timed(sched::ScheduleKind kind, int num_stages, int num_microbatches, int virtual_stages,
                              std::vector<std::int64_t> decided_on,
                              const std::function<sched::Result<sched::Schedule>()>& time);

  // What `lower` builds for the schedule of (kind, stages, micro-batches, virtual stages) with
  // recompute or not and `actions` added, its order timed on `decided_on` (empty where the kind's
  // order does not depend on the costs; sim::RuleTimes::flat and the search budget otherwise);
  // the caller's `lower` must depend on nothing else.
  sched::Result<Shared> lowered(sched::ScheduleKind kind, int num_stages, int num_microbatches, int virtual_stages,
                                bool recompute, DataParallelActions actions, std::vector<std::int64_t> decided_on,
                                const std::function<sched::Result<sched::Schedule>()>& lower);

 private:
  enum class Form : std::uint8_t { kGenerated, kTimed, kLowered, kLoweredRecomputed };
  using Key = std::tuple<sched::ScheduleKind, int, int, int, Form, DataParallelActions, std::vector<std::int64_t>>;
  sched::Result<Shared> remembered(Key key, const std::function<sched::Result<sched::Schedule>()>& make);
  // Under mutex_: keeps what `key` built within the bounds, else drops its entry.
  void keep_or_drop(const Key& key, const sched::Result<Shared>& built);
  void keep_timed(const Key& key, std::int64_t actions);  // under mutex_

  std::mutex mutex_;
  std::map<Key, std::shared_future<sched::Result<Shared>>> schedules_;
  std::deque<std::pair<Key, std::int64_t>> timed_;  // timed keys and their actions, oldest first
  std::int64_t max_actions_;
  std::int64_t max_timed_actions_;
  std::int64_t held_actions_ = 0;
  std::int64_t held_timed_actions_ = 0;
};

}  // namespace pipeworks::sim
