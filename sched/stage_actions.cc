// The rules of the stage-level actions, one device program at a time (see stage_actions.h).
#include "sched/stage_actions.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace pipeworks::sched {
namespace {

// What one stage's actions on the device being scanned have done so far.
struct StageState {
  bool sharded = false;            // the stage has an UNSHARD or RESHARD on this device
  std::optional<int> gathered_at;  // position of the UNSHARD whose parameters are gathered now
  std::optional<int> freed_at;     // position of the latest RESHARD
  bool computed = false;           // a compute ran since gathered_at
  std::optional<int> outside;      // the first compute outside a pair
  int outside_count = 0;
  std::optional<int> reduce_at;    // the first REDUCE_GRAD
  std::optional<int> last_gradient;  // the latest B or W
};

class DeviceScan {
 public:
  // `slot_of` has one entry per stage, -1 each; run() leaves it so.
  DeviceScan(const Schedule& schedule, int device, std::vector<int>& slot_of, std::vector<Diagnostic>& out)
      : s_(schedule), device_(device), program_(schedule.programs[static_cast<std::size_t>(device)]),
        slot_of_(slot_of), out_(out) {}

  void run() {
    for (const Action& a : program_) {
      if (on_device(a) && (a.kind == ActionKind::kUnshard || a.kind == ActionKind::kReshard)) state(a.stage).sharded = true;
    }
    for (int p = 0; p < static_cast<int>(program_.size()); ++p) {
      const Action& a = program_[static_cast<std::size_t>(p)];
      if (!on_device(a)) continue;
      StageState& st = state(a.stage);
      if (a.kind == ActionKind::kUnshard) unshard(st, p);
      if (a.kind == ActionKind::kReshard) reshard(st, p);
      if (a.kind == ActionKind::kReduceGrad) reduce(st, p);
      if (is_compute(a.kind)) compute(st, p);
    }
    for (const auto& [stage, st] : stages_) {
      finish(stage, st);
      slot_of_[static_cast<std::size_t>(stage)] = -1;
    }
  }

 private:
  // Whether `a` is one of the scanned device's stages: an action elsewhere is a placement
  // diagnostic of its own, and a broken placement leaves nothing to scan.
  bool on_device(const Action& a) const {
    return a.stage >= 0 && a.stage < s_.num_stages && s_.placement.size() == static_cast<std::size_t>(s_.num_stages) &&
           s_.placement[static_cast<std::size_t>(a.stage)] == device_;
  }
  StageState& state(int stage) {
    int& slot = slot_of_[static_cast<std::size_t>(stage)];
    if (slot < 0) {
      slot = static_cast<int>(stages_.size());
      stages_.emplace_back(stage, StageState{});
    }
    return stages_[static_cast<std::size_t>(slot)].second;
  }
  const Action& at(int p) const { return program_[static_cast<std::size_t>(p)]; }
  void add(DiagnosticKind kind, int p, std::string message, std::vector<Location> related = {}) {
    out_.push_back(Diagnostic{kind, device_, p, at(p).stage, std::move(message), std::move(related)});
  }
  Location here(int p) const { return Location{device_, p}; }

  void unshard(StageState& st, int p) {
    if (st.gathered_at) {
      add(DiagnosticKind::kShardOrder, p,
          fmt::format("{} gathers stage {}'s parameters again: {} at position {} gathered them and no RESHARD freed them",
                      to_string(at(p)), at(p).stage, to_string(at(*st.gathered_at)), *st.gathered_at),
          {here(*st.gathered_at)});
      return;
    }
    st.gathered_at = p;
    st.computed = false;
  }

  void reshard(StageState& st, int p) {
    if (!st.gathered_at) {
      add(DiagnosticKind::kShardOrder, p,
          st.freed_at ? fmt::format("{} frees stage {}'s parameters, which {} at position {} freed already",
                                    to_string(at(p)), at(p).stage, to_string(at(*st.freed_at)), *st.freed_at)
                      : fmt::format("{} frees stage {}'s parameters, which no UNSHARD gathered", to_string(at(p)),
                                    at(p).stage),
          st.freed_at ? std::vector<Location>{here(*st.freed_at)} : std::vector<Location>{});
      return;
    }
    if (!st.computed) {
      add(DiagnosticKind::kShardOrder, p,
          fmt::format("{} frees stage {}'s parameters before any compute of the stage used them (gathered by {} at "
                      "position {})",
                      to_string(at(p)), at(p).stage, to_string(at(*st.gathered_at)), *st.gathered_at),
          {here(*st.gathered_at)});
    }
    st.gathered_at.reset();
    st.freed_at = p;
  }

  void reduce(StageState& st, int p) {
    if (st.reduce_at) {
      add(DiagnosticKind::kDuplicate, p,
          fmt::format("{} appears again (first at device {} position {})", to_string(at(p)), device_, *st.reduce_at),
          {here(*st.reduce_at)});
      return;
    }
    st.reduce_at = p;
  }

  void compute(StageState& st, int p) {
    if (is_weight_gradient(at(p).kind)) st.last_gradient = p;
    if (st.gathered_at) st.computed = true;
    if (!st.sharded || st.gathered_at) return;
    if (st.outside_count++ == 0) st.outside = p;
  }

  // What can only be told at the end of the program: a pair left open, computes outside the
  // pairs, a REDUCE_GRAD before a later gradient.
  void finish(int stage, const StageState& st) {
    if (st.gathered_at) {
      add(DiagnosticKind::kShardOrder, *st.gathered_at,
          fmt::format("{} is never followed by a {}RESHARD: stage {}'s parameters stay gathered", to_string(at(*st.gathered_at)),
                      stage, stage));
    }
    if (st.outside) {
      add(DiagnosticKind::kShardedCompute, *st.outside,
          fmt::format("{} runs while stage {}'s parameters are sharded (outside every {}UNSHARD..{}RESHARD pair; {} "
                      "such action{} on device {})",
                      to_string(at(*st.outside)), stage, stage, stage, st.outside_count,
                      st.outside_count == 1 ? "" : "s", device_));
    }
    if (st.reduce_at && st.last_gradient && *st.last_gradient > *st.reduce_at) {
      add(DiagnosticKind::kReduceGradOrder, *st.reduce_at,
          fmt::format("{} reduces stage {}'s gradients before {} adds to them", to_string(at(*st.reduce_at)), stage,
                      to_string(at(*st.last_gradient))),
          {here(*st.last_gradient)});
    }
  }

  const Schedule& s_;
  int device_;
  const Program& program_;
  std::vector<int>& slot_of_;  // per stage: its index in stages_, -1 when not met yet
  std::vector<Diagnostic>& out_;
  std::vector<std::pair<int, StageState>> stages_;  // the stages met on this device, in order of first action
};

}  // namespace

void check_stage_actions(const Schedule& schedule, std::vector<Diagnostic>& out) {
  std::vector<int> slot_of(static_cast<std::size_t>(std::max(schedule.num_stages, 0)), -1);
  for (int d = 0; d < schedule.num_devices(); ++d) DeviceScan(schedule, d, slot_of, out).run();
}

}  // namespace pipeworks::sched
