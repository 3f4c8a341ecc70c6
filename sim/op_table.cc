// Compiles a (Schedule, CostModel) pair into flat Op records and rejects every structural error.
#include "sim/op_table.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/dependencies.h"

namespace pipeworks::sim {
namespace {

using sched::Action;
using sched::ActionKind;
using sched::Error;

__extension__ typedef __int128 Int128;  // NOLINT: exact ceil(bytes * 1e9 / bandwidth)

constexpr std::int64_t kMaxTime = std::numeric_limits<std::int64_t>::max() / 4;

Nanoseconds compute_cost(const StageCost& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: return c.forward_ns;
    case ActionKind::kBackward: return c.backward_ns;
    case ActionKind::kBackwardInput: return c.backward_input_ns;
    case ActionKind::kBackwardWeight: return c.backward_weight_ns;
    case ActionKind::kRecompute: return c.recompute_ns;
    default: return 0;
  }
}

// Bytes a SEND/RECV carries: stage s's output forwards, the same-sized gradient backwards.
Bytes transfer_bytes(const Action& a, const CostModel& model) {
  const bool forward = a.kind == ActionKind::kSendF || a.kind == ActionKind::kRecvF;
  const bool at_sender = sched::is_send(a.kind);
  // SEND_F(s)/RECV_F(s+1) carry stage s's output; SEND_B(s)/RECV_B(s-1) carry stage s-1's.
  int producer_stage = a.stage;
  if (forward && !at_sender) producer_stage = a.stage - 1;
  if (!forward && at_sender) producer_stage = a.stage - 1;
  return model.stages[static_cast<std::size_t>(producer_stage)].output_bytes;
}

std::int32_t op_id(const OpTable& table, const sched::Location& loc) {
  return table.device_begin[static_cast<std::size_t>(loc.device)] + loc.position;
}

sched::Status check_shape(const sched::Schedule& schedule, const CostModel& model) {
  if (static_cast<std::size_t>(schedule.num_stages) != model.stages.size()) {
    return Error{fmt::format("the schedule has {} stages but the cost model has {}", schedule.num_stages,
                             model.stages.size())};
  }
  if (static_cast<int>(schedule.placement.size()) != schedule.num_stages) {
    return Error{fmt::format("the schedule's placement names {} stages but it has {}", schedule.placement.size(),
                             schedule.num_stages)};
  }
  if (schedule.num_devices() > model.num_devices) {
    return Error{fmt::format("the schedule uses {} devices but the cost model has {}", schedule.num_devices(),
                             model.num_devices)};
  }
  for (std::size_t s = 0; s < schedule.placement.size(); ++s) {
    const int d = schedule.placement[s];
    if (d < 0 || d >= schedule.num_devices()) {
      return Error{fmt::format("stage {} is placed on device {}, outside 0..{}", s, d, schedule.num_devices() - 1)};
    }
  }
  if (schedule.num_actions() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    return Error{fmt::format("the schedule has {} actions, more than the simulator handles", schedule.num_actions())};
  }
  return sched::Ok{};
}

}  // namespace

sched::Result<Nanoseconds> transfer_ns(const Link& link, Bytes bytes) {
  if (bytes < 0 || link.latency_ns < 0 || !(link.bandwidth_bytes_per_s > 0) ||
      !std::isfinite(link.bandwidth_bytes_per_s)) {
    return Error{"transfer: negative size or latency, or a bandwidth that is not finite and positive"};
  }
  const double bw = link.bandwidth_bytes_per_s;
  Nanoseconds wire = 0;
  if (bw == std::floor(bw) && bw < 9.0e18) {
    const auto den = static_cast<Int128>(bw);
    const Int128 num = static_cast<Int128>(bytes) * 1'000'000'000;
    const Int128 q = (num + den - 1) / den;
    if (q > kMaxTime) return Error{fmt::format("transfer of {} bytes at {} B/s takes too long", bytes, bw)};
    wire = static_cast<Nanoseconds>(q);
  } else {
    const double ns = std::ceil(static_cast<double>(bytes) * 1e9 / bw);
    if (!(ns <= static_cast<double>(kMaxTime))) {
      return Error{fmt::format("transfer of {} bytes at {} B/s takes too long", bytes, bw)};
    }
    wire = static_cast<Nanoseconds>(ns);
  }
  if (wire > kMaxTime - link.latency_ns) return Error{"transfer time overflows"};
  return link.latency_ns + wire;
}

sched::Result<OpTable> build_op_table(const sched::Schedule& schedule, const CostModel& model) {
  if (auto st = check_cost_model(model); !st) return st.error();
  if (auto st = check_shape(schedule, model); !st) return st.error();
  auto index = sched::ActionIndex::build(schedule);
  if (!index) return index.error();

  OpTable table;
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  table.device_begin.resize(num_devices + 1, 0);
  for (std::size_t d = 0; d < num_devices; ++d) {
    table.device_begin[d + 1] = table.device_begin[d] + static_cast<std::int32_t>(schedule.programs[d].size());
  }
  table.ops.resize(schedule.num_actions());
  table.static_memory = static_memory(schedule, model);
  const int k = schedule.num_stages;
  std::vector<Nanoseconds> transfer_cache(static_cast<std::size_t>(k) * sched::kNumActionKinds, -1);
  std::int64_t total_ns = 0;
  std::int64_t total_bytes = 0;
  for (const StaticMemory& m : table.static_memory) total_bytes += m.total_bytes();

  for (std::size_t d = 0; d < num_devices; ++d) {
    const sched::Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      const Action& a = program[p];
      const auto where = [&] { return fmt::format("device {} position {} ({})", d, p, sched::to_string(a)); };
      if (!index->in_range(a)) {
        return Error{fmt::format("{}: out of range ({} stages, {} micro-batches)", where(), k,
                                 schedule.num_microbatches)};
      }
      if (index->count(a) > 1) return Error{fmt::format("{}: the action occurs {} times", where(), index->count(a))};
      if (schedule.device_of(a.stage) != static_cast<int>(d)) {
        return Error{fmt::format("{}: stage {} is placed on device {}", where(), a.stage, schedule.device_of(a.stage))};
      }
      Op& op = table.ops[static_cast<std::size_t>(table.device_begin[d]) + p];
      op.device = static_cast<std::int32_t>(d);
      op.kind = a.kind;
      if (sched::is_comm(a.kind)) {
        const auto peer = sched::comm_peer(a, k);
        const auto peer_loc = peer ? index->find(*peer) : std::nullopt;
        if (!peer_loc) {
          return Error{fmt::format("{}: its partner {} is not in the schedule", where(),
                                   peer ? sched::to_string(*peer) : std::string{"(outside the stage range)"})};
        }
        op.peer = op_id(table, *peer_loc);
        const int src = sched::is_send(a.kind) ? static_cast<int>(d) : peer_loc->device;
        const int dst = sched::is_send(a.kind) ? peer_loc->device : static_cast<int>(d);
        const Link* link = model.link(src, dst);
        if (link == nullptr) {
          return Error{fmt::format("{}: the cost model has no link from device {} to device {}", where(), src, dst)};
        }
        op.link = model.link_of[static_cast<std::size_t>(src * model.num_devices + dst)];
        // Every micro-batch of a (stage, kind) crosses the same link with the same bytes.
        Nanoseconds& cached = transfer_cache[static_cast<std::size_t>(a.stage) * sched::kNumActionKinds +
                                             static_cast<std::size_t>(sched::kind_index(a.kind))];
        if (cached < 0) {
          auto ns = transfer_ns(*link, transfer_bytes(a, model));
          if (!ns) return Error{fmt::format("{}: {}", where(), ns.error().message)};
          cached = *ns;
        }
        op.duration_ns = cached;
        if (sched::is_send(a.kind)) ++table.num_transfers;
      } else {
        const StageCost& c = model.stages[static_cast<std::size_t>(a.stage)];
        op.duration_ns = compute_cost(c, a.kind) + model.per_action_overhead_ns;
        op.memory_delta_bytes = activation_delta_bytes(a, *index, model);
      }
      if (!sched::is_recv(a.kind)) {
        int n = 0;
        for (const Action& dep : sched::data_dependencies(a, *index, k)) {
          const auto loc = index->find(dep);
          if (!loc) {
            return Error{fmt::format("{}: depends on {}, which the schedule does not contain", where(),
                                     sched::to_string(dep))};
          }
          op.dep[n++] = op_id(table, *loc);
        }
      }
      // Each transfer is counted once (at its SEND); overflow checks are cheap here and make
      // the event loop's sums safe: every time it computes is a sum of distinct durations.
      if (!sched::is_recv(a.kind) && __builtin_add_overflow(total_ns, op.duration_ns, &total_ns)) total_ns = kMaxTime + 1;
      if (op.memory_delta_bytes > 0 && __builtin_add_overflow(total_bytes, op.memory_delta_bytes, &total_bytes)) {
        total_bytes = std::numeric_limits<std::int64_t>::max();
      }
      if (total_ns > kMaxTime) return Error{"the schedule's total duration overflows the simulator's time range"};
    }
  }
  if (total_bytes == std::numeric_limits<std::int64_t>::max()) {
    return Error{"the schedule's total memory overflows the simulator's byte range"};
  }
  return table;
}

}  // namespace pipeworks::sim
