// The greedy list heuristic on real stage times (list_rule.h).
#include "sim/synth/list_rule.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

constexpr Nanoseconds kNever = std::numeric_limits<Nanoseconds>::max();
using sched::ActionKind;

// The list schedule's state: per stage its counters and when it is free, per (stage,
// micro-batch) when its F ended and when its results reach the neighbours.
struct ListState {
  ListState(const std::vector<SynthStageTimes>& t, int microbatches, const ListPolicy& p)
      : times(t), policy(p), k(t.size()), m(static_cast<std::size_t>(microbatches)),
        f_done(k * m, kNever), f_arrives(f_done), b_arrives(f_done), nf(k, 0), nb(k, 0), nw(k, 0),
        free_at(k, 0), programs(k) {}

  const std::vector<SynthStageTimes>& times;
  const ListPolicy& policy;
  std::size_t k, m;
  std::vector<Nanoseconds> f_done, f_arrives, b_arrives;  // [s * m + micro-batch]
  std::vector<int> nf, nb, nw;  // forwards, backwards (I or B), W's run per stage
  std::vector<Nanoseconds> free_at;
  std::vector<sched::Program> programs;
  using WakeUp = std::pair<Nanoseconds, std::size_t>;
  std::priority_queue<WakeUp, std::vector<WakeUp>, std::greater<>> wake_ups;

  int in_flight(std::size_t s) const { return nf[s] - (times[s].split ? nw[s] : nb[s]); }
  int owed_weights(std::size_t s) const { return times[s].split ? nb[s] - nw[s] : 0; }
  bool backward_ready(std::size_t s, Nanoseconds t) const {
    const auto i = static_cast<std::size_t>(nb[s]);
    return nb[s] < nf[s] && f_done[s * m + i] <= t && (s + 1 == k || b_arrives[(s + 1) * m + i] <= t);
  }
  bool forward_ready(std::size_t s, Nanoseconds t) const {
    const auto f = static_cast<std::size_t>(nf[s]);
    return f < m && in_flight(s) < policy.in_flight_limit[s] && (s == 0 || f_arrives[(s - 1) * m + f] <= t);
  }
};

// Runs one action of `kind` on stage s at t; returns its end.
Nanoseconds run_action(ListState& st, std::size_t s, Nanoseconds t, ActionKind kind) {
  const SynthStageTimes& c = st.times[s];
  const int stage = static_cast<int>(s);
  Nanoseconds end = t;
  if (kind == ActionKind::kForward) {
    const auto f = static_cast<std::size_t>(st.nf[s]);
    end = t + std::max<Nanoseconds>(1, c.forward_ns);
    st.f_done[s * st.m + f] = end;
    st.f_arrives[s * st.m + f] = end + c.handoff_forward_ns;
    if (s + 1 < st.k) st.wake_ups.emplace(end + c.handoff_forward_ns, s + 1);
    st.programs[s].push_back({stage, kind, st.nf[s]++});
  } else if (kind == ActionKind::kBackwardWeight) {
    end = t + std::max<Nanoseconds>(1, c.weight_grad_ns);
    st.programs[s].push_back({stage, kind, st.nw[s]++});
  } else {
    const auto b = static_cast<std::size_t>(st.nb[s]);
    end = t + std::max<Nanoseconds>(1, c.split ? c.input_grad_ns : c.backward_ns);
    const Nanoseconds arrives = s > 0 ? end + st.times[s - 1].handoff_backward_ns : end;
    st.b_arrives[s * st.m + b] = arrives;
    if (s > 0) st.wake_ups.emplace(arrives, s - 1);
    st.programs[s].push_back({stage, kind, st.nb[s]++});
  }
  return end;
}

// What stage s runs when free at t (the rule of list_rule.h); `wait` set when it has nothing to run.
ActionKind choose(const ListState& st, std::size_t s, Nanoseconds t, bool& wait) {
  wait = false;
  const int owed = st.owed_weights(s);
  if (owed > st.policy.max_deferred_weights[s]) return ActionKind::kBackwardWeight;
  if (st.backward_ready(s, t)) return st.times[s].split ? ActionKind::kBackwardInput : ActionKind::kBackward;
  if (st.forward_ready(s, t)) return ActionKind::kForward;
  if (owed > 0) return ActionKind::kBackwardWeight;
  wait = true;
  return ActionKind::kForward;
}

sched::Status check_policy(const std::vector<SynthStageTimes>& times, const ListPolicy& policy) {
  if (policy.in_flight_limit.size() != times.size() || policy.max_deferred_weights.size() != times.size()) {
    return sched::Error{fmt::format("list rule: {} in-flight limits and {} deferrals for {} stages",
                                    policy.in_flight_limit.size(), policy.max_deferred_weights.size(), times.size())};
  }
  for (const int limit : policy.in_flight_limit) {
    if (limit < 1) return sched::Error{fmt::format("list rule: an in-flight limit must be at least 1, got {}", limit)};
  }
  for (const int deferred : policy.max_deferred_weights) {
    if (deferred < 0) return sched::Error{fmt::format("list rule: the W's deferred must be at least 0, got {}", deferred)};
  }
  return sched::Ok{};
}

}  // namespace

sched::Result<sched::Schedule> list_schedule(const std::vector<SynthStageTimes>& times, int num_microbatches,
                                             const ListPolicy& policy) {
  if (auto ok = check_policy(times, policy); !ok) return ok.error();
  ListState st(times, num_microbatches, policy);
  std::size_t remaining = 0;
  for (const SynthStageTimes& t : times) remaining += (t.split ? 3 : 2) * st.m;
  for (std::size_t s = 0; s < st.k; ++s) st.wake_ups.emplace(0, s);
  while (remaining > 0 && !st.wake_ups.empty()) {
    const auto [t, s] = st.wake_ups.top();
    st.wake_ups.pop();
    if (st.free_at[s] > t) continue;  // busy: its own end wakes it
    bool wait = false;
    const ActionKind kind = choose(st, s, t, wait);
    if (wait) continue;  // a neighbour's result wakes it
    st.free_at[s] = run_action(st, s, t, kind);
    st.wake_ups.emplace(st.free_at[s], s);
    --remaining;
  }
  if (remaining > 0) return sched::Error{fmt::format("list rule: stopped with {} actions left", remaining)};
  sched::Schedule schedule;
  schedule.num_stages = static_cast<int>(st.k);
  schedule.num_microbatches = num_microbatches;
  schedule.placement = sched::identity_placement(schedule.num_stages);
  schedule.programs = std::move(st.programs);
  return schedule;
}

}  // namespace pipeworks::sim
