// The greedy list heuristic on real stage times, device by device (list_rule.h).
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

// The list schedule's state: per stage its counters, per device when it is free and the bytes it
// holds, per (stage, micro-batch) when its F and backward ended and when its results reach the
// neighbours.
struct ListState {
  ListState(const std::vector<SynthStageTimes>& t, int microbatches, const ListPolicy& p, const DeviceMemory& mem)
      : times(t), policy(p), memory(mem), k(t.size()), m(static_cast<std::size_t>(microbatches)),
        device_of(mem.device_of.empty() ? sched::identity_placement(static_cast<int>(k)) : mem.device_of),
        num_devices(static_cast<std::size_t>(*std::max_element(device_of.begin(), device_of.end())) + 1),
        f_done(k * m, kNever), f_arrives(f_done), b_arrives(f_done), b_done(f_done), nf(k, 0), nb(k, 0), nw(k, 0),
        free_at(num_devices, 0), held(num_devices, 0), stages(num_devices), programs(num_devices) {
    for (std::size_t s = 0; s < k; ++s) stages[static_cast<std::size_t>(device_of[s])].push_back(s);
  }

  const std::vector<SynthStageTimes>& times;
  const ListPolicy& policy;
  const DeviceMemory& memory;  // empty: no check beyond the in-flight limits
  std::size_t k, m;
  std::vector<int> device_of;
  std::size_t num_devices;
  std::vector<Nanoseconds> f_done, f_arrives, b_arrives, b_done;  // [s * m + micro-batch]
  std::vector<int> nf, nb, nw;  // forwards, backwards (I or B), W's run per stage
  std::vector<Nanoseconds> free_at;
  std::vector<Bytes> held;                      // per device, with memory
  std::vector<std::vector<std::size_t>> stages;  // per device, in stage order
  std::vector<sched::Program> programs;
  using WakeUp = std::pair<Nanoseconds, std::size_t>;  // (time, device)
  std::priority_queue<WakeUp, std::vector<WakeUp>, std::greater<>> wake_ups;

  std::size_t device(std::size_t s) const { return static_cast<std::size_t>(device_of[s]); }
  int in_flight(std::size_t s) const { return nf[s] - (times[s].split ? nw[s] : nb[s]); }
  int owed_weights(std::size_t s) const { return times[s].split ? nb[s] - nw[s] : 0; }
  bool backward_ready(std::size_t s, Nanoseconds t) const {
    const auto i = static_cast<std::size_t>(nb[s]);
    return nb[s] < nf[s] && f_done[s * m + i] <= t && (s + 1 == k || b_arrives[(s + 1) * m + i] <= t);
  }
  // The device's held bytes with one more micro-batch on s leave one for each later stage there.
  bool admits(std::size_t s) const {
    if (memory.device_of.empty()) return true;
    const std::size_t d = device(s);
    return held[d] + memory.hold_bytes[s] + memory.reserve_bytes[s] <= memory.room_bytes[d];
  }
  bool forward_ready(std::size_t s, Nanoseconds t) const {
    const auto f = static_cast<std::size_t>(nf[s]);
    return f < m && in_flight(s) < policy.in_flight_limit[s] && (s == 0 || f_arrives[(s - 1) * m + f] <= t) &&
           admits(s);
  }
  // When the backward whose W stage s runs next ended (its oldest owed W).
  Nanoseconds oldest_weight(std::size_t s) const { return b_done[s * m + static_cast<std::size_t>(nw[s])]; }
  void release(std::size_t s) {
    if (!memory.device_of.empty()) held[device(s)] -= memory.hold_bytes[s];
  }
};

// Runs an F of stage s at t; returns its end.
Nanoseconds run_forward(ListState& st, std::size_t s, Nanoseconds t) {
  const SynthStageTimes& c = st.times[s];
  const auto f = static_cast<std::size_t>(st.nf[s]);
  const Nanoseconds end = t + std::max<Nanoseconds>(1, c.forward_ns);
  st.f_done[s * st.m + f] = end;
  st.f_arrives[s * st.m + f] = end + c.handoff_forward_ns;
  if (s + 1 < st.k) st.wake_ups.emplace(end + c.handoff_forward_ns, st.device(s + 1));
  if (!st.memory.device_of.empty()) st.held[st.device(s)] += st.memory.hold_bytes[s];
  st.programs[st.device(s)].push_back({static_cast<int>(s), ActionKind::kForward, st.nf[s]++});
  return end;
}

// Runs one action of `kind` on stage s at t; returns its end.
Nanoseconds run_action(ListState& st, std::size_t s, Nanoseconds t, ActionKind kind) {
  if (kind == ActionKind::kForward) return run_forward(st, s, t);
  const SynthStageTimes& c = st.times[s];
  const int stage = static_cast<int>(s);
  sched::Program& program = st.programs[st.device(s)];
  if (kind == ActionKind::kBackwardWeight) {
    st.release(s);
    program.push_back({stage, kind, st.nw[s]++});
    return t + std::max<Nanoseconds>(1, c.weight_grad_ns);
  }
  const auto b = static_cast<std::size_t>(st.nb[s]);
  const Nanoseconds end = t + std::max<Nanoseconds>(1, c.split ? c.input_grad_ns : c.backward_ns);
  const Nanoseconds arrives = s > 0 ? end + st.times[s - 1].handoff_backward_ns : end;
  st.b_arrives[s * st.m + b] = arrives;
  st.b_done[s * st.m + b] = end;
  if (s > 0) st.wake_ups.emplace(arrives, st.device(s - 1));
  if (!c.split) st.release(s);
  program.push_back({stage, kind, st.nb[s]++});
  return end;
}

// Among device d's stages that `eligible` accepts: the highest (nearest the loss, the later chunk).
template <typename Eligible>
std::size_t highest(const ListState& st, std::size_t d, Eligible eligible) {
  for (auto s = st.stages[d].rbegin(); s != st.stages[d].rend(); ++s) {
    if (eligible(*s)) return *s;
  }
  return st.k;
}

// Among device d's stages that owe more W's than `allowed` lets them defer: the one whose owed W
// is oldest (the lowest stage on ties); k where none does.
template <typename Allowed>
std::size_t oldest_owed(const ListState& st, std::size_t d, Allowed allowed) {
  std::size_t pick = st.k;
  for (const std::size_t s : st.stages[d]) {
    if (st.owed_weights(s) <= allowed(s)) continue;
    if (pick == st.k || st.oldest_weight(s) < st.oldest_weight(pick)) pick = s;
  }
  return pick;
}

// What device d runs when free at t (the rule of list_rule.h): the stage and kind; the stage is
// k when it has nothing to run.
std::pair<std::size_t, ActionKind> choose(const ListState& st, std::size_t d, Nanoseconds t) {
  const std::size_t forced = oldest_owed(st, d, [&](std::size_t s) { return st.policy.max_deferred_weights[s]; });
  if (forced < st.k) return {forced, ActionKind::kBackwardWeight};
  const std::size_t back = highest(st, d, [&](std::size_t s) { return st.backward_ready(s, t); });
  if (back < st.k) return {back, st.times[back].split ? ActionKind::kBackwardInput : ActionKind::kBackward};
  const std::size_t forward = highest(st, d, [&](std::size_t s) { return st.forward_ready(s, t); });
  if (forward < st.k) return {forward, ActionKind::kForward};
  return {oldest_owed(st, d, [](std::size_t) { return 0; }), ActionKind::kBackwardWeight};
}

sched::Status check_policy(const std::vector<SynthStageTimes>& times, const ListPolicy& policy,
                           const DeviceMemory& memory) {
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
  const std::size_t k = times.size();
  if (!memory.device_of.empty() &&
      (memory.device_of.size() != k || memory.hold_bytes.size() != k || memory.reserve_bytes.size() != k)) {
    return sched::Error{fmt::format("list rule: a placement of {} stages for {} stages", memory.device_of.size(),
                                    times.size())};
  }
  return sched::Ok{};
}

}  // namespace

sched::Result<sched::Schedule> list_schedule(const std::vector<SynthStageTimes>& times, int num_microbatches,
                                             const ListPolicy& policy) {
  return list_schedule(times, num_microbatches, policy, DeviceMemory{});
}

sched::Result<sched::Schedule> list_schedule(const std::vector<SynthStageTimes>& times, int num_microbatches,
                                             const ListPolicy& policy, const DeviceMemory& memory) {
  if (auto ok = check_policy(times, policy, memory); !ok) return ok.error();
  if (times.empty()) return sched::Error{"list rule: no stages"};
  ListState st(times, num_microbatches, policy, memory);
  std::size_t remaining = 0;
  for (const SynthStageTimes& t : times) remaining += (t.split ? 3 : 2) * st.m;
  for (std::size_t d = 0; d < st.num_devices; ++d) st.wake_ups.emplace(0, d);
  while (remaining > 0 && !st.wake_ups.empty()) {
    const auto [t, d] = st.wake_ups.top();
    st.wake_ups.pop();
    if (st.free_at[d] > t) continue;  // busy: its own end wakes it
    const auto [s, kind] = choose(st, d, t);
    if (s == st.k) continue;  // a neighbour's result wakes it
    st.free_at[d] = run_action(st, s, t, kind);
    st.wake_ups.emplace(st.free_at[d], d);
    --remaining;
  }
  if (remaining > 0) return sched::Error{fmt::format("list rule: stopped with {} actions left", remaining)};
  sched::Schedule schedule;
  schedule.num_stages = static_cast<int>(st.k);
  schedule.num_microbatches = num_microbatches;
  schedule.placement = st.device_of;
  schedule.programs = std::move(st.programs);
  return schedule;
}

}  // namespace pipeworks::sim
