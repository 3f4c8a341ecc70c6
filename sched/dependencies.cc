// Data dependencies between actions (see the table in dependencies.h).
#include "sched/dependencies.h"

namespace pipeworks::sched {
namespace {

void add(Dependencies& deps, const Action& a) { deps.actions[static_cast<std::size_t>(deps.count++)] = a; }

// B(s,m) if the schedule has it, else I(s,m).
Action input_backward(const ActionIndex& index, int stage, int microbatch) {
  const Action full{stage, ActionKind::kBackward, microbatch};
  if (index.contains(full)) return full;
  return Action{stage, ActionKind::kBackwardInput, microbatch};
}

}  // namespace

Dependencies data_dependencies(const Action& a, const ActionIndex& index, int num_stages) {
  Dependencies deps;
  const int s = a.stage;
  const int m = a.microbatch;
  switch (a.kind) {
    case ActionKind::kForward:
      if (s > 0) {
        const Action recv{s, ActionKind::kRecvF, m};
        add(deps, index.contains(recv) ? recv : Action{s - 1, ActionKind::kForward, m});
      }
      break;
    case ActionKind::kRecompute:
      add(deps, Action{s, ActionKind::kForward, m});
      break;
    case ActionKind::kBackward:
    case ActionKind::kBackwardInput: {
      const Action recompute{s, ActionKind::kRecompute, m};
      add(deps, index.contains(recompute) ? recompute : Action{s, ActionKind::kForward, m});
      if (s + 1 < num_stages) {
        const Action recv{s, ActionKind::kRecvB, m};
        add(deps, index.contains(recv) ? recv : input_backward(index, s + 1, m));
      }
      break;
    }
    case ActionKind::kBackwardWeight:
      add(deps, Action{s, ActionKind::kBackwardInput, m});
      break;
    case ActionKind::kSendF:
      add(deps, Action{s, ActionKind::kForward, m});
      break;
    case ActionKind::kSendB:
      add(deps, input_backward(index, s, m));
      break;
    case ActionKind::kRecvF:
    case ActionKind::kRecvB:
      if (auto peer = comm_peer(a, num_stages)) add(deps, *peer);
      break;
    case ActionKind::kUnshard:
    case ActionKind::kReshard:
    case ActionKind::kReduceGrad:
      break;  // ordered by their device's program only (sched/stage_actions.h)
  }
  return deps;
}

std::optional<Action> comm_peer(const Action& a, int num_stages) {
  switch (a.kind) {
    case ActionKind::kSendF:
      if (a.stage + 1 >= num_stages) return std::nullopt;
      return Action{a.stage + 1, ActionKind::kRecvF, a.microbatch};
    case ActionKind::kRecvF:
      if (a.stage < 1) return std::nullopt;
      return Action{a.stage - 1, ActionKind::kSendF, a.microbatch};
    case ActionKind::kSendB:
      if (a.stage < 1) return std::nullopt;
      return Action{a.stage - 1, ActionKind::kRecvB, a.microbatch};
    case ActionKind::kRecvB:
      if (a.stage + 1 >= num_stages) return std::nullopt;
      return Action{a.stage + 1, ActionKind::kSendB, a.microbatch};
    default:
      return std::nullopt;
  }
}

}  // namespace pipeworks::sched
