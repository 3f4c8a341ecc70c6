// Finds where an action sits in a schedule (device, position) in O(1): a flat table over
// stage x kind x micro-batch. Shared by validation, the simulator and the executor. Stage-level
// actions (UNSHARD, RESHARD, REDUCE_GRAD) are in range when their stage is (and their
// micro-batch 0) but not in the table: no action depends on them, and a stage may UNSHARD and
// RESHARD several times (sched/stage_actions.h checks them).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sched/schedule.h"

namespace pipeworks::sched {

struct Location {
  int device = -1;
  int position = -1;  // index into programs[device]
  friend bool operator==(const Location&, const Location&) = default;
};

class ActionIndex {
 public:
  // Indexes every in-range action with a micro-batch; out-of-range ones are skipped (validation
  // reports them). When an action occurs twice, the first occurrence is kept and the count
  // records both.
  static Result<ActionIndex> build(const Schedule& schedule);

  // nullopt for stage-level actions, as for absent ones.
  std::optional<Location> find(const Action& action) const;
  bool contains(const Action& action) const { return find(action).has_value(); }
  // How many times the action occurs in the schedule (0, 1, or more for duplicates); 0 for
  // stage-level actions.
  int count(const Action& action) const;
  bool in_range(const Action& action) const;

 private:
  std::size_t slot(const Action& action) const;

  int num_stages_ = 0;
  int num_microbatches_ = 0;
  std::vector<Location> first_;
  std::vector<std::uint16_t> count_;
};

}  // namespace pipeworks::sched
