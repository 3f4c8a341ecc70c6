// ZB-H1, ZB-H2, ZB-V and DualPipeV orders (see zero_bubble.h).
#include "sched/zero_bubble.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "sched/composite.h"
#include "sched/generators.h"
#include "sched/limits.h"
#include "sched/placement.h"

namespace pipeworks::sched {
namespace {

constexpr Action forward(int stage, int m) { return {stage, ActionKind::kForward, m}; }
constexpr Action input_grad(int stage, int m) { return {stage, ActionKind::kBackwardInput, m}; }
constexpr Action weight_grad(int stage, int m) { return {stage, ActionKind::kBackwardWeight, m}; }
constexpr Action full_backward(int stage, int m) { return {stage, ActionKind::kBackward, m}; }

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

// Departures from the rule, by decision (the decisions where a stage had more than one choice,
// counted in the order the rule makes them): (decision, index into that decision's choices),
// sorted by decision. Empty: the rule itself.
using Departures = std::vector<std::pair<std::size_t, std::uint8_t>>;

// One run of the list rule: the stage orders, how many choices each decision had, and the
// wake-ups it handled (the search's measure of work).
struct RuleRun {
  std::vector<Program> orders;
  std::vector<std::uint8_t> choices;
  std::int64_t wake_ups = 0;
  bool complete = false;
};

// Which of a decision's `count` choices a run takes: the first, unless the next of `departures`
// names this decision (the next in `run.choices`, counted only where there is a choice).
std::size_t take_choice(RuleRun& run, std::size_t count, const Departures& departures,
                        Departures::const_iterator& departure) {
  if (count < 2) return 0;
  const std::size_t decision = run.choices.size();
  run.choices.push_back(static_cast<std::uint8_t>(count));
  if (departure == departures.end() || departure->first != decision) return 0;
  return std::min<std::size_t>((departure++)->second, count - 1);
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
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  const auto k = static_cast<std::size_t>(num_stages);
  const auto m = static_cast<std::size_t>(num_microbatches);
  const int limit = 2 * num_stages - 1;
  std::vector<std::int64_t> f_done(k * m, kNever);  // [s * m + micro-batch], on its own stage
  std::vector<std::int64_t> f_arrives = f_done;     // at the next stage
  std::vector<std::int64_t> i_arrives = f_done;     // at the previous stage
  std::vector<int> nf(k, 0), ni(k, 0), nw(k, 0);
  std::vector<std::int64_t> free_at(k, 0);
  RuleRun run;
  run.orders.resize(k);
  auto departure = departures.cbegin();
  using WakeUp = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<WakeUp, std::vector<WakeUp>, std::greater<>> wake_ups;
  for (std::size_t s = 0; s < k; ++s) wake_ups.emplace(0, s);
  std::size_t remaining = 3 * k * m;
  while (remaining > 0 && !wake_ups.empty()) {
    const auto [t, s] = wake_ups.top();
    wake_ups.pop();
    ++run.wake_ups;
    if (free_at[s] > t) continue;  // busy: its own end wakes it
    const auto i = static_cast<std::size_t>(ni[s]);
    const auto f = static_cast<std::size_t>(nf[s]);
    const bool can_i = ni[s] < num_microbatches && f_done[s * m + i] <= t && (s + 1 == k || i_arrives[(s + 1) * m + i] <= t);
    const bool may_f = nf[s] < num_microbatches && nf[s] - nw[s] < limit;
    const std::int64_t next_f = may_f && s > 0 ? f_arrives[(s - 1) * m + f] : kNever;  // when it can run
    const bool can_f = may_f && (s == 0 || next_f <= t);
    const bool i_waits = ni[s] < num_microbatches && s + 1 < k && f_done[s * m + i] <= t;
    const std::int64_t next_i = i_waits ? i_arrives[(s + 1) * m + i] : kNever;  // when it can run
    const bool result_coming = (next_f != kNever && next_f > t) || (next_i != kNever && next_i > t);
    const StageTimes& cost = times[s];
    std::array<Choice, 4> choices{};
    std::size_t count = 0;
    if (can_i) choices[count++] = Choice::kInput;
    if (can_f) choices[count++] = Choice::kForward;
    if (nw[s] < ni[s]) {
      const bool wait = leave_w_for_results && waits_for_result(t, cost.weight_grad, handoff, next_f, next_i,
                                                                ni[s] + 1 == num_microbatches);
      if (wait) choices[count++] = Choice::kWait;
      choices[count++] = Choice::kWeight;
    }
    if (count > 0 && result_coming && std::find(choices.begin(), choices.begin() + count, Choice::kWait) ==
                                          choices.begin() + count) {
      choices[count++] = Choice::kWait;  // the rule's last choice: hold a ready action for a result on its way
    }
    if (count == 0) continue;  // nothing to do until a neighbour's result arrives (it wakes this stage)
    const std::size_t pick = take_choice(run, count, departures, departure);
    const int stage = static_cast<int>(s);
    std::int64_t end = 0;
    switch (choices[pick]) {
      case Choice::kInput:
        end = t + cost.input_grad;
        i_arrives[s * m + i] = end + handoff;
        run.orders[s].push_back(input_grad(stage, ni[s]++));
        if (s > 0) wake_ups.emplace(end + handoff, s - 1);
        break;
      case Choice::kForward:
        end = t + cost.forward;
        f_done[s * m + f] = end;
        f_arrives[s * m + f] = end + handoff;
        if (s + 1 < k) wake_ups.emplace(end + handoff, s + 1);
        run.orders[s].push_back(forward(stage, nf[s]++));
        break;
      case Choice::kWeight:
        end = t + cost.weight_grad;
        run.orders[s].push_back(weight_grad(stage, nw[s]++));
        break;
      case Choice::kWait: continue;  // a result on its way wakes it
    }
    free_at[s] = end;
    wake_ups.emplace(end, s);
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

// How many of the best orders found at one depth the search departs from once more.
constexpr std::size_t kSearchBeam = 64;
// How many departures an order may have.
constexpr int kSearchDepth = 3;

// The ZB-H2 orders on these times: the rule's, unless an order within kSearchDepth departures
// from it (or from the rule that never leaves a W for a result) ends sooner. A limited-discrepancy
// search with a beam: every single departure from both rules, then one more departure, after the
// last, from each of the kSearchBeam best orders of the previous depth, stopping at zb_h2_floor or
// after `budget` wake-ups of the rule. Orders are compared on replayed_end; ties keep the earlier found, so the
// rule's order stands unless beaten. Alike stages with F = I = W and no hand-off skip the search:
// the rule's order is then ZB-H2's unit-time order, a parallelogram on the bound from M = 2K-1.
Result<std::vector<Program>> zb_h2_stage_orders(int num_stages, int num_microbatches,
                                                 const std::vector<StageTimes>& times, std::int64_t handoff,
                                                 std::int64_t budget) {
  RuleRun rule = zb_h2_rule(num_stages, num_microbatches, times, handoff, true, {});
  if (!rule.complete) return Error{"zb-h2: the list schedule stopped with actions left"};
  const bool unit_like = handoff == 0 && std::all_of(times.begin(), times.end(), [&](const StageTimes& t) {
    return t.forward == times[0].forward && t.input_grad == t.forward && t.weight_grad == t.forward;
  });
  if (unit_like || num_stages < 2) return std::move(rule.orders);
  const std::int64_t floor = zb_h2_floor(num_microbatches, times, handoff);
  std::int64_t best_end = replayed_end(num_stages, num_microbatches, times, handoff, rule.orders);
  std::vector<Program> best = std::move(rule.orders);
  std::int64_t work = rule.wake_ups;
  struct Start {
    bool leave_w;
    Departures departures;
    std::vector<std::uint8_t> choices;
    std::int64_t end;
  };
  // Runs one order; true once the search should stop (on the floor or out of work).
  const auto try_order = [&](bool leave_w, Departures departures, std::vector<Start>* starts) {
    RuleRun run = zb_h2_rule(num_stages, num_microbatches, times, handoff, leave_w, departures);
    work += run.wake_ups;
    if (run.complete) {
      const std::int64_t end = replayed_end(num_stages, num_microbatches, times, handoff, run.orders);
      if (end < best_end) best_end = end, best = std::move(run.orders);
      if (starts != nullptr) starts->push_back({leave_w, std::move(departures), std::move(run.choices), end});
    }
    return best_end <= floor || work > budget;
  };
  std::vector<Start> frontier = {{true, {}, std::move(rule.choices), best_end}};
  if (best_end <= floor || try_order(false, {}, &frontier)) return best;
  for (int depth = 0; depth < kSearchDepth; ++depth) {
    std::vector<Start> next;
    for (const Start& start : frontier) {
      const std::size_t after = start.departures.empty() ? 0 : start.departures.back().first + 1;
      for (std::size_t d = after; d < start.choices.size(); ++d) {
        for (std::uint8_t c = 1; c < start.choices[d]; ++c) {
          Departures more = start.departures;
          more.emplace_back(d, c);
          if (try_order(start.leave_w, std::move(more), &next)) return best;
        }
      }
    }
    std::stable_sort(next.begin(), next.end(), [](const Start& x, const Start& y) { return x.end < y.end; });
    next.resize(std::min(next.size(), kSearchBeam));
    frontier = std::move(next);
  }
  return best;
}

// Checks an even K and the V placement; returns p.
Result<int> v_devices(const ScheduleShape& shape, std::string_view kind) {
  if (auto size = resolve_placement(ScheduleShape{shape.num_stages, shape.num_microbatches, {}}); !size) {
    return size.error();
  }
  if (shape.num_stages % 2 != 0) {
    return Error{fmt::format("{} places two stages on each device; {} stages is odd", kind, shape.num_stages)};
  }
  const std::vector<int> v = v_placement(shape.num_stages);
  if (!shape.placement.empty() && shape.placement != v) {
    auto problems = placement_problems(shape.placement, shape.num_stages, shape.num_stages / 2);
    if (!problems.empty() && problems.front().rule == PlacementProblem::Rule::kLength) {
      return Error{std::move(problems.front().message)};
    }
    for (std::size_t s = 0; s < v.size(); ++s) {
      if (shape.placement[s] != v[s]) {
        return Error{fmt::format("{} places stages in a V (device r holds stages r and {}-r); the placement puts "
                                 "stage {} on {}, not {}",
                                 kind, shape.num_stages - 1, s, shape.placement[s], v[s])};
      }
    }
  }
  return shape.num_stages / 2;
}

// A V schedule from device programs generated for at least M micro-batches, with the actions of
// micro-batches M and later dropped.
Schedule v_schedule(const ScheduleShape& shape, std::vector<Program> programs) {
  Schedule schedule;
  schedule.num_stages = shape.num_stages;
  schedule.num_microbatches = shape.num_microbatches;
  schedule.placement = v_placement(shape.num_stages);
  for (Program& program : programs) {
    std::erase_if(program, [&](const Action& a) { return a.microbatch >= shape.num_microbatches; });
  }
  schedule.programs = std::move(programs);
  return schedule;
}

// One device's program for its two stages: per stage the next micro-batch to run forward,
// backward and weight-gradient, and (DualPipeV) the W's owed, oldest first.
struct VCounters {
  std::vector<int> next_forward, next_backward, next_weight;  // by stage
  std::deque<Action> owed_weights;
  Program program;
  std::vector<std::pair<Action, Action>> overlapped;  // DualPipeV's F and B run as one overlapped pair

  explicit VCounters(int num_stages)
      : next_forward(static_cast<std::size_t>(num_stages), 0),
        next_backward(next_forward),
        next_weight(next_forward) {}
  int forwards(int stage) const { return next_forward[static_cast<std::size_t>(stage)]; }
  void f(int stage) { program.push_back(forward(stage, next_forward[static_cast<std::size_t>(stage)]++)); }
  void b(int stage) { program.push_back(full_backward(stage, next_backward[static_cast<std::size_t>(stage)]++)); }
  void i(int stage) {
    const int m = next_backward[static_cast<std::size_t>(stage)]++;
    program.push_back(input_grad(stage, m));
    owed_weights.push_back(weight_grad(stage, m));
  }
  // The next W of `stage`, in micro-batch order (ZB-V).
  void w(int stage) { program.push_back(weight_grad(stage, next_weight[static_cast<std::size_t>(stage)]++)); }
  // DualPipeV: the F of `f_stage` overlapped with the B of `b_stage` (torch's OVERLAP_F_B).
  void fb(int f_stage, int b_stage) {
    f(f_stage);
    b(b_stage);
    overlapped.emplace_back(program[program.size() - 2], program.back());
  }
  // The oldest W owed on either stage, if any (DualPipeV).
  void owed_w() {
    if (owed_weights.empty()) return;
    program.push_back(owed_weights.front());
    owed_weights.pop_front();
  }
};

// ScheduleZBVZeroBubble's order for device r of p, with n >= 2p-1 micro-batches.
Program zb_v_program(int p, int n, int r) {
  const int s0 = r, s1 = 2 * p - 1 - r;
  VCounters c(2 * p);
  const auto iw = [&](int stage) { c.i(stage), c.w(stage); };
  for (int j = 0; j < 2 * (p - r) - 1; ++j) c.f(s0);
  for (int j = 0; j < r; ++j) c.f(s1), c.f(s0);
  for (int j = 0; j < p - r; ++j) c.f(s1), iw(s1);
  while (c.forwards(s1) < c.forwards(s0) || c.forwards(s0) < n) {
    if (c.forwards(s0) < n) c.f(s0);
    iw(s0);
    c.f(s1), iw(s1);
  }
  for (int j = 0; j < r; ++j) c.i(s0), c.i(s1);
  for (int j = 0; j < p - r; ++j) c.i(s0), c.w(s0);
  while (c.next_weight[static_cast<std::size_t>(s1)] < n) c.w(s1);
  while (c.next_weight[static_cast<std::size_t>(s0)] < n) c.w(s0);
  return c.program;
}

// ScheduleDualPipeV's order for device r of p, with n >= 2p micro-batches; an overlapped F+B
// pair is the F then the B, each pair kept in `overlapped`.
Program dualpipe_v_program(int p, int n, int r, std::vector<std::pair<Action, Action>>& overlapped) {
  const int s0 = r, s1 = 2 * p - 1 - r;
  VCounters c(2 * p);
  for (int j = 0; j < 2 * (p - r - 1); ++j) c.f(s0);
  for (int j = 0; j < r + 1; ++j) c.f(s0), c.f(s1);
  for (int j = 0; j < p - r - 1; ++j) c.i(s1), c.owed_w(), c.f(s1);
  for (int j = 0; j < n - 2 * p + r + 1; ++j) {
    // DualPipe's step 4 does not overlap the last device's first pair, to shrink the bubble.
    if (j == 0 && r == p - 1) c.f(s0), c.b(s1);
    else c.fb(s0, s1);
    c.fb(s1, s0);
  }
  for (int j = 0; j < p - r - 1; ++j) c.b(s1), c.fb(s1, s0);
  bool split = false;
  const auto backward = [&](int stage) { split ? c.i(stage) : c.b(stage); };
  for (int j = 0; j < r + 1; ++j) {
    if (j == (r + 1) / 2 && r % 2 == 1) split = true;
    backward(s1);
    if (j == (r + 1) / 2 && r % 2 == 0) split = true;
    backward(s0);
  }
  for (int j = 0; j < p - r - 1; ++j) c.owed_w(), backward(s0);
  while (!c.owed_weights.empty()) c.owed_w();
  overlapped.insert(overlapped.end(), c.overlapped.begin(), c.overlapped.end());
  return c.program;
}

// Marks each overlapped pair whose two actions the schedule kept, side by side, as a composite.
void mark_overlapped(Schedule& schedule, const std::vector<std::pair<Action, Action>>& overlapped) {
  std::set<std::pair<Action, Action>> pairs(overlapped.begin(), overlapped.end());
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const Program& program = schedule.programs[d];
    for (std::size_t p = 0; p + 1 < program.size(); ++p) {
      if (!pairs.contains({program[p], program[p + 1]})) continue;
      schedule.composites.push_back(Composite{static_cast<int>(d), static_cast<int>(p)});
      ++p;
    }
  }
}

// The V kinds generate every device's program for n >= M micro-batches (torch's orders assume
// n >= 2p - 1 or 2p) and drop the rest, so K x n cells are built whatever M is; an error when
// that is beyond the largest supported schedule.
Status check_v_work(std::string_view kind, int num_stages, int n) {
  const std::int64_t cells = std::int64_t{num_stages} * n;
  if (cells <= kMaxScheduleCells) return Ok{};
  return Error{fmt::format("{} builds its V for at least {} micro-batches whatever M is: {} stages x {} = {} cells, "
                           "beyond the largest supported schedule ({} cells)",
                           kind, n, num_stages, n, cells, kMaxScheduleCells)};
}

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

// The best of torch's order (`fixed`) and the V rule's orders found by the search: the same
// limited-discrepancy search as zb_h2_stage_orders, from the rule with either stage's forwards
// first; ties keep torch's order.
std::vector<Program> zb_v_timed_programs(const VTimed& v, std::vector<Program> fixed, std::int64_t budget) {
  std::int64_t best_end = v_replayed_end(v, fixed);
  std::vector<Program> best = std::move(fixed);
  const std::int64_t floor = v_floor(v);
  std::int64_t work = 0;
  struct Start {
    bool first_stage_forwards;
    Departures departures;
    std::vector<std::uint8_t> choices;
    std::int64_t end;
  };
  const auto try_order = [&](bool first_forwards, Departures departures, std::vector<Start>* starts) {
    RuleRun run = v_rule(v, first_forwards, departures);
    work += run.wake_ups;
    if (run.complete) {
      const std::int64_t end = v_replayed_end(v, run.orders);
      if (end < best_end) best_end = end, best = std::move(run.orders);
      if (starts != nullptr) starts->push_back({first_forwards, std::move(departures), std::move(run.choices), end});
    }
    return best_end <= floor || work > budget;
  };
  std::vector<Start> frontier;
  if (best_end <= floor || try_order(true, {}, &frontier) || try_order(false, {}, &frontier)) return best;
  for (int depth = 0; depth < kSearchDepth; ++depth) {
    std::vector<Start> next;
    for (const Start& start : frontier) {
      const std::size_t after = start.departures.empty() ? 0 : start.departures.back().first + 1;
      for (std::size_t d = after; d < start.choices.size(); ++d) {
        for (std::uint8_t c = 1; c < start.choices[d]; ++c) {
          Departures more = start.departures;
          more.emplace_back(d, c);
          if (try_order(start.first_stage_forwards, std::move(more), &next)) return best;
        }
      }
    }
    std::stable_sort(next.begin(), next.end(), [](const Start& x, const Start& y) { return x.end < y.end; });
    next.resize(std::min(next.size(), kSearchBeam));
    frontier = std::move(next);
  }
  return best;
}

// Ok when there is one entry of times per stage, each from 1 to kMaxStageTime, and the hand-off
// from 0 to kMaxStageTime; else an error naming `kind`.
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

}  // namespace

std::vector<int> v_placement(int num_stages) {
  std::vector<int> placement(static_cast<std::size_t>(std::max(num_stages, 0)));
  for (int s = 0; s < num_stages; ++s) placement[static_cast<std::size_t>(s)] = std::min(s, num_stages - 1 - s);
  return placement;
}

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

Result<Schedule> zb_v(const ScheduleShape& shape) {
  auto p = v_devices(shape, "zb-v");
  if (!p) return p.error();
  const int n = std::max(shape.num_microbatches, 2 * *p - 1);
  if (auto work = check_v_work("zb-v", shape.num_stages, n); !work) return work.error();
  std::vector<Program> programs;
  for (int r = 0; r < *p; ++r) programs.push_back(zb_v_program(*p, n, r));
  return v_schedule(shape, std::move(programs));
}

Result<Schedule> zb_v_timed(const ScheduleShape& shape, const std::vector<StageTimes>& times, std::int64_t handoff,
                            std::int64_t search_wake_ups) {
  auto fixed = zb_v(shape);
  if (!fixed) return fixed.error();
  if (auto ok = check_stage_times("zb-v", shape, times, handoff); !ok) return ok.error();
  const bool unit_like = handoff == 0 && std::all_of(times.begin(), times.end(), [&](const StageTimes& t) {
    return t.forward == times[0].forward && t.input_grad == t.forward && t.weight_grad == t.forward;
  });
  if (unit_like) return fixed;
  const VTimed v{shape.num_stages / 2, shape.num_stages, shape.num_microbatches, times, handoff};
  fixed->programs = zb_v_timed_programs(v, std::move(fixed->programs), search_wake_ups);
  return fixed;
}

Result<Schedule> dualpipe_v(const ScheduleShape& shape) {
  auto p = v_devices(shape, "dualpipe-v");
  if (!p) return p.error();
  const int n = std::max(shape.num_microbatches, 2 * *p);
  if (auto work = check_v_work("dualpipe-v", shape.num_stages, n); !work) return work.error();
  std::vector<Program> programs;
  std::vector<std::pair<Action, Action>> overlapped;
  for (int r = 0; r < *p; ++r) programs.push_back(dualpipe_v_program(*p, n, r, overlapped));
  Schedule schedule = v_schedule(shape, std::move(programs));
  mark_overlapped(schedule, overlapped);
  return schedule;
}

}  // namespace pipeworks::sched
