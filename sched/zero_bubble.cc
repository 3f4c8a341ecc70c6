// ZB-H1 and ZB-H2 orders (see zero_bubble.h), and what the zero-bubble files share; the V kinds
// are in v_schedules.cc, ZB-V on real times in zb_v_timed.cc.
#include "sched/zero_bubble.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "sched/departure_search.h"
#include "sched/generators.h"
#include "sched/zero_bubble_internal.h"

namespace pipeworks::sched {

namespace detail {

Status check_stage_times(const char* kind, const ScheduleShape& shape, const std::vector<StageTimes>& times,
                         std::int64_t handoff) {
  if (static_cast<int>(times.size()) != shape.num_stages) {
    return Error{fmt::format("{}: {} stage times for {} stages", kind, times.size(), shape.num_stages)};
  }
  for (std::size_t s = 0; s < times.size(); ++s) {
    const StageTimes& t = times[s];
    for (const std::int64_t d : {t.forward, t.input_grad, t.weight_grad}) {
      if (d < 1 || d > kMaxStageTime) {
        return Error{fmt::format("{}: stage {}: times must be from 1 to {}, got {}", kind, s, kMaxStageTime, d)};
      }
    }
  }
  if (handoff < 0 || handoff > kMaxStageTime) {
    return Error{fmt::format("{}: the hand-off must be from 0 to {}, got {}", kind, kMaxStageTime, handoff)};
  }
  return Ok{};
}

bool unit_like(const std::vector<StageTimes>& times, std::int64_t handoff) {
  return handoff == 0 && std::all_of(times.begin(), times.end(), [&](const StageTimes& t) {
    return t.forward == times[0].forward && t.input_grad == t.forward && t.weight_grad == t.forward;
  });
}

}  // namespace detail

namespace {

using detail::check_stage_times;
using detail::departure_search;
using detail::DepartureRule;
using detail::Departures;
using detail::forward;
using detail::input_grad;
using detail::RuleRun;
using detail::SearchStart;
using detail::take_choice;
using detail::unit_like;
using detail::weight_grad;

// Stage s of K: 1F1B's warm-up, then F, I pairs; W's lag s pairs behind their I's.
Program zb_h1_stage_order(int num_stages, int num_microbatches, int stage) {
  Program order;
  const int warmup = std::min(num_stages - 1 - stage, num_microbatches);
  int backwards = 0, weights = 0;
  const auto backward = [&] {
    order.push_back(input_grad(stage, backwards++));
    if (backwards > stage) order.push_back(weight_grad(stage, weights++));
  };
  for (int m = 0; m < warmup; ++m) order.push_back(forward(stage, m));
  for (int m = warmup; m < num_microbatches; ++m) {
    order.push_back(forward(stage, m));
    backward();
  }
  while (backwards < num_microbatches) backward();
  while (weights < num_microbatches) order.push_back(weight_grad(stage, weights++));
  return order;
}

// Whether a free stage with a W pending leaves it for a result already on its way: a W started
// now would hold up a result that arrives before the W ends. It waits for its next F or I while
// that is on the link (arrives within the hand-off: the neighbour ended it, the stage would not
// have waited had the hand-off been 0), and for its last micro-batch's I whenever it arrives
// before the W would end, since that I's chain up to stage 0 decides the makespan. In unit time
// without a hand-off every result arrives on a whole step, so no stage waits and the order is
// the plain rule's (the pictures in zero_bubble.h). The arrivals are kNever where not yet known.
bool waits_for_result(std::int64_t t, std::int64_t w_time, std::int64_t handoff, std::int64_t f_arrives,
                      std::int64_t i_arrives, bool last_i) {
  const bool f_on_link = t < f_arrives && f_arrives - t <= handoff;
  const bool i_before_w_ends = t < i_arrives && i_arrives - t < w_time;
  return f_on_link || (i_before_w_ends && (i_arrives - t <= handoff || last_i));
}

// What a free stage may do at a decision: run its next I, its next F, its oldest W, or wait for a
// result on its way.
enum class Choice : std::uint8_t { kInput, kForward, kWeight, kWait };

// What the ZB-H2 rule knows as it runs: per stage the next F, I and W and when it is free; per
// stage and micro-batch when its F ended and when its F and I reach the neighbouring stage (kNever
// where not yet known).
struct H2State {
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  std::size_t k, m;
  int limit;  // micro-batches in flight on a stage: F run, W not yet
  std::vector<std::int64_t> f_done, f_arrives, i_arrives;  // [s * m + micro-batch]
  std::vector<int> nf, ni, nw;
  std::vector<std::int64_t> free_at;
  H2State(int stages, int microbatches)
      : k(static_cast<std::size_t>(stages)),
        m(static_cast<std::size_t>(microbatches)),
        limit(2 * stages - 1),
        f_done(k * m, kNever),
        f_arrives(f_done),
        i_arrives(f_done),
        nf(k, 0),
        ni(nf),
        nw(nf),
        free_at(k, 0) {}
};

// Stage s's choices at t in the rule's preference (zb_h2_rule); none where it has nothing to do.
std::size_t h2_choices(const H2State& st, std::size_t s, std::int64_t t, std::int64_t w_time, std::int64_t handoff,
                       bool leave_w_for_results, std::array<Choice, 4>& choices) {
  constexpr std::int64_t kNever = H2State::kNever;
  const std::size_t k = st.k, m = st.m;
  const auto num_microbatches = static_cast<int>(m);
  const auto i = static_cast<std::size_t>(st.ni[s]);
  const auto f = static_cast<std::size_t>(st.nf[s]);
  const bool i_left = st.ni[s] < num_microbatches;
  const bool can_i = i_left && st.f_done[s * m + i] <= t && (s + 1 == k || st.i_arrives[(s + 1) * m + i] <= t);
  const bool may_f = st.nf[s] < num_microbatches && st.nf[s] - st.nw[s] < st.limit;
  const std::int64_t next_f = may_f && s > 0 ? st.f_arrives[(s - 1) * m + f] : kNever;  // when it can run
  const bool can_f = may_f && (s == 0 || next_f <= t);
  const bool i_waits = i_left && s + 1 < k && st.f_done[s * m + i] <= t;
  const std::int64_t next_i = i_waits ? st.i_arrives[(s + 1) * m + i] : kNever;  // when it can run
  const bool result_coming = (next_f != kNever && next_f > t) || (next_i != kNever && next_i > t);
  std::size_t count = 0;
  bool wait_listed = false;
  if (can_i) choices[count++] = Choice::kInput;
  if (can_f) choices[count++] = Choice::kForward;
  if (st.nw[s] < st.ni[s]) {
    wait_listed = leave_w_for_results &&
                  waits_for_result(t, w_time, handoff, next_f, next_i, st.ni[s] + 1 == num_microbatches);
    if (wait_listed) choices[count++] = Choice::kWait;
    choices[count++] = Choice::kWeight;
  }
  if (count > 0 && result_coming && !wait_listed) {
    choices[count++] = Choice::kWait;  // the rule's last choice: hold a ready action for a result on its way
  }
  return count;
}

using H2WakeUp = std::pair<std::int64_t, std::size_t>;
using H2WakeUps = std::priority_queue<H2WakeUp, std::vector<H2WakeUp>, std::greater<>>;

// Runs stage s's next action of `kind` (not a wait) from t: records it in the stage's order, when
// its result reaches the neighbour (whom that wakes) and when the stage is free again (which wakes it).
void h2_take(H2State& st, Choice kind, std::size_t s, std::int64_t t, const StageTimes& cost, std::int64_t handoff,
             RuleRun& run, H2WakeUps& wake_ups) {
  const std::size_t m = st.m;
  const int stage = static_cast<int>(s);
  std::int64_t end = 0;
  if (kind == Choice::kInput) {
    end = t + cost.input_grad;
    st.i_arrives[s * m + static_cast<std::size_t>(st.ni[s])] = end + handoff;
    run.orders[s].push_back(input_grad(stage, st.ni[s]++));
    if (s > 0) wake_ups.emplace(end + handoff, s - 1);
  } else if (kind == Choice::kForward) {
    end = t + cost.forward;
    const std::size_t at = s * m + static_cast<std::size_t>(st.nf[s]);
    st.f_done[at] = end;
    st.f_arrives[at] = end + handoff;
    if (s + 1 < st.k) wake_ups.emplace(end + handoff, s + 1);
    run.orders[s].push_back(forward(stage, st.nf[s]++));
  } else {
    end = t + cost.weight_grad;
    run.orders[s].push_back(weight_grad(stage, st.nw[s]++));
  }
  st.free_at[s] = end;
  wake_ups.emplace(end, s);
}

// The ZB-H2 list schedule: whenever a stage is free, it runs its next I if ready, else its next F
// if ready and under the in-flight limit, else its oldest pending W unless `leave_w_for_results`
// and waits_for_result (zero_bubble.h), each taking its stage's time; a result reaches the
// neighbouring stage `handoff` after its action ends. A stage decides only at the times something
// changes for it (its own action ends, a neighbour's result arrives), kept in a queue of wake-ups:
// time proportional to the 3KM actions. Actions take at least one tick, so decisions at one time
// never see each other's results. At a decision the choices are listed in the rule's preference
// (a ready I, a ready F, then the W or the wait in the order the rule ranks them; a wait only
// while a result is on its way, last unless the rule waits) and `departures` picks another than the first.
RuleRun zb_h2_rule(int num_stages, int num_microbatches, const std::vector<StageTimes>& times, std::int64_t handoff,
                   bool leave_w_for_results, const Departures& departures) {
  H2State st(num_stages, num_microbatches);
  RuleRun run;
  run.orders.resize(st.k);
  auto departure = departures.cbegin();
  H2WakeUps wake_ups;
  for (std::size_t s = 0; s < st.k; ++s) wake_ups.emplace(0, s);
  std::size_t remaining = 3 * st.k * st.m;
  while (remaining > 0 && !wake_ups.empty()) {
    const auto [t, s] = wake_ups.top();
    wake_ups.pop();
    ++run.wake_ups;
    if (st.free_at[s] > t) continue;  // busy: its own end wakes it
    std::array<Choice, 4> choices{};
    const std::size_t count = h2_choices(st, s, t, times[s].weight_grad, handoff, leave_w_for_results, choices);
    if (count == 0) continue;  // nothing to do until a neighbour's result arrives (it wakes this stage)
    const Choice chosen = choices[take_choice(run, count, departures, departure)];
    if (chosen == Choice::kWait) continue;  // a result on its way wakes it
    h2_take(st, chosen, s, t, times[s], handoff, run, wake_ups);
    --remaining;
  }
  run.complete = remaining == 0;
  return run;
}

// The end of the last action when each stage runs its order as early as its dependencies allow
// (an F after the previous stage's F and the hand-off, an I after its own F and the next stage's I
// and the hand-off, a W after its I): what the simulator times, one stage a device. The rule's
// own clock can be later where a departure waited with an action ready.
std::int64_t replayed_end(int num_stages, int num_microbatches, const std::vector<StageTimes>& times,
                          std::int64_t handoff, const std::vector<Program>& orders) {
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  const auto k = static_cast<std::size_t>(num_stages);
  const auto m = static_cast<std::size_t>(num_microbatches);
  std::vector<std::int64_t> f_end(k * m, kNever), i_end(k * m, kNever);
  std::vector<std::size_t> next(k, 0);
  std::vector<std::int64_t> free_at(k, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t s = 0; s < k; ++s) {
      for (; next[s] < orders[s].size(); ++next[s]) {
        const Action& a = orders[s][next[s]];
        const auto b = static_cast<std::size_t>(a.microbatch);
        std::int64_t ready = free_at[s];
        std::int64_t took = 0;
        if (a.kind == ActionKind::kForward) {
          if (s > 0 && f_end[(s - 1) * m + b] == kNever) break;
          if (s > 0) ready = std::max(ready, f_end[(s - 1) * m + b] + handoff);
          took = times[s].forward;
        } else if (a.kind == ActionKind::kBackwardInput) {
          if (f_end[s * m + b] == kNever || (s + 1 < k && i_end[(s + 1) * m + b] == kNever)) break;
          ready = std::max(ready, f_end[s * m + b]);
          if (s + 1 < k) ready = std::max(ready, i_end[(s + 1) * m + b] + handoff);
          took = times[s].input_grad;
        } else {
          if (i_end[s * m + b] == kNever) break;
          ready = std::max(ready, i_end[s * m + b]);
          took = times[s].weight_grad;
        }
        free_at[s] = ready + took;
        if (a.kind == ActionKind::kForward) f_end[s * m + b] = free_at[s];
        if (a.kind == ActionKind::kBackwardInput) i_end[s * m + b] = free_at[s];
        progress = true;
      }
    }
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

// No order of ZB-H2's actions ends sooner: every stage s starts after the forwards of the stages
// before it and their hand-offs, then runs its M(F+I+W); on alike stages the in-flight limit adds
// (K-1) max(0, I+c-2W) once M >= 2K-1 (sim/engine/closed_form_makespan.h).
std::int64_t zb_h2_floor(int num_microbatches, const std::vector<StageTimes>& times, std::int64_t handoff) {
  std::int64_t floor = 0, start = 0;
  for (const StageTimes& t : times) {
    floor = std::max(floor, start + num_microbatches * (t.forward + t.input_grad + t.weight_grad));
    start += t.forward + handoff;
  }
  const auto k = static_cast<std::int64_t>(times.size());
  const bool alike = std::all_of(times.begin(), times.end(), [&](const StageTimes& t) {
    return t.forward == times[0].forward && t.input_grad == times[0].input_grad && t.weight_grad == times[0].weight_grad;
  });
  if (alike && num_microbatches >= 2 * k - 1) {
    floor += (k - 1) * std::max<std::int64_t>(0, times[0].input_grad + handoff - 2 * times[0].weight_grad);
  }
  return floor;
}

// The ZB-H2 orders on these times: the rule's, unless an order within kSearchDepth departures
// from it (or from the rule that never leaves a W for a result) ends sooner: departure_search from
// both rules, stopping at zb_h2_floor or after `budget` wake-ups of the rule. Orders are compared on
// replayed_end; ties keep the earlier found, so the rule's order stands unless beaten. Alike stages
// with F = I = W and no hand-off skip the search: the rule's order is then ZB-H2's unit-time order,
// a parallelogram on the bound from M = 2K-1.
Result<std::vector<Program>> zb_h2_stage_orders(int num_stages, int num_microbatches,
                                                 const std::vector<StageTimes>& times, std::int64_t handoff,
                                                 std::int64_t budget) {
  RuleRun rule = zb_h2_rule(num_stages, num_microbatches, times, handoff, true, {});
  if (!rule.complete) return Error{"zb-h2: the list schedule stopped with actions left"};
  if (unit_like(times, handoff) || num_stages < 2) return std::move(rule.orders);
  const std::int64_t rule_end = replayed_end(num_stages, num_microbatches, times, handoff, rule.orders);
  const DepartureRule search{
      [&](bool leave_w, const Departures& departures) {
        return zb_h2_rule(num_stages, num_microbatches, times, handoff, leave_w, departures);
      },
      [&](const std::vector<Program>& orders) {
        return replayed_end(num_stages, num_microbatches, times, handoff, orders);
      },
      zb_h2_floor(num_microbatches, times, handoff), budget};
  std::vector<SearchStart> frontier = {{true, {}, std::move(rule.choices), rule_end}};
  return departure_search(search, std::move(rule.orders), rule_end, std::move(frontier), rule.wake_ups, {false});
}

}  // namespace

Result<Schedule> zb_h1(const ScheduleShape& shape) {
  auto placement = resolve_placement(shape);
  if (!placement) return placement.error();
  std::vector<Program> orders;
  for (int s = 0; s < shape.num_stages; ++s) {
    orders.push_back(zb_h1_stage_order(shape.num_stages, shape.num_microbatches, s));
  }
  return merge_stage_orders(shape.num_stages, shape.num_microbatches, *placement, orders);
}

Result<Schedule> zb_h2(const ScheduleShape& shape) {
  return zb_h2_timed(shape, std::vector<StageTimes>(static_cast<std::size_t>(std::max(shape.num_stages, 0))), 0);
}

Result<Schedule> zb_h2_timed(const ScheduleShape& shape, const std::vector<StageTimes>& times, std::int64_t handoff,
                             std::int64_t search_wake_ups) {
  auto placement = resolve_placement(shape);
  if (!placement) return placement.error();
  if (auto ok = check_stage_times("zb-h2", shape, times, handoff); !ok) return ok.error();
  auto orders = zb_h2_stage_orders(shape.num_stages, shape.num_microbatches, times, handoff, search_wake_ups);
  if (!orders) return orders.error();
  return merge_stage_orders(shape.num_stages, shape.num_microbatches, *placement, *orders);
}

}  // namespace pipeworks::sched
