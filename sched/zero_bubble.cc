// ZB-H1, ZB-H2, ZB-V and DualPipeV orders (see zero_bubble.h).
#include "sched/zero_bubble.h"

#include <algorithm>
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

// The ZB-H2 list schedule: whenever a stage is free, it runs its next I if ready, else its next F
// if ready and under the in-flight limit, else its oldest pending W unless waits_for_result
// (zero_bubble.h), each taking its stage's time; a result reaches the neighbouring stage
// `handoff` after its action ends. A stage decides only at the times something changes for it
// (its own action ends, a neighbour's result arrives), kept in a queue of wake-ups: time
// proportional to the 3KM actions. Actions take at least one tick, so decisions at one time never
// see each other's results.
Result<std::vector<Program>> zb_h2_stage_orders(int num_stages, int num_microbatches,
                                                 const std::vector<StageTimes>& times, std::int64_t handoff) {
  constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  const auto k = static_cast<std::size_t>(num_stages);
  const auto m = static_cast<std::size_t>(num_microbatches);
  const int limit = 2 * num_stages - 1;
  std::vector<std::int64_t> f_done(k * m, kNever);  // [s * m + micro-batch], on its own stage
  std::vector<std::int64_t> f_arrives = f_done;     // at the next stage
  std::vector<std::int64_t> i_arrives = f_done;     // at the previous stage
  std::vector<int> nf(k, 0), ni(k, 0), nw(k, 0);
  std::vector<std::int64_t> free_at(k, 0);
  std::vector<Program> orders(k);
  using WakeUp = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<WakeUp, std::vector<WakeUp>, std::greater<>> wake_ups;
  for (std::size_t s = 0; s < k; ++s) wake_ups.emplace(0, s);
  std::size_t remaining = 3 * k * m;
  while (remaining > 0 && !wake_ups.empty()) {
    const auto [t, s] = wake_ups.top();
    wake_ups.pop();
    if (free_at[s] > t) continue;  // busy: its own end wakes it
    const auto i = static_cast<std::size_t>(ni[s]);
    const auto f = static_cast<std::size_t>(nf[s]);
    const bool can_i = ni[s] < num_microbatches && f_done[s * m + i] <= t && (s + 1 == k || i_arrives[(s + 1) * m + i] <= t);
    const bool may_f = nf[s] < num_microbatches && nf[s] - nw[s] < limit;
    const std::int64_t next_f = may_f && s > 0 ? f_arrives[(s - 1) * m + f] : kNever;  // when it can run
    const bool can_f = may_f && (s == 0 || next_f <= t);
    const bool i_waits = ni[s] < num_microbatches && s + 1 < k && f_done[s * m + i] <= t;
    const std::int64_t next_i = i_waits ? i_arrives[(s + 1) * m + i] : kNever;  // when it can run
    const int stage = static_cast<int>(s);
    const StageTimes& cost = times[s];
    std::int64_t end = 0;
    if (can_i) {
      end = t + cost.input_grad;
      i_arrives[s * m + i] = end + handoff;
      orders[s].push_back(input_grad(stage, ni[s]++));
      if (s > 0) wake_ups.emplace(end + handoff, s - 1);
    } else if (can_f) {
      end = t + cost.forward;
      f_done[s * m + f] = end;
      f_arrives[s * m + f] = end + handoff;
      if (s + 1 < k) wake_ups.emplace(end + handoff, s + 1);
      orders[s].push_back(forward(stage, nf[s]++));
    } else if (nw[s] < ni[s] &&
               !waits_for_result(t, cost.weight_grad, handoff, next_f, next_i, ni[s] + 1 == num_microbatches)) {
      end = t + cost.weight_grad;
      orders[s].push_back(weight_grad(stage, nw[s]++));
    } else {
      continue;  // nothing to do, or waiting, until a neighbour's result arrives (it wakes this stage)
    }
    free_at[s] = end;
    wake_ups.emplace(end, s);
    --remaining;
  }
  if (remaining > 0) return Error{fmt::format("zb-h2: the list schedule stopped with {} actions left", remaining)};
  return orders;
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

Result<Schedule> zb_h2_timed(const ScheduleShape& shape, const std::vector<StageTimes>& times, std::int64_t handoff) {
  auto placement = resolve_placement(shape);
  if (!placement) return placement.error();
  if (static_cast<int>(times.size()) != shape.num_stages) {
    return Error{fmt::format("zb-h2: {} stage times for {} stages", times.size(), shape.num_stages)};
  }
  for (std::size_t s = 0; s < times.size(); ++s) {
    const StageTimes& t = times[s];
    for (const std::int64_t d : {t.forward, t.input_grad, t.weight_grad}) {
      if (d < 1 || d > kMaxStageTime) return Error{fmt::format("zb-h2: stage {}: times must be from 1 to {}, got {}", s, kMaxStageTime, d)};
    }
  }
  if (handoff < 0 || handoff > kMaxStageTime) return Error{fmt::format("zb-h2: the hand-off must be from 0 to {}, got {}", kMaxStageTime, handoff)};
  auto orders = zb_h2_stage_orders(shape.num_stages, shape.num_microbatches, times, handoff);
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
