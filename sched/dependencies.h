// The data dependencies of an action: what must have finished (anywhere) before it may start,
// besides its predecessor in its own device's program. One definition, used by validation,
// the comm-lowering pass, the simulator and the executor.
//
//   F(s,m)       <- RECV_F(s,m) if present, else F(s-1,m)            (s > 0)
//   R(s,m)       <- F(s,m)
//   B/I(s,m)     <- R(s,m) if present, else F(s,m)
//                   and RECV_B(s,m) if present, else B/I(s+1,m)       (s < K-1)
//   W(s,m)       <- I(s,m)
//   SEND_F(s,m)  <- F(s,m)             RECV_F(s,m) <- SEND_F(s-1,m)   (its pair)
//   SEND_B(s,m)  <- B/I(s,m)           RECV_B(s,m) <- SEND_B(s+1,m)   (its pair)
//   UNSHARD(s), RESHARD(s), REDUCE_GRAD(s): none; they run on their stage's device, whose program
//                order places them among the stage's computes (sched/stage_actions.h)
//
// A composite's sub-actions (sched/composite.h) have these dependencies each.
#pragma once

#include <array>
#include <optional>
#include <utility>

#include "sched/action_index.h"

namespace pipeworks::sched {

// One data dependency picked by resolve_dependencies: the action (at the dependent's micro-batch)
// and what the index answered for it.
// (No member initializers: the simulator's compile loop declares two per op and fills what it uses.)
template <class Ref>
struct ResolvedDependency {
  int stage;
  ActionKind kind;
  Ref ref;
};

// The table above, resolved against any index of a schedule's actions, for every kind but RECV
// (whose one dependency is its pair: comm_peer) and the stage-level kinds (none).
// `index.find(stage, kind, microbatch)` answers with a Ref (a bool, an op id) and
// `Index::present(ref)` says whether the schedule has that action; only in-range stages are
// asked. Writes the dependencies into `out` and returns how many (0..2). data_dependencies below
// and the simulator's op table (sim/engine/op_index.h) are this one rule over their two indexes.
template <class Index, class Ref = decltype(std::declval<const Index&>().find(0, ActionKind::kForward, 0))>
inline int resolve_dependencies(const Index& index, const Action& a, int num_stages,
                                std::array<ResolvedDependency<Ref>, 2>& out) {
  using Dep = ResolvedDependency<Ref>;
  const int s = a.stage;
  const int m = a.microbatch;
  const auto exact = [&](int stage, ActionKind kind) { return Dep{stage, kind, index.find(stage, kind, m)}; };
  // `preferred` at `stage` when the schedule has it, else `fallback` at `fallback_stage`.
  const auto either = [&](int stage, ActionKind preferred, int fallback_stage, ActionKind fallback) {
    const Ref ref = index.find(stage, preferred, m);
    return Index::present(ref) ? Dep{stage, preferred, ref} : exact(fallback_stage, fallback);
  };
  const auto input_backward = [&](int stage) {
    return either(stage, ActionKind::kBackward, stage, ActionKind::kBackwardInput);
  };
  switch (a.kind) {
    case ActionKind::kForward:
      if (s == 0) return 0;
      out[0] = either(s, ActionKind::kRecvF, s - 1, ActionKind::kForward);
      return 1;
    case ActionKind::kRecompute:
    case ActionKind::kSendF:
      out[0] = exact(s, ActionKind::kForward);
      return 1;
    case ActionKind::kBackward:
    case ActionKind::kBackwardInput: {
      out[0] = either(s, ActionKind::kRecompute, s, ActionKind::kForward);
      if (s + 1 >= num_stages) return 1;
      const Ref recv = index.find(s, ActionKind::kRecvB, m);
      out[1] = Index::present(recv) ? Dep{s, ActionKind::kRecvB, recv} : input_backward(s + 1);
      return 2;
    }
    case ActionKind::kBackwardWeight:
      out[0] = exact(s, ActionKind::kBackwardInput);
      return 1;
    case ActionKind::kSendB:
      out[0] = input_backward(s);
      return 1;
    default:
      return 0;  // RECV: its pair; UNSHARD, RESHARD, REDUCE_GRAD: their device's program order only
  }
}

// The other half of a SEND/RECV: SEND_F(s,m) <-> RECV_F(s+1,m), SEND_B(s,m) <-> RECV_B(s-1,m),
// whether or not that stage exists (comm_peer checks it). Precondition: a SEND or RECV.
inline Action comm_partner(const Action& a) {
  switch (a.kind) {
    case ActionKind::kSendF: return {a.stage + 1, ActionKind::kRecvF, a.microbatch};
    case ActionKind::kRecvF: return {a.stage - 1, ActionKind::kSendF, a.microbatch};
    case ActionKind::kSendB: return {a.stage - 1, ActionKind::kRecvB, a.microbatch};
    default: return {a.stage + 1, ActionKind::kSendB, a.microbatch};
  }
}

struct Dependencies {
  std::array<Action, 2> actions{};
  int count = 0;
  const Action* begin() const { return actions.data(); }
  const Action* end() const { return actions.data() + count; }
};

// Dependencies of `action`, resolved against what the schedule contains (for example B
// depends on R only when the schedule re-materializes that micro-batch). Dependencies that
// fall outside the schedule's range (stage -1, stage K) are omitted.
Dependencies data_dependencies(const Action& action, const ActionIndex& index, int num_stages);

// The other half of a SEND/RECV pair: SEND_F(s,m) <-> RECV_F(s+1,m), SEND_B(s,m) <-> RECV_B(s-1,m).
// nullopt for compute actions and for pairs that would leave the stage range.
std::optional<Action> comm_peer(const Action& action, int num_stages);

}  // namespace pipeworks::sched
