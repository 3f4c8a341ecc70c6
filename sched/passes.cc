// Re-materialization and communication-lowering passes (see passes.h for the pictures).
#include "sched/passes.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/cells.h"
#include "sched/placement.h"
#include "sched/unit_timing.h"

namespace pipeworks::sched {

Result<Schedule> add_recompute(const Schedule& schedule) {
  auto index = ActionIndex::build(schedule);
  if (!index) return index.error();
  const std::vector<std::vector<CellPart>> parts = cell_parts(schedule);
  Schedule out = schedule;
  out.composites.clear();
  for (std::size_t d = 0; d < out.programs.size(); ++d) {
    const Program& program = schedule.programs[d];
    Program lowered;
    lowered.reserve(program.size() * 3 / 2);
    for (std::size_t p = 0; p < program.size(); ++p) {
      // A composite's R goes before the composite, which stays one cell.
      const std::size_t size = cell_size(parts[d][p]);
      for (std::size_t i = p; i < p + size; ++i) {
        const Action& a = program[i];
        const Action recompute{a.stage, ActionKind::kRecompute, a.microbatch};
        if (is_input_backward(a.kind) && !index->contains(recompute)) lowered.push_back(recompute);
      }
      append_cell(program, p, size, static_cast<int>(d), lowered, out.composites);
      p += size - 1;
    }
    out.programs[d] = std::move(lowered);
  }
  return out;
}

namespace {

// An action with the key that orders it inside its device's lowered program.
struct Keyed {
  std::int64_t time;
  int comm_last;  // 0 for SEND/RECV, 1 for compute: at equal time, comm goes first
  std::int64_t order;     // compute: position in program (a composite's: its first); pair: flow_order() below
  std::int64_t tiebreak;  // pair id (the same on both sides of a pair); compute: its place in its composite
  Action action;
  bool starts_composite = false;  // the first sub-action of a composite (not part of the key)
  auto key() const { return std::tie(time, comm_last, order, tiebreak); }
};

// Among pairs whose data is produced at the same step, the one further along its direction of
// flow goes first: forward pairs from the last stages first, backward pairs from the first
// stages first. A middle stage then passes micro-batch m on before it takes m+1 in:
//
//   d1: RECV_F0 F0 SEND_F0 RECV_F1 F1 SEND_F1 ...   (not: RECV_F0 F0 RECV_F1 SEND_F0 ...)
//
// Any order that depends only on the pair keeps both sides consistent (deadlock freedom).
std::int64_t flow_order(ActionKind send_kind, int producer_stage, int num_stages) {
  if (send_kind == ActionKind::kSendF) return num_stages - producer_stage;
  return std::int64_t{num_stages} + 1 + producer_stage;
}

Status check_lowerable(const Schedule& schedule) {
  if (schedule.has_comm()) return Error{"lower_comm: the schedule already has SEND/RECV actions"};
  if (auto placed = check_placement(schedule); !placed) return Error{"lower_comm: " + placed.error().message};
  return Ok{};
}

// Every action on its stage's device; the stages are in range (unit_timing checked them).
Status check_devices(const Schedule& schedule) {
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    for (const Action& a : schedule.programs[d]) {
      const int here = schedule.device_of(a.stage);
      if (here != static_cast<int>(d)) {
        return Error{fmt::format("lower_comm: {} runs on device {} but stage {} is placed on device {}", to_string(a), d,
                                 a.stage, here)};
      }
    }
  }
  return Ok{};
}

// Every program action keyed by its unit-time start; a composite's second sub-action shares its
// first's key but for the tiebreak, so that nothing sorts between them.
std::vector<std::vector<Keyed>> keyed_actions(const Schedule& schedule, const UnitTiming& timing) {
  const std::vector<std::vector<CellPart>> parts = cell_parts(schedule);
  std::vector<std::vector<Keyed>> keyed(schedule.programs.size());
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      const std::size_t first = parts[d][p] == CellPart::kSecond ? p - 1 : p;
      keyed[d].push_back({timing.start[d][first], 1, static_cast<std::int64_t>(first),
                          static_cast<std::int64_t>(p - first), program[p], parts[d][p] == CellPart::kFirst});
    }
  }
  return keyed;
}

// One pair per cross-device edge, keyed where its data is produced.
void add_pairs(const Schedule& schedule, const UnitTiming& timing, std::vector<std::vector<Keyed>>& keyed) {
  std::int64_t next_pair = 0;
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      const Action& a = program[p];
      const std::int64_t produced_at = timing.finish[d][p];
      const int s = a.stage;
      const int here = static_cast<int>(d);
      if (a.kind == ActionKind::kForward && s + 1 < schedule.num_stages && schedule.device_of(s + 1) != here) {
        const auto to = static_cast<std::size_t>(schedule.device_of(s + 1));
        const std::int64_t order = flow_order(ActionKind::kSendF, s, schedule.num_stages);
        keyed[d].push_back({produced_at, 0, order, next_pair, {s, ActionKind::kSendF, a.microbatch}});
        keyed[to].push_back({produced_at, 0, order, next_pair, {s + 1, ActionKind::kRecvF, a.microbatch}});
        ++next_pair;
      }
      if (is_input_backward(a.kind) && s > 0 && schedule.device_of(s - 1) != here) {
        const auto to = static_cast<std::size_t>(schedule.device_of(s - 1));
        const std::int64_t order = flow_order(ActionKind::kSendB, s, schedule.num_stages);
        keyed[d].push_back({produced_at, 0, order, next_pair, {s, ActionKind::kSendB, a.microbatch}});
        keyed[to].push_back({produced_at, 0, order, next_pair, {s - 1, ActionKind::kRecvB, a.microbatch}});
        ++next_pair;
      }
    }
  }
}

// Sorts one device's items by key. They arrive as a few runs already in key order (the device's
// actions in program order, then each producing device's pairs in its program order), so merging
// neighbouring runs costs O(n log r) for r runs where a sort costs O(n log n). Keys are unique on
// a device, so the order is the one any sort gives.
void sort_by_key(std::vector<Keyed>& items) {
  const auto less = [](const Keyed& x, const Keyed& y) { return x.key() < y.key(); };
  std::vector<std::size_t> bounds{0};  // run r is [bounds[r], bounds[r+1])
  for (std::size_t i = 1; i < items.size(); ++i) {
    if (less(items[i], items[i - 1])) bounds.push_back(i);
  }
  bounds.push_back(items.size());
  while (bounds.size() > 2) {
    std::vector<std::size_t> merged{0};
    for (std::size_t r = 0; r + 2 < bounds.size(); r += 2) {
      const auto at = [&](std::size_t b) { return items.begin() + static_cast<std::ptrdiff_t>(bounds[b]); };
      std::inplace_merge(at(r), at(r + 1), at(r + 2), less);
      merged.push_back(bounds[r + 2]);
    }
    if (merged.back() != bounds.back()) merged.push_back(bounds.back());  // an odd run left over
    bounds = std::move(merged);
  }
}

}  // namespace

Result<Schedule> lower_comm(const Schedule& schedule) {
  if (auto lowerable = check_lowerable(schedule); !lowerable) return lowerable.error();
  auto timing = unit_timing(schedule);
  if (!timing) return Error{fmt::format("lower_comm: {}", timing.error().message)};
  if (auto on_devices = check_devices(schedule); !on_devices) return on_devices.error();
  std::vector<std::vector<Keyed>> keyed = keyed_actions(schedule, *timing);
  add_pairs(schedule, *timing, keyed);
  // A pair's key (time, 0, flow order, id) is the same on both of its sides, so sorting every
  // device by it places all pairs in one global order.
  Schedule out = schedule;
  out.composites.clear();
  for (std::size_t d = 0; d < keyed.size(); ++d) {
    auto& items = keyed[d];
    sort_by_key(items);
    Program lowered;
    lowered.reserve(items.size());
    for (const Keyed& k : items) {
      if (k.starts_composite) out.composites.push_back({static_cast<int>(d), static_cast<int>(lowered.size())});
      lowered.push_back(k.action);
    }
    out.programs[d] = std::move(lowered);
  }
  return out;
}

Schedule strip_comm(const Schedule& schedule) {
  const std::vector<std::vector<CellPart>> parts = cell_parts(schedule);
  Schedule out = schedule;
  out.composites.clear();
  for (std::size_t d = 0; d < out.programs.size(); ++d) {
    Program kept;
    for (std::size_t p = 0; p < schedule.programs[d].size(); ++p) {
      const Action& a = schedule.programs[d][p];
      if (is_comm(a.kind)) continue;
      if (parts[d][p] == CellPart::kFirst) out.composites.push_back({static_cast<int>(d), static_cast<int>(kept.size())});
      kept.push_back(a);
    }
    out.programs[d] = std::move(kept);
  }
  return out;
}

}  // namespace pipeworks::sched
