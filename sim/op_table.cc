// Compiles a (Schedule, CostModel) pair into flat per-op arrays and rejects every structural error.
#include "sim/op_table.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/limits.h"

namespace pipeworks::sim {
namespace {

using sched::Action;
using sched::ActionKind;
using sched::Error;

__extension__ typedef __int128 Int128;  // NOLINT: exact ceil(bytes * 1e9 / bandwidth)

constexpr std::int64_t kMaxTime = std::numeric_limits<std::int64_t>::max() / 4;
constexpr int kKinds = sched::kNumActionKinds;

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

// The cost of the stage's first action of `kind` in a step; 0: as the others.
Nanoseconds first_cost(const StageCost& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: return c.first_forward_ns;
    case ActionKind::kRecompute: return c.first_recompute_ns;
    case ActionKind::kBackward: return c.first_backward_ns;
    default: return 0;
  }
}

Nanoseconds resume_cost(const StageCost& c, ActionKind kind) {
  switch (kind) {
    case ActionKind::kForward: return c.resume_forward_ns;
    case ActionKind::kRecompute: return c.resume_recompute_ns;
    case ActionKind::kBackward:
    case ActionKind::kBackwardInput:
    case ActionKind::kBackwardWeight: return c.resume_backward_ns;
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

// Op id of every in-range action: one int32 per (stage, micro-batch, kind), -1 when absent. The
// kinds of one (stage, micro-batch) sit together, so the look-ups of one op share cache lines.
// (sched::ActionIndex answers the same questions through out-of-line calls; this is the inlined
// copy for the simulator's hot loop, as DESIGN.md allows where measured faster: bench/README.md.)
class FlatIndex {
 public:
  FlatIndex(int num_stages, int num_microbatches)
      : k_(num_stages), m_(num_microbatches),
        op_(static_cast<std::size_t>(num_stages) * static_cast<std::size_t>(num_microbatches) * kKinds, -1) {}

  bool in_range(const Action& a) const {
    return a.stage >= 0 && a.stage < k_ && a.microbatch >= 0 && a.microbatch < m_ && sched::kind_index(a.kind) >= 0 &&
           sched::kind_index(a.kind) < kKinds;
  }
  // Precondition: in_range(a).
  std::size_t slot(const Action& a) const {
    return (static_cast<std::size_t>(a.stage) * static_cast<std::size_t>(m_) + static_cast<std::size_t>(a.microbatch)) *
               kKinds +
           static_cast<std::size_t>(sched::kind_index(a.kind));
  }
  std::int32_t& at(std::size_t slot) { return op_[slot]; }
  // Precondition: 0 <= stage < K, 0 <= m < M.
  std::int32_t find(int stage, ActionKind kind, int m) const { return op_[slot(Action{stage, kind, m})]; }

 private:
  int k_;
  int m_;
  std::vector<std::int32_t> op_;
};

// One data dependency: the action the rules of sched::data_dependencies pick (for the message)
// and its op id (-1: the schedule does not contain it).
// (No member initializers: the compile loop declares two per op and fills what it uses.)
struct Dep {
  int stage;
  ActionKind kind;
  std::int32_t op;
};

// (stage, kind) of micro-batch m: `preferred` when the schedule has it, else `fallback`.
inline Dep either(const FlatIndex& index, int m, int stage, ActionKind kind, int fallback_stage,
                  ActionKind fallback_kind) {
  const std::int32_t op = index.find(stage, kind, m);
  if (op >= 0) return {stage, kind, op};
  return {fallback_stage, fallback_kind, index.find(fallback_stage, fallback_kind, m)};
}

// sched::data_dependencies (dependencies.h) resolved against the flat index, for every kind but
// RECV (the simulator gives a RECV no dependency: it is paired with its SEND instead).
// tests/sim/op_table_test.cc checks that the two agree.
int dependencies(const FlatIndex& index, const Action& a, int num_stages, std::array<Dep, 2>& out) {
  const int s = a.stage;
  const int m = a.microbatch;
  const auto input_backward = [&](int stage) {
    return either(index, m, stage, ActionKind::kBackward, stage, ActionKind::kBackwardInput);
  };
  const auto plain = [&](int stage, ActionKind kind) { return Dep{stage, kind, index.find(stage, kind, m)}; };
  switch (a.kind) {
    case ActionKind::kForward:
      if (s == 0) return 0;
      out[0] = either(index, m, s, ActionKind::kRecvF, s - 1, ActionKind::kForward);
      return 1;
    case ActionKind::kRecompute:
    case ActionKind::kSendF:
      out[0] = plain(s, ActionKind::kForward);
      return 1;
    case ActionKind::kBackward:
    case ActionKind::kBackwardInput:
      out[0] = either(index, m, s, ActionKind::kRecompute, s, ActionKind::kForward);
      if (s + 1 >= num_stages) return 1;
      out[1] = index.find(s, ActionKind::kRecvB, m) >= 0 ? plain(s, ActionKind::kRecvB) : input_backward(s + 1);
      return 2;
    case ActionKind::kBackwardWeight:
      out[0] = plain(s, ActionKind::kBackwardInput);
      return 1;
    case ActionKind::kSendB:
      out[0] = input_backward(s);
      return 1;
    default:
      return 0;
  }
}

// sched::comm_peer without the optional: SEND_F(s,m) <-> RECV_F(s+1,m), SEND_B(s,m) <-> RECV_B(s-1,m);
// the stage may fall outside 0..K-1. Precondition: a SEND/RECV. (op_table_test checks the two agree.)
Action partner(const Action& a) {
  switch (a.kind) {
    case ActionKind::kSendF: return {a.stage + 1, ActionKind::kRecvF, a.microbatch};
    case ActionKind::kRecvF: return {a.stage - 1, ActionKind::kSendF, a.microbatch};
    case ActionKind::kSendB: return {a.stage - 1, ActionKind::kRecvB, a.microbatch};
    default: return {a.stage + 1, ActionKind::kSendB, a.microbatch};
  }
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
  // The same bounds as sched::ActionIndex, with its messages.
  if (schedule.num_microbatches < 0) return Error{"schedule has a negative number of stages or micro-batches"};
  if (std::int64_t{schedule.num_stages} * schedule.num_microbatches > sched::kMaxScheduleCells) {
    return Error{fmt::format("schedule too large to index: {} stages x {} micro-batches exceeds {} cells",
                             schedule.num_stages, schedule.num_microbatches, sched::kMaxScheduleCells)};
  }
  return sched::Ok{};
}

// How often `a` occurs in the schedule (for the duplicate message only).
int occurrences(const sched::Schedule& schedule, const Action& a) {
  int n = 0;
  for (const sched::Program& program : schedule.programs) {
    for (const Action& b : program) n += b == a ? 1 : 0;
  }
  return n;
}

// Pass 1 of the compilation: where every action is (the first occurrence wins), which slots hold
// a repeated action and the first out-of-range op (both are reported, in program order, by pass 2).
struct Located {
  FlatIndex index;
  std::vector<std::uint8_t> is_repeated;  // per slot; empty when no action repeats
  std::size_t first_out_of_range;         // op id; the number of ops when none
};

Located locate_actions(const sched::Schedule& schedule, const std::vector<std::int32_t>& device_begin,
                       std::vector<std::int32_t>& device_of_op) {
  Located out{FlatIndex(schedule.num_stages, schedule.num_microbatches), {}, schedule.num_actions()};
  std::vector<std::size_t> repeated;
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const sched::Program& program = schedule.programs[d];
    const auto begin = static_cast<std::size_t>(device_begin[d]);
    const std::size_t size = program.size();
    for (std::size_t p = 0; p < size; ++p) {
      device_of_op[begin + p] = static_cast<std::int32_t>(d);
      if (!out.index.in_range(program[p])) {
        out.first_out_of_range = std::min(out.first_out_of_range, begin + p);
        continue;
      }
      const std::size_t slot = out.index.slot(program[p]);
      std::int32_t& op = out.index.at(slot);
      if (op < 0) {
        op = static_cast<std::int32_t>(begin + p);
      } else {
        repeated.push_back(slot);
      }
    }
  }
  if (!repeated.empty()) {
    out.is_repeated.assign(static_cast<std::size_t>(schedule.num_stages) *
                               static_cast<std::size_t>(schedule.num_microbatches) * kKinds,
                           0);
    for (const std::size_t slot : repeated) out.is_repeated[slot] = 1;
  }
  return out;
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
  const int k = schedule.num_stages;
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  const std::size_t n = schedule.num_actions();

  OpTable table;
  table.device_begin.resize(num_devices + 1, 0);
  for (std::size_t d = 0; d < num_devices; ++d) {
    table.device_begin[d + 1] = table.device_begin[d] + static_cast<std::int32_t>(schedule.programs[d].size());
  }
  table.device.resize(n);
  const Located located = locate_actions(schedule, table.device_begin, table.device);
  const FlatIndex& index = located.index;
  const std::vector<std::uint8_t>& is_repeated = located.is_repeated;
  const std::size_t first_out_of_range = located.first_out_of_range;

  table.kind.resize(n);
  table.dep.resize(2 * n);
  table.peer.assign(n, -1);
  table.link.assign(n, -1);
  table.duration_ns.resize(n);
  table.resume_ns.assign(n, 0);
  table.memory_delta_bytes.assign(n, 0);
  table.static_memory = static_memory(schedule, model);
  table.link_shared.assign(model.links.size(), 0);
  std::vector<std::int32_t> link_sender(model.links.size(), -1);
  // Durations per (stage, kind): compute kinds up front, transfers on first use (they can fail).
  std::vector<Nanoseconds> duration(static_cast<std::size_t>(k) * kKinds, -1);
  for (std::size_t s = 0; s < static_cast<std::size_t>(k); ++s) {
    for (const ActionKind kind : sched::kAllActionKinds) {
      if (sched::is_compute(kind)) {
        duration[s * kKinds + static_cast<std::size_t>(sched::kind_index(kind))] =
            compute_cost(model.stages[s], kind) + model.per_action_overhead_ns;
      }
    }
  }
  std::int64_t total_ns = 0;
  std::int64_t total_bytes = 0;
  for (const StaticMemory& m : table.static_memory) total_bytes += m.total_bytes();

  // Per (stage, kind): has its first op (in its device's program order) been placed yet.
  std::vector<char> seen(static_cast<std::size_t>(k) * kKinds, 0);
  // Pass 2: every op's record, errors in program order.
  for (std::size_t d = 0; d < num_devices; ++d) {
    const sched::Program& program = schedule.programs[d];
    const auto begin = static_cast<std::size_t>(table.device_begin[d]);
    const std::size_t size = program.size();
    for (std::size_t p = 0; p < size; ++p) {
      const Action& a = program[p];
      const std::size_t i = begin + p;
      const auto where = [&] { return fmt::format("device {} position {} ({})", d, p, sched::to_string(a)); };
      if (i == first_out_of_range) {
        return Error{fmt::format("{}: out of range ({} stages, {} micro-batches)", where(), k,
                                 schedule.num_microbatches)};
      }
      if (!is_repeated.empty() && is_repeated[index.slot(a)] != 0) {
        return Error{fmt::format("{}: the action occurs {} times", where(), occurrences(schedule, a))};
      }
      const int stage_device = schedule.placement[static_cast<std::size_t>(a.stage)];
      if (stage_device != static_cast<int>(d)) {
        return Error{fmt::format("{}: stage {} is placed on device {}", where(), a.stage, stage_device)};
      }
      table.kind[i] = a.kind;
      Nanoseconds& cost = duration[static_cast<std::size_t>(a.stage) * kKinds + static_cast<std::size_t>(sched::kind_index(a.kind))];
      bool no_graph = false;  // an F without the graph (its micro-batch is re-materialized)
      if (sched::is_comm(a.kind)) {
        const Action peer = partner(a);
        const bool peer_in_range = peer.stage >= 0 && peer.stage < k;
        const std::int32_t peer_op = peer_in_range ? index.find(peer.stage, peer.kind, peer.microbatch) : -1;
        if (peer_op < 0) {
          return Error{fmt::format("{}: its partner {} is not in the schedule", where(),
                                   peer_in_range ? sched::to_string(peer) : std::string{"(outside the stage range)"})};
        }
        table.peer[i] = peer_op;
        const int peer_device = table.device[static_cast<std::size_t>(peer_op)];
        const int src = sched::is_send(a.kind) ? static_cast<int>(d) : peer_device;
        const int dst = sched::is_send(a.kind) ? peer_device : static_cast<int>(d);
        // src, dst < schedule devices <= model.num_devices (check_shape), so link_of has the entry.
        const int link_id = model.link_of[static_cast<std::size_t>(src * model.num_devices + dst)];
        if (link_id < 0) {
          return Error{fmt::format("{}: the cost model has no link from device {} to device {}", where(), src, dst)};
        }
        table.link[i] = link_id;
        // Every micro-batch of a (stage, kind) crosses the same link with the same bytes.
        if (cost < 0) {
          auto ns = transfer_ns(model.links[static_cast<std::size_t>(link_id)], transfer_bytes(a, model));
          if (!ns) return Error{fmt::format("{}: {}", where(), ns.error().message)};
          cost = *ns;
        }
        if (sched::is_send(a.kind)) {
          ++table.num_transfers;
          std::int32_t& sender = link_sender[static_cast<std::size_t>(link_id)];
          if (sender >= 0 && sender != static_cast<std::int32_t>(d)) table.link_shared[static_cast<std::size_t>(link_id)] = 1;
          sender = static_cast<std::int32_t>(d);
        }
      } else {
        const int m = a.microbatch;
        const StageCost& stage = model.stages[static_cast<std::size_t>(a.stage)];
        const bool rematerialized = index.find(a.stage, ActionKind::kRecompute, m) >= 0;
        table.memory_delta_bytes[i] = activation_delta_bytes(
            a.kind, stage, rematerialized, index.find(a.stage, ActionKind::kBackwardWeight, m) >= 0);
        no_graph = a.kind == ActionKind::kForward && rematerialized && stage.forward_no_grad_ns > 0;
      }
      table.duration_ns[i] = no_graph ? model.stages[static_cast<std::size_t>(a.stage)].forward_no_grad_ns +
                                            model.per_action_overhead_ns
                                      : cost;
      if (sched::is_compute(a.kind)) {
        const StageCost& stage = model.stages[static_cast<std::size_t>(a.stage)];
        char& first = seen[static_cast<std::size_t>(a.stage) * kKinds + static_cast<std::size_t>(sched::kind_index(a.kind))];
        if (first == 0 && first_cost(stage, a.kind) > 0) {
          table.duration_ns[i] = first_cost(stage, a.kind) + model.per_action_overhead_ns;
        } else {
          table.resume_ns[i] = resume_cost(stage, a.kind);
        }
        first = 1;
      }
      std::array<Dep, 2> deps;
      const int num_deps = sched::is_recv(a.kind) ? 0 : dependencies(index, a, k, deps);
      for (std::size_t j = 0; j < 2; ++j) {
        const Dep& dep = deps[j];
        if (static_cast<int>(j) < num_deps && dep.op < 0) {
          return Error{fmt::format("{}: depends on {}, which the schedule does not contain", where(),
                                   sched::to_string(Action{dep.stage, dep.kind, a.microbatch}))};
        }
        table.dep[2 * i + j] = static_cast<int>(j) < num_deps ? dep.op : -1;
      }
      // Each transfer is counted once (at its SEND); overflow checks are cheap here and make
      // the event loop's sums safe: every time it computes is a sum of distinct durations.
      if (!sched::is_recv(a.kind) && __builtin_add_overflow(total_ns, table.duration_ns[i] + table.resume_ns[i], &total_ns)) {
        total_ns = kMaxTime + 1;
      }
      const Bytes delta = table.memory_delta_bytes[i];
      if (delta > 0 && __builtin_add_overflow(total_bytes, delta, &total_bytes)) {
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
