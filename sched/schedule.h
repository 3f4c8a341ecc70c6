// The schedule IR: K stages, M micro-batches, an explicit placement stage -> device, and one
// ordered program of actions per device. Bubbles are not in the IR; simulators find them.
#pragma once

#include <string>
#include <vector>

#include "sched/action.h"
#include "sched/composite.h"

namespace pipeworks::sched {

using Program = std::vector<Action>;

struct Schedule {
  int num_stages = 0;
  int num_microbatches = 0;
  // placement[stage] = device running that stage. Several stages may share a device.
  std::vector<int> placement;
  // programs[device] = the actions that device executes, in order.
  std::vector<Program> programs;
  // Pairs of adjacent actions that the file wrote as one composite `(0F3;3B1)OVERLAP_F_B`
  // (composite.h), in (device, position) order, disjoint. Running a schedule ignores them.
  std::vector<Composite> composites;

  int num_devices() const { return static_cast<int>(programs.size()); }
  int device_of(int stage) const { return placement.at(static_cast<std::size_t>(stage)); }
  // True when SEND/RECV actions are present (the schedule went through lower_comm).
  bool has_comm() const;
  // True when any R action is present.
  bool has_recompute() const;
  // True when any UNSHARD, RESHARD or REDUCE_GRAD action is present.
  bool has_stage_level() const;
  // Total number of actions over all programs (a composite counts as its two sub-actions).
  std::size_t num_actions() const;

  friend bool operator==(const Schedule&, const Schedule&) = default;
};

// What a generator needs: K, M and where each stage lives.
struct ScheduleShape {
  int num_stages = 1;
  int num_microbatches = 1;
  // Empty means stage i on device i. Otherwise one device index per stage, devices 0..D-1 all used.
  std::vector<int> placement;
};

// Stage i on device i.
std::vector<int> identity_placement(int num_stages);

// Per stage, the most micro-batches whose activations it holds at once in this schedule: an F
// takes one, the action that ends its backward (B, or W after an I) gives it back, in each
// device's program order. For GPipe and 1F1B this is sched::in_flight_microbatches; for a
// schedule read from a file it is what the file says. Out-of-range stages are ignored.
std::vector<int> peak_in_flight(const Schedule& schedule);

// Checks K >= 1, M >= 1, and that the placement names every device 0..D-1 with one entry per
// stage; returns the resolved placement.
Result<std::vector<int>> resolve_placement(const ScheduleShape& shape);

}  // namespace pipeworks::sched
