// Builds the simulator's op table from a (Schedule, CostModel) pair: the shape checks, the table's
// frame (programs, static memory, links, compute slots) and the two passes that fill it (pass 1 in
// op_index.h, pass 2 in op_compiler.h), then the composites of overlapped pairs.
#include "sim/engine/op_table.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include <fmt/format.h>

#include "sched/limits.h"
#include "sched/placement.h"
#include "sim/engine/op_compiler.h"
#include "sim/engine/op_costs.h"
#include "sim/engine/op_index.h"
#include "sim/engine/overlapped_pairs.h"

namespace pipeworks::sim {
namespace {

using sched::Error;

sched::Status check_shape(const sched::Schedule& schedule, const CostModel& model) {
  if (static_cast<std::size_t>(schedule.num_stages) != model.stages.size()) {
    return Error{fmt::format("the schedule has {} stages but the cost model has {}", schedule.num_stages,
                             model.stages.size())};
  }
  if (auto placed = sched::check_placement(schedule); !placed) return placed.error();
  if (schedule.num_devices() > model.num_devices) {
    return Error{fmt::format("the schedule uses {} devices but the cost model has {}", schedule.num_devices(),
                             model.num_devices)};
  }
  if (schedule.num_actions() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    return Error{fmt::format("the schedule has {} actions, more than the simulator handles", schedule.num_actions())};
  }
  // The same bounds as sched::ActionIndex, with its messages.
  if (schedule.num_microbatches < 0) return Error{"schedule has a negative number of stages or micro-batches"};
  if (std::int64_t{schedule.num_stages} * schedule.num_microbatches > sched::kMaxScheduleCells) {
    return Error{fmt::format("schedule too large to index: {} stages x {} micro-batches exceeds {} cells",
                             schedule.num_stages, schedule.num_microbatches, sched::kMaxScheduleCells)};
  }
  return sched::Ok{};
}

}  // namespace

std::int32_t OpTable::dependency(std::size_t op, int j) const {
  const Op& o = ops[op];
  if (sched::is_comm(kind(op))) return j == 0 ? o.dep : -1;
  if (o.dep < 0) return -1;
  return j == 0 ? o.dep : o.other;
}

std::vector<std::int64_t> OpTable::ops_per_class() const {
  std::vector<std::int64_t> count(classes.size(), 0);
  for (const Op& op : ops) ++count[static_cast<std::size_t>(op.op_class)];
  return count;
}

std::int32_t OpTable::peer(std::size_t op) const { return sched::is_comm(kind(op)) ? ops[op].other : -1; }

namespace {

// The compute slots of the model's groups, kept only where a group has more devices than slots.
void limit_compute_slots(const CostModel& model, std::size_t num_devices, OpTable& table) {
  if (model.compute_slots <= 0) return;
  std::map<int, std::int32_t> number;  // contention group -> slot group
  std::vector<std::int32_t> members;
  for (std::size_t d = 0; d < num_devices; ++d) {
    const int group = model.contention_group.empty() ? 0 : model.contention_group[d];
    const auto [it, added] = number.emplace(group, static_cast<std::int32_t>(number.size()));
    if (added) members.push_back(0);
    ++members[static_cast<std::size_t>(it->second)];
    table.slot_group.push_back(it->second);
  }
  const auto fullest = std::max_element(members.begin(), members.end());
  if (fullest == members.end() || *fullest <= model.compute_slots) {
    table.slot_group.clear();
    return;
  }
  table.compute_slots = model.compute_slots;
  table.compute_slice_ns = model.compute_slice_ns;
  table.slot_groups = static_cast<std::int32_t>(number.size());
}

}  // namespace

sched::Result<OpTable> build_op_table(const sched::Schedule& schedule, const CostModel& model) {
  if (auto st = check_cost_model(model); !st) return st.error();
  if (auto st = check_shape(schedule, model); !st) return st.error();
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  OpTable table;
  table.device_begin.resize(num_devices + 1, 0);
  for (std::size_t d = 0; d < num_devices; ++d) {
    table.device_begin[d + 1] = table.device_begin[d] + static_cast<std::int32_t>(schedule.programs[d].size());
  }
  const detail::Located located = detail::locate_actions(schedule, table.device_begin);
  table.ops.reserve(schedule.num_actions());
  table.static_memory = static_memory(schedule, model);
  table.link_shared.assign(model.links.size(), 0);
  table.overlap_grad_reduce = model.overlap_grad_reduce;
  table.idle_slowdown = model.idle_slowdown;
  table.idle_slowdown_after_ns = model.idle_slowdown_after_ns;
  table.reduce_grad_buckets.reserve(model.stages.size());
  for (const StageCost& c : model.stages) table.reduce_grad_buckets.push_back(c.reduce_grad_buckets);
  limit_compute_slots(model, num_devices, table);
  if (std::string error = detail::compile_ops(schedule, model, located, table); !error.empty()) return Error{error};
  overlap_composites(schedule, model, table);
  return table;
}

}  // namespace pipeworks::sim
