// ZB-V on real times (zb_v_timed, declared in zero_bubble.h): a list rule over the V's two stages
// a device and the search over departures from it, kept apart from the fixed orders it improves on.
#include "sched/zero_bubble.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "sched/departure_search.h"
#include "sched/zero_bubble_internal.h"

namespace pipeworks::sched {
namespace {

using detail::check_stage_times;
using detail::departure_search;
using detail::DepartureRule;
using detail::Departures;
using detail::forward;
using detail::input_grad;
using detail::RuleRun;
using detail::take_choice;
using detail::unit_like;
using detail::weight_grad;

// ZB-V on real times (zb_v_timed): a list rule over the V's two stages a device, and a search
// over departures from it, like ZB-H2's. Stage s sits on device vdev(s); a result crosses to the
// neighbouring stage `handoff` after its action ends unless both stages share a device (the V's
// middle, stages p-1 and p). Stage s holds at most K - s micro-batches (F run, W not yet), as
// torch's order does.
struct VTimed {
  int p, k, m;
  const std::vector<StageTimes>& times;
  std::int64_t handoff;
  int device(int s) const { return std::min(s, k - 1 - s); }
  std::int64_t hop(int from, int to) const { return device(from) == device(to) ? 0 : handoff; }
};

// What the V rule knows as it runs: per stage the next F, I and W and, per stage and micro-batch,
// when its F ended and when its F and I reach the neighbouring stage (s + 1 and s - 1).
struct VState {
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  std::size_t m;
  std::vector<std::int64_t> f_done, f_arrives, i_arrives;  // [s * m + b]
  std::vector<int> nf, ni, nw;
  VState(int stages, int microbatches)
      : m(static_cast<std::size_t>(microbatches)),
        f_done(static_cast<std::size_t>(stages) * m, kNever),
        f_arrives(f_done),
        i_arrives(f_done),
        nf(static_cast<std::size_t>(stages), 0),
        ni(nf),
        nw(nf) {}
  std::size_t at(int s, int b) const { return static_cast<std::size_t>(s) * m + static_cast<std::size_t>(b); }
};

// A choice of the V rule: an action's kind on a stage, or (stage -1) waiting.
struct VChoice {
  ActionKind kind;
  int stage;
};

// Device d's choices at t in the rule's preference (v_rule); none where it has nothing to do.
std::size_t v_choices(const VTimed& v, const VState& st, int d, std::int64_t t, bool first_stage_forwards,
                      std::array<VChoice, 7>& choices) {
  const int second = v.k - 1 - d, first = d;
  std::size_t count = 0;
  bool coming = false;
  for (const int s : {second, first}) {
    const int b = st.ni[static_cast<std::size_t>(s)];
    if (b >= v.m || st.f_done[st.at(s, b)] > t) continue;
    const std::int64_t arrives = s + 1 == v.k ? 0 : st.i_arrives[st.at(s + 1, b)];
    if (arrives <= t) choices[count++] = {ActionKind::kBackwardInput, s};
    else if (arrives != VState::kNever) coming = true;
  }
  for (const int s : first_stage_forwards ? std::array<int, 2>{first, second} : std::array<int, 2>{second, first}) {
    const auto u = static_cast<std::size_t>(s);
    if (st.nf[u] >= v.m || st.nf[u] - st.nw[u] >= v.k - s) continue;
    const std::int64_t arrives = s == 0 ? 0 : st.f_arrives[st.at(s - 1, st.nf[u])];
    if (arrives <= t) choices[count++] = {ActionKind::kForward, s};
    else if (arrives != VState::kNever) coming = true;
  }
  const auto u1 = static_cast<std::size_t>(first), u2 = static_cast<std::size_t>(second);
  const bool w1 = st.nw[u1] < st.ni[u1], w2 = st.nw[u2] < st.ni[u2];
  if (w1 || w2) {
    const bool second_first = w2 && (!w1 || st.nw[u2] <= st.nw[u1]);
    choices[count++] = {ActionKind::kBackwardWeight, second_first ? second : first};
    if (w1 && w2) choices[count++] = {ActionKind::kBackwardWeight, second_first ? first : second};
  }
  if (count > 0 && coming) choices[count++] = {ActionKind::kBackward, -1};  // wait
  return count;
}

// One run of the V rule. A free device, at each decision, lists its choices in the rule's
// preference: a ready I (its second stage's first: that I has the longer way back), a ready F
// under the stage's limit (the first stage's first where `first_stage_forwards`, else the
// second's), its oldest W (by micro-batch, then its second stage), and waiting while a result is
// on its way to it; `departures` picks another than the first.
RuleRun v_rule(const VTimed& v, bool first_stage_forwards, const Departures& departures) {
  VState st(v.k, v.m);
  std::vector<std::int64_t> free_at(static_cast<std::size_t>(v.p), 0);
  RuleRun run;
  run.orders.resize(static_cast<std::size_t>(v.p));
  auto departure = departures.cbegin();
  using WakeUp = std::pair<std::int64_t, int>;
  std::priority_queue<WakeUp, std::vector<WakeUp>, std::greater<>> wake_ups;
  for (int d = 0; d < v.p; ++d) wake_ups.emplace(0, d);
  std::size_t remaining = 3 * static_cast<std::size_t>(v.k) * st.m;
  while (remaining > 0 && !wake_ups.empty()) {
    const auto [t, d] = wake_ups.top();
    wake_ups.pop();
    ++run.wake_ups;
    const auto dev = static_cast<std::size_t>(d);
    if (free_at[dev] > t) continue;
    std::array<VChoice, 7> choices{};
    const std::size_t count = v_choices(v, st, d, t, first_stage_forwards, choices);
    if (count == 0) continue;
    const VChoice chosen = choices[take_choice(run, count, departures, departure)];
    if (chosen.stage < 0) continue;  // waits: a result on its way wakes it
    const int s = chosen.stage;
    const auto u = static_cast<std::size_t>(s);
    const StageTimes& cost = v.times[u];
    std::int64_t end = 0;
    if (chosen.kind == ActionKind::kBackwardInput) {
      const int b = st.ni[u]++;
      end = t + cost.input_grad;
      run.orders[dev].push_back(input_grad(s, b));
      if (s > 0) {
        st.i_arrives[st.at(s, b)] = end + v.hop(s, s - 1);
        wake_ups.emplace(st.i_arrives[st.at(s, b)], v.device(s - 1));
      }
    } else if (chosen.kind == ActionKind::kForward) {
      const int b = st.nf[u]++;
      end = t + cost.forward;
      st.f_done[st.at(s, b)] = end;
      run.orders[dev].push_back(forward(s, b));
      if (s + 1 < v.k) {
        st.f_arrives[st.at(s, b)] = end + v.hop(s, s + 1);
        wake_ups.emplace(st.f_arrives[st.at(s, b)], v.device(s + 1));
      }
    } else {
      end = t + cost.weight_grad;
      run.orders[dev].push_back(weight_grad(s, st.nw[u]++));
    }
    free_at[dev] = end;
    wake_ups.emplace(end, d);
    --remaining;
  }
  run.complete = remaining == 0;
  return run;
}

// The end of the last action when each device runs its program as early as its dependencies
// allow, a hand-off between stages on different devices: what the simulator times.
std::int64_t v_replayed_end(const VTimed& v, const std::vector<Program>& programs) {
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  const auto m = static_cast<std::size_t>(v.m);
  std::vector<std::int64_t> f_end(static_cast<std::size_t>(v.k) * m, kNever), i_end = f_end;
  std::vector<std::size_t> next(programs.size(), 0);
  std::vector<std::int64_t> free_at(programs.size(), 0);
  const auto at = [&](int s, int b) { return static_cast<std::size_t>(s) * m + static_cast<std::size_t>(b); };
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t d = 0; d < programs.size(); ++d) {
      for (; next[d] < programs[d].size(); ++next[d]) {
        const Action& a = programs[d][next[d]];
        const int s = a.stage, b = a.microbatch;
        const StageTimes& cost = v.times[static_cast<std::size_t>(s)];
        std::int64_t ready = free_at[d], took = cost.weight_grad;
        if (a.kind == ActionKind::kForward) {
          if (s > 0 && f_end[at(s - 1, b)] == kNever) break;
          if (s > 0) ready = std::max(ready, f_end[at(s - 1, b)] + v.hop(s - 1, s));
          took = cost.forward;
        } else if (a.kind == ActionKind::kBackwardInput) {
          if (f_end[at(s, b)] == kNever || (s + 1 < v.k && i_end[at(s + 1, b)] == kNever)) break;
          ready = std::max(ready, f_end[at(s, b)]);
          if (s + 1 < v.k) ready = std::max(ready, i_end[at(s + 1, b)] + v.hop(s + 1, s));
          took = cost.input_grad;
        } else {
          if (i_end[at(s, b)] == kNever) break;
          ready = std::max(ready, i_end[at(s, b)]);
        }
        free_at[d] = ready + took;
        if (a.kind == ActionKind::kForward) f_end[at(s, b)] = free_at[d];
        if (a.kind == ActionKind::kBackwardInput) i_end[at(s, b)] = free_at[d];
        progress = true;
      }
    }
  }
  for (std::size_t d = 0; d < programs.size(); ++d) {
    if (next[d] < programs[d].size()) return std::numeric_limits<std::int64_t>::max();  // stuck
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

// No order in the V ends sooner: device r starts after the forwards of stages 0 to r-1, each on
// its own device and handed off, and then runs its two stages' M(F+I+W) (zb_v_device_bound).
std::int64_t v_floor(const VTimed& v) {
  std::int64_t floor = 0, start = 0;
  for (int r = 0; r < v.p; ++r) {
    const StageTimes& a = v.times[static_cast<std::size_t>(r)];
    const StageTimes& b = v.times[static_cast<std::size_t>(v.k - 1 - r)];
    floor = std::max(floor, start + v.m * (a.forward + a.input_grad + a.weight_grad + b.forward + b.input_grad +
                                           b.weight_grad));
    start += a.forward + v.handoff;
  }
  return floor;
}

// The best of torch's order (`fixed`) and the V rule's orders found by departure_search, from the
// rule with either stage's forwards first; ties keep torch's order.
std::vector<Program> zb_v_timed_programs(const VTimed& v, std::vector<Program> fixed, std::int64_t budget) {
  const std::int64_t fixed_end = v_replayed_end(v, fixed);
  const DepartureRule rule{
      [&](bool first_forwards, const Departures& departures) { return v_rule(v, first_forwards, departures); },
      [&](const std::vector<Program>& programs) { return v_replayed_end(v, programs); }, v_floor(v), budget};
  return departure_search(rule, std::move(fixed), fixed_end, {}, 0, {true, false});
}

}  // namespace

Result<Schedule> zb_v_timed(const ScheduleShape& shape, const std::vector<StageTimes>& times, std::int64_t handoff,
                            std::int64_t search_wake_ups) {
  auto fixed = zb_v(shape);
  if (!fixed) return fixed.error();
  if (auto ok = check_stage_times("zb-v", shape, times, handoff); !ok) return ok.error();
  if (unit_like(times, handoff)) return fixed;
  const VTimed v{shape.num_stages / 2, shape.num_stages, shape.num_microbatches, times, handoff};
  fixed->programs = zb_v_timed_programs(v, std::move(fixed->programs), search_wake_ups);
  return fixed;
}

}  // namespace pipeworks::sched
