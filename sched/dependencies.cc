// Data dependencies between actions (the table and the rule are in dependencies.h), over an
// ActionIndex.
#include "sched/dependencies.h"

namespace pipeworks::sched {
namespace {

// An ActionIndex as resolve_dependencies asks it: whether the schedule has the action.
struct Contains {
  const ActionIndex& index;
  bool find(int stage, ActionKind kind, int microbatch) const { return index.contains(Action{stage, kind, microbatch}); }
  static bool present(bool has) { return has; }
};

}  // namespace

Dependencies data_dependencies(const Action& a, const ActionIndex& index, int num_stages) {
  Dependencies deps;
  if (is_recv(a.kind)) {
    if (auto peer = comm_peer(a, num_stages)) deps.actions[static_cast<std::size_t>(deps.count++)] = *peer;
    return deps;
  }
  std::array<ResolvedDependency<bool>, 2> found;
  deps.count = resolve_dependencies(Contains{index}, a, num_stages, found);
  for (int i = 0; i < deps.count; ++i) {
    const auto& f = found[static_cast<std::size_t>(i)];
    deps.actions[static_cast<std::size_t>(i)] = Action{f.stage, f.kind, a.microbatch};
  }
  return deps;
}

std::optional<Action> comm_peer(const Action& a, int num_stages) {
  if (!is_comm(a.kind)) return std::nullopt;
  const Action peer = comm_partner(a);
  if (peer.stage < 0 || peer.stage >= num_stages) return std::nullopt;
  return peer;
}

}  // namespace pipeworks::sched
