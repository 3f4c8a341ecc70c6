// Pass 2 of building an op table: every op's record and class, and every structural error in
// program order (pass 1, where each action is, lives in op_index.h; the table's frame in op_table.cc).
#include "sim/engine/op_compiler.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sim/engine/op_costs.h"

namespace pipeworks::sim::detail {
namespace {

using sched::Action;
using sched::ActionKind;

__extension__ typedef __int128 Int128;  // NOLINT: exact sums past int64

// How often `a` occurs in the schedule (for the duplicate message only).
int occurrences(const sched::Schedule& schedule, const Action& a) {
  int n = 0;
  for (const sched::Program& program : schedule.programs) {
    for (const Action& b : program) n += b == a ? 1 : 0;
  }
  return n;
}

// Variant bits of a compute op's class (OpClass).
constexpr std::size_t kFirstOfStep = 1;       // its stage's first of the kind, with a first-of-step cost
constexpr std::size_t kRematerialized = 2;    // its micro-batch has an R on the stage
constexpr std::size_t kSplitBackward = 4;     // its micro-batch has a W on the stage
constexpr std::size_t kVariants = 8;
// UNSHARD, RESHARD, REDUCE_GRAD: the kinds after the kNumMicrobatchKinds with a micro-batch.
constexpr std::size_t kStageLevelKinds = sched::kNumActionKinds - sched::kNumMicrobatchKinds;

// Pass 2 of the compilation: every op's record and class, errors in program order (the first
// one found is kept in `error`).
class Compiler {
 public:
  Compiler(const sched::Schedule& schedule, const CostModel& model, const Located& located, OpTable& table)
      : schedule_(schedule), model_(model), index_(located.index), located_(located), table_(table),
        class_of_key_(static_cast<std::size_t>(schedule.num_stages) * kKinds * kVariants, -1),
        seen_(static_cast<std::size_t>(schedule.num_stages) * kKinds, 0),
        route_(static_cast<std::size_t>(schedule.num_stages) * kKinds, -1),
        link_sender_(model.links.size(), -1),
        stage_level_class_(static_cast<std::size_t>(schedule.num_stages) * kStageLevelKinds, -1),
        last_compute_(located.has_reduce_grad ? static_cast<std::size_t>(schedule.num_stages) : 0, -1),
        has_recompute_((located.kinds_present >> sched::kind_index(ActionKind::kRecompute)) & 1U),
        has_split_((located.kinds_present >> sched::kind_index(ActionKind::kBackwardWeight)) & 1U) {
    table.num_transfers = located.num_sends;
  }

  // Out of line: inlined into compile_ops beside the constructor, its loop took more instructions
  // per op (bench/README.md, "sim").
  [[gnu::noinline]] bool run() {
    for (std::size_t d = 0; d + 1 < table_.device_begin.size(); ++d) {
      if (!compile_program(d)) return false;
    }
    if (!check_totals()) return false;
    for (OpClass& c : table_.classes) {
      if (c.link >= 0) c.link_shared = table_.link_shared[static_cast<std::size_t>(c.link)];
    }
    return true;
  }

  std::string error;

 private:
  // What compiling an op reads besides the op. The loop keeps it in a local that never escapes:
  // the int32 stores into the op records may alias int members, which the compiler would then
  // reload for every op.
  struct Context {
    IndexView index;
    const int* placement;
    const std::uint8_t* is_repeated;  // nullptr when no action repeats
    std::size_t first_out_of_range;
    std::int32_t* last_compute;  // per stage, its latest compute op; null when no REDUCE_GRAD reads it
    int num_stages;
    bool has_recompute;
    bool has_split;

    std::size_t slot(const Action& a) const { return index.slot(a.stage, a.kind, a.microbatch); }
  };

  Context context() {
    return Context{view(index_), schedule_.placement.data(),
                   located_.is_repeated.empty() ? nullptr : located_.is_repeated.data(),
                   located_.first_out_of_range, last_compute_.empty() ? nullptr : last_compute_.data(),
                   schedule_.num_stages, has_recompute_, has_split_};
  }

  // Ops are compiled in id order: device by device, each in program order.
  bool compile_program(std::size_t d) {
    const Context ctx = context();
    const Action* const actions = schedule_.programs[d].data();
    const std::size_t size = schedule_.programs[d].size();
    const auto begin = static_cast<std::size_t>(table_.device_begin[d]);
    for (std::size_t p = 0; p < size; ++p) {
      const Action a = actions[p];
      if (begin + p == ctx.first_out_of_range) return fail_check(ctx, d, p, a);
      if (sched::is_stage_level(a.kind)) {
        if (!compile_stage_level(ctx, d, p, a)) return false;
        continue;
      }
      // In range, once in the schedule, on its stage's device.
      if ((ctx.is_repeated != nullptr && ctx.is_repeated[ctx.slot(a)] != 0) ||
          ctx.placement[static_cast<std::size_t>(a.stage)] != static_cast<int>(d)) {
        return fail_check(ctx, d, p, a);
      }
      Op& op = table_.ops.emplace_back();  // filled in place: a copy from the stack stalls on store forwarding
      if (sched::is_comm(a.kind)) {
        if (!compile_transfer(ctx, d, p, a, op)) return false;
        if (sched::is_recv(a.kind)) continue;
      } else {
        op.op_class = compute_class(ctx, a);
        if (ctx.last_compute != nullptr) ctx.last_compute[a.stage] = static_cast<std::int32_t>(table_.ops.size() - 1);
      }
      std::array<Dep, 2> deps;
      const int n = dependencies(ctx.index, a, ctx.num_stages, deps);
      if (n > 0) op.dep = deps[0].ref;
      if (n > 1) op.other = deps[1].ref;
      if (n > 0 && deps[0].ref < 0) return fail_dependency(d, p, a, deps[0]);
      if (n > 1 && deps[1].ref < 0) return fail_dependency(d, p, a, deps[1]);
    }
    return true;
  }

  // Which of compile_program's checks `a` failed, as a message.
  [[gnu::noinline, gnu::cold]] bool fail_check(const Context& ctx, std::size_t d, std::size_t p, const Action& a) {
    if (static_cast<std::size_t>(table_.device_begin[d]) + p == ctx.first_out_of_range) {
      return fail(d, p, a, fmt::format("out of range ({} stages, {} micro-batches)", schedule_.num_stages,
                                       schedule_.num_microbatches));
    }
    if (ctx.is_repeated != nullptr && ctx.is_repeated[ctx.slot(a)] != 0) {
      return fail(d, p, a, fmt::format("the action occurs {} times", occurrences(schedule_, a)));
    }
    return fail(d, p, a, fmt::format("stage {} is placed on device {}", a.stage,
                                     schedule_.placement[static_cast<std::size_t>(a.stage)]));
  }

  [[gnu::noinline, gnu::cold]] bool fail_dependency(std::size_t d, std::size_t p, const Action& a, const Dep& missing) {
    return fail(d, p, a, fmt::format("depends on {}, which the schedule does not contain",
                                     sched::to_string(Action{missing.stage, missing.kind, a.microbatch})));
  }

  // An UNSHARD, RESHARD or REDUCE_GRAD on its stage's device, one class per (stage, kind): the
  // collective's time and, for UNSHARD, the parameters it gathers. It may repeat and its
  // micro-batch is not read.
  [[gnu::noinline]] bool compile_stage_level(const Context& ctx, std::size_t d, std::size_t p, const Action& a) {
    const auto s = static_cast<std::size_t>(a.stage);
    const int home = ctx.placement[s];
    if (home != static_cast<int>(d)) return fail(d, p, a, fmt::format("stage {} is placed on device {}", a.stage, home));
    const auto kind = static_cast<std::size_t>(sched::kind_index(a.kind) - sched::kNumMicrobatchKinds);
    std::int32_t& id = stage_level_class_[s * kStageLevelKinds + kind];
    if (id < 0) {
      const StageCost& c = model_.stages[s];
      OpClass oc;
      oc.kind = a.kind;
      oc.device = home;
      oc.stage = a.stage;
      if (a.kind == ActionKind::kUnshard) oc.duration_ns = c.unshard_ns, oc.memory_delta_bytes = c.unshard_bytes;
      if (a.kind == ActionKind::kReduceGrad) {
        oc.duration_ns = c.reduce_grad_ns;
        oc.link = c.reduce_grad_link;
        oc.resume_ns = c.reduce_grad_link >= 0 ? c.reduce_grad_link_ns : 0;
      }
      id = add_class(oc);
    }
    Op& op = table_.ops.emplace_back();
    op.op_class = id;
    if (a.kind == ActionKind::kReduceGrad) op.dep = last_compute_.at(s);
    table_.has_unshard = table_.has_unshard || a.kind == ActionKind::kUnshard;
    ++table_.num_stage_level;
    return true;
  }

  std::int32_t compute_class(const Context& ctx, const Action& a) {
    const auto s = static_cast<std::size_t>(a.stage);
    const bool rematerialized = ctx.has_recompute && ctx.index.find(a.stage, ActionKind::kRecompute, a.microbatch) >= 0;
    const bool split = ctx.has_split && ctx.index.find(a.stage, ActionKind::kBackwardWeight, a.microbatch) >= 0;
    char& seen = seen_[s * kKinds + static_cast<std::size_t>(sched::kind_index(a.kind))];
    const bool first = seen == 0 && first_cost(model_.stages[s], a.kind) > 0;
    seen = 1;
    const std::size_t variant =
        (first ? kFirstOfStep : 0) | (rematerialized ? kRematerialized : 0) | (split ? kSplitBackward : 0);
    const std::int32_t id = class_of_key_[key(a) + variant];
    return id >= 0 ? id : new_compute_class(a, first, rematerialized, split, variant);
  }

  [[gnu::noinline]] std::int32_t new_compute_class(const Action& a, bool first, bool rematerialized, bool split,
                                                   std::size_t variant) {
    const StageCost& c = model_.stages[static_cast<std::size_t>(a.stage)];
    OpClass oc;
    oc.kind = a.kind;
    oc.device = schedule_.placement[static_cast<std::size_t>(a.stage)];
    oc.stage = a.stage;
    oc.memory_delta_bytes = activation_delta_bytes(a.kind, c, rematerialized, split);
    if (first) {
      oc.duration_ns = first_cost(c, a.kind) + model_.per_action_overhead_ns;
    } else {
      // An F without the graph when its micro-batch is re-materialized.
      const bool no_graph = a.kind == ActionKind::kForward && rematerialized && c.forward_no_grad_ns > 0;
      oc.duration_ns = (no_graph ? c.forward_no_grad_ns : compute_cost(c, a.kind)) + model_.per_action_overhead_ns;
      oc.resume_ns = resume_cost(c, a.kind);
    }
    return class_of_key_[key(a) + variant] = add_class(oc);
  }

  // A SEND or RECV: its partner and the class of its transfer.
  bool compile_transfer(const Context& ctx, std::size_t d, std::size_t p, const Action& a, Op& op) {
    const Action peer = sched::comm_partner(a);
    const bool peer_in_range = static_cast<unsigned>(peer.stage) < static_cast<unsigned>(ctx.num_stages);
    const std::int32_t peer_op = peer_in_range ? ctx.index.find(peer.stage, peer.kind, peer.microbatch) : -1;
    if (peer_op < 0) return fail_partner(d, p, a, peer, peer_in_range);
    op.other = peer_op;
    const int expected_device = ctx.placement[static_cast<std::size_t>(peer.stage)];
    const std::int32_t route = route_[static_cast<std::size_t>(a.stage) * kKinds + static_cast<std::size_t>(sched::kind_index(a.kind))];
    if (route >= 0 && holds(expected_device, peer_op)) {  // the devices and link of the op that made the class
      op.op_class = route;
      return true;
    }
    return classify_transfer(d, p, a, op, expected_device);
  }

  [[gnu::noinline, gnu::cold]] bool fail_partner(std::size_t d, std::size_t p, const Action& a, const Action& peer,
                                                 bool peer_in_range) {
    return fail(d, p, a, fmt::format("its partner {} is not in the schedule",
                                     peer_in_range ? sched::to_string(peer) : std::string{"(outside the stage range)"}));
  }

  // The first transfer of its (stage, kind), or one whose partner is off its stage's device: the
  // link between the two devices and the transfer's class.
  [[gnu::noinline]] bool classify_transfer(std::size_t d, std::size_t p, const Action& a, Op& op, int expected_device) {
    const int peer_device = device_holding(op.other, expected_device);
    const bool send = sched::is_send(a.kind);
    const int src = send ? static_cast<int>(d) : peer_device;
    const int dst = send ? peer_device : static_cast<int>(d);
    // src, dst < schedule devices <= model.num_devices (check_shape), so link_of has the entry.
    const int link = model_.link_of[static_cast<std::size_t>(src) * static_cast<std::size_t>(model_.num_devices) + static_cast<std::size_t>(dst)];
    if (link < 0) return fail(d, p, a, fmt::format("the cost model has no link from device {} to device {}", src, dst));
    if (send) {
      std::int32_t& sender = link_sender_[static_cast<std::size_t>(link)];
      if (sender >= 0 && sender != static_cast<std::int32_t>(d)) table_.link_shared[static_cast<std::size_t>(link)] = 1;
      sender = static_cast<std::int32_t>(d);
    }
    std::int32_t& id = class_of_key_[key(a)];
    if (id < 0) {  // every micro-batch of a (stage, kind) crosses the same link with the same bytes
      auto ns = transfer_ns(model_.links[static_cast<std::size_t>(link)], transfer_bytes(a, model_));
      if (!ns) return fail(d, p, a, ns.error().message);
      OpClass oc;
      oc.kind = a.kind;
      oc.duration_ns = *ns;
      if (send) oc.resume_ns = model_.links[static_cast<std::size_t>(link)].send_overhead_ns;
      oc.device = static_cast<std::int32_t>(d);
      oc.link = link;
      op.op_class = id = add_class(oc);
    } else if (table_.classes[static_cast<std::size_t>(id)].link != link) {
      // Only when the schedule holds a partner off its stage's device, an error found at that
      // partner: the op keeps its own link and the class's duration.
      OpClass oc = table_.classes[static_cast<std::size_t>(id)];
      oc.link = link;
      op.op_class = add_class(oc);
      return true;
    } else {
      op.op_class = id;
    }
    if (peer_device == expected_device) {
      route_[static_cast<std::size_t>(a.stage) * kKinds + static_cast<std::size_t>(sched::kind_index(a.kind))] = id;
    }
    return true;
  }

  // The event loop's sums are safe when all durations together (each transfer counted once, at
  // its SEND) fit in kMaxTime, and a device's bytes when the static memory and every positive
  // change together fit in int64: checked by a bound over the classes, op by op only when the
  // bound is too coarse.
  // The most time an op of class `c` may take: its duration, its resume cost, and for a compute
  // op the whole idle slowdown (op_costs.h's idle_extra_ns, rounded).
  Int128 most_ns(const OpClass& c) const {
    Int128 most = Int128{c.duration_ns} + c.resume_ns;
    if (sched::is_compute(c.kind) && model_.idle_slowdown > 1.0) {
      most += static_cast<Int128>(static_cast<double>(c.duration_ns) * (model_.idle_slowdown - 1.0)) + 1;
    }
    return most;
  }

  bool check_totals() {
    Int128 longest = 0;
    Int128 largest_growth = 0;
    for (const OpClass& c : table_.classes) {
      longest = std::max(longest, most_ns(c));
      largest_growth = std::max(largest_growth, Int128{c.memory_delta_bytes});
    }
    Int128 static_bytes = 0;
    for (const StaticMemory& m : table_.static_memory) static_bytes += m.total_bytes();
    Int128 tails = 0;  // the optimizer steps and parameter gathers after the programs
    for (const StageCost& c : model_.stages) tails += Int128{c.optimizer_step_ns} + c.param_gather_ns;
    const auto n = static_cast<Int128>(table_.ops.size());
    const Int128 int64_max = std::numeric_limits<std::int64_t>::max();
    if (longest * n + tails <= kMaxTime && static_bytes + largest_growth * n < int64_max) return true;
    Int128 total_ns = tails;
    Int128 total_bytes = static_bytes;
    for (const Op& op : table_.ops) {
      const OpClass& c = table_.classes[static_cast<std::size_t>(op.op_class)];
      if (!sched::is_recv(c.kind)) total_ns += most_ns(c);
      total_bytes += std::max<Bytes>(c.memory_delta_bytes, 0);
    }
    if (total_ns > kMaxTime) {
      error = "the schedule's total duration overflows the simulator's time range";
      return false;
    }
    if (total_bytes >= int64_max) {
      error = "the schedule's total memory overflows the simulator's byte range";
      return false;
    }
    return true;
  }

  [[gnu::noinline, gnu::cold]] bool fail(std::size_t d, std::size_t p, const Action& a, std::string_view what) {
    error = fmt::format("device {} position {} ({}): {}", d, p, sched::to_string(a), what);
    return false;
  }

  // The class-table key of (stage, kind), variant 0.
  std::size_t key(const Action& a) const {
    return (static_cast<std::size_t>(a.stage) * kKinds + static_cast<std::size_t>(sched::kind_index(a.kind))) *
           kVariants;
  }

  std::int32_t add_class(OpClass c) {
    table_.classes.push_back(c);
    return static_cast<std::int32_t>(table_.classes.size() - 1);
  }

  bool holds(int device, std::int32_t op) const {
    const auto d = static_cast<std::size_t>(device);
    return table_.device_begin[d] <= op && op < table_.device_begin[d + 1];
  }

  // The device whose program holds `op`: `expected` unless the schedule placed it elsewhere.
  int device_holding(std::int32_t op, int expected) const {
    if (holds(expected, op)) return expected;
    const std::vector<std::int32_t>& begin = table_.device_begin;
    return static_cast<int>(std::upper_bound(begin.begin(), begin.end(), op) - begin.begin() - 1);
  }

  const sched::Schedule& schedule_;
  const CostModel& model_;
  const FlatIndex& index_;
  const Located& located_;
  OpTable& table_;
  std::vector<std::int32_t> class_of_key_;  // per (stage, kind, variant): class id, -1 none yet
  std::vector<char> seen_;                  // per (stage, kind): has an op of it been compiled
  // Per SEND/RECV (stage, kind): the class made by its first op whose partner sits on the
  // partner stage's device; -1 none yet. Every later such op shares its devices and link.
  std::vector<std::int32_t> route_;
  std::vector<std::int32_t> link_sender_;   // per link: the device of its latest SEND, -1 none
  std::vector<std::int32_t> stage_level_class_;  // per (stage, stage-level kind): class id, -1 none yet
  std::vector<std::int32_t> last_compute_;       // per stage: its latest compute op compiled, -1 none
  bool has_recompute_;
  bool has_split_;
};

}  // namespace

std::string compile_ops(const sched::Schedule& schedule, const CostModel& model, const Located& located,
                        OpTable& table) {
  Compiler compiler(schedule, model, located, table);
  return compiler.run() ? std::string{} : compiler.error;
}

}  // namespace pipeworks::sim::detail
