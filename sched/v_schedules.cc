// The V kinds, ZB-V and DualPipeV (see zero_bubble.h): torch.distributed.pipelining's orders for
// 2p stages in V placement on p devices, kept apart from ZB-H1 and ZB-H2's one stage a device.
#include "sched/zero_bubble.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sched/composite.h"
#include "sched/limits.h"
#include "sched/placement.h"
#include "sched/zero_bubble_internal.h"

namespace pipeworks::sched {
namespace {

using detail::forward;
using detail::full_backward;
using detail::input_grad;
using detail::weight_grad;

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
