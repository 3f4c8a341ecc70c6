// Longest compute path of a schedule (critical_path.h): relaxation sweeps in program order, as
// sched/unit_timing.cc does with unit costs.
#include "tests/fuzz/critical_path.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "sched/action_index.h"
#include "sched/dependencies.h"
#include "sched/passes.h"

namespace pipeworks::fuzz {
namespace {

using sched::ActionKind;

std::int64_t base_cost(const sim::StageCost& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: return c.forward_ns;
    case ActionKind::kBackward: return c.backward_ns;
    case ActionKind::kBackwardInput: return c.backward_input_ns;
    case ActionKind::kBackwardWeight: return c.backward_weight_ns;
    case ActionKind::kRecompute: return c.recompute_ns;
    default: return 0;
  }
}

std::int64_t first_cost(const sim::StageCost& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: return c.first_forward_ns;
    case ActionKind::kRecompute: return c.first_recompute_ns;
    case ActionKind::kBackward: return c.first_backward_ns;
    default: return 0;
  }
}

// Per device and position of the compute-only schedule: what the action costs (an F whose
// micro-batch is re-materialized costs the forward without the graph, when given; a stage's first
// action of a kind its first-of-step cost, when given).
std::optional<std::vector<std::vector<std::int64_t>>> durations(const sched::Schedule& compute,
                                                               const sched::ActionIndex& index,
                                                               const sim::CostModel& costs) {
  std::vector<std::vector<std::int64_t>> out(compute.programs.size());
  std::set<std::pair<int, ActionKind>> seen;
  for (std::size_t d = 0; d < compute.programs.size(); ++d) {
    for (const sched::Action& a : compute.programs[d]) {
      if (a.stage < 0 || static_cast<std::size_t>(a.stage) >= costs.stages.size()) return std::nullopt;
      const sim::StageCost& c = costs.stages[static_cast<std::size_t>(a.stage)];
      const bool first = seen.insert({a.stage, a.kind}).second;
      const bool no_graph = a.kind == ActionKind::kForward && c.forward_no_grad_ns > 0 &&
                            index.find(sched::Action{a.stage, ActionKind::kRecompute, a.microbatch}).has_value();
      const std::int64_t usual = no_graph ? c.forward_no_grad_ns : base_cost(c, a.kind);
      const std::int64_t cost = first && first_cost(c, a.kind) > 0 ? first_cost(c, a.kind) : usual;
      // UNSHARD, RESHARD and REDUCE_GRAD are no-ops: no cost and no overhead.
      out[d].push_back(sched::is_stage_level(a.kind) ? 0 : cost + costs.per_action_overhead_ns);
    }
  }
  return out;
}

}  // namespace

std::optional<std::int64_t> critical_path_ns(const sched::Schedule& schedule, const sim::CostModel& costs) {
  const sched::Schedule compute = sched::strip_comm(schedule);
  auto index = sched::ActionIndex::build(compute);
  if (!index) return std::nullopt;
  const auto cost = durations(compute, *index, costs);
  if (!cost) return std::nullopt;
  const auto num_devices = compute.programs.size();
  std::vector<std::vector<std::int64_t>> finish(num_devices);
  for (std::size_t d = 0; d < num_devices; ++d) finish[d].assign(compute.programs[d].size(), -1);
  std::vector<std::size_t> next(num_devices, 0);
  std::vector<std::int64_t> free_at(num_devices, 0);
  std::int64_t longest = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t d = 0; d < num_devices; ++d) {
      for (; next[d] < compute.programs[d].size(); ++next[d]) {
        std::int64_t start = free_at[d];
        bool ready = true;
        const sched::Action& a = compute.programs[d][next[d]];
        for (const sched::Action& dep : sched::data_dependencies(a, *index, compute.num_stages)) {
          const auto at = index->find(dep);
          const auto dd = static_cast<std::size_t>(at ? at->device : 0);
          const std::int64_t f = at ? finish[dd][static_cast<std::size_t>(at->position)] : -1;
          ready = ready && f >= 0;
          start = std::max(start, f);
        }
        if (!ready) break;
        free_at[d] = finish[d][next[d]] = start + (*cost)[d][next[d]];
        longest = std::max(longest, free_at[d]);
        moved = true;
      }
    }
  }
  for (std::size_t d = 0; d < num_devices; ++d) {
    if (next[d] < compute.programs[d].size()) return std::nullopt;
  }
  return longest;
}

}  // namespace pipeworks::fuzz
