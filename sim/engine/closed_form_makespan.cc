// The makespans in closed form (see closed_form_makespan.h for the table, docs/schedules.md for
// the derivations).
#include "sim/engine/closed_form_makespan.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>

namespace pipeworks::sim {
namespace {

// Every cost non-negative and at least one stage and micro-batch.
bool valid(int stages, int microbatches, const PassCosts& c) {
  return stages >= 1 && microbatches >= 1 && c.forward >= 0 && c.input_grad >= 0 && c.weight_grad >= 0 &&
         c.handoff >= 0;
}

// The hand-off fits between two results on one link (no transfer queues behind another).
bool handoff_fits(Nanoseconds handoff, Nanoseconds a, Nanoseconds b) { return handoff <= std::min(a, b); }

}  // namespace

// Fill (K-1)(F+c) to the last stage, its M forwards and M backwards back to back, the drain
// (K-1)(B+c) back up: every stage's inputs arrive at its own pace, so it never waits again.
std::optional<Nanoseconds> gpipe_makespan(int stages, int microbatches, const PassCosts& costs) {
  if (!valid(stages, microbatches, costs) || !handoff_fits(costs.handoff, costs.forward, costs.backward())) {
    return std::nullopt;
  }
  const Nanoseconds k = stages, m = microbatches;
  return (m + k - 1) * (costs.forward + costs.backward()) + 2 * (k - 1) * costs.handoff;
}

// GPipe's path plus the in-flight loop: stage 0 holds K micro-batches, so F(0, j+K) follows
// B(0, j), a round trip of K(F+B) + 2(K-1)c; of the M-1 micro-batches after the first, all but
// one in every K pay its 2c (closed-form test: the K = 3 timeline).
std::optional<Nanoseconds> one_f_one_b_makespan(int stages, int microbatches, const PassCosts& costs) {
  if (!valid(stages, microbatches, costs) || !handoff_fits(costs.handoff, costs.forward, costs.backward())) {
    return std::nullopt;
  }
  const Nanoseconds k = stages, m = microbatches;
  const Nanoseconds round_trips = (k - 1) + (m - 1) * (k - 1) / k;
  return (m + k - 1) * (costs.forward + costs.backward()) + 2 * costs.handoff * round_trips;
}

// Megatron's bubble (p-1)(F+B) on each device over its vM forwards and backwards, plus one
// crossing of the K-1 boundaries each way: its warm-up holds enough micro-batches that no round
// trip binds once c <= min(F, B).
std::optional<Nanoseconds> interleaved_1f1b_makespan(int stages, int microbatches, int virtual_stages,
                                                     const PassCosts& costs) {
  if (!valid(stages, microbatches, costs) || virtual_stages < 1 || stages % virtual_stages != 0 ||
      !handoff_fits(costs.handoff, costs.forward, costs.backward())) {
    return std::nullopt;
  }
  const Nanoseconds k = stages, m = microbatches, v = virtual_stages, p = k / v;
  if (p < 2 || m % p != 0) return std::nullopt;
  return (v * m + p - 1) * (costs.forward + costs.backward()) + 2 * (k - 1) * costs.handoff;
}

// M(F+I+W) plus (K-1) times the longest of three paths, each starting with micro-batch 0's
// forwards down and its I's back up, which stage 0's F(K) waits for (it holds K micro-batches):
// then stage 0's own remaining work (I + 2c a hop); or F(K) down again and the last stage's
// remaining work (F + 3c); or that and the last micro-batch's I's up to stage 0, its W's
// filling W a hop (F + I - W + 4c, the paper's (K-1)(F+I-W) at c = 0). With 2c <= W the
// steady state has no gap: stage s+1 can run anywhere from F + c to F + W - c behind stage s.
std::optional<Nanoseconds> zb_h1_makespan(int stages, int microbatches, const PassCosts& costs) {
  const Nanoseconds f = costs.forward, i = costs.input_grad, w = costs.weight_grad, c = costs.handoff;
  if (!valid(stages, microbatches, costs) || 2 * c > w || !handoff_fits(c, f, i)) return std::nullopt;
  const Nanoseconds k = stages, m = microbatches;
  if (m < k + (c > 0 ? 1 : 0)) return std::nullopt;
  return m * (f + i + w) + (k - 1) * std::max({f + i - w + 4 * c, f + 3 * c, i + 2 * c});
}

// The last stage starts after K-1 forwards and runs M(F+I+W) without a gap; it may hold at most
// 2K-1 W's past its last I, which must cover the K-1 I's going back up to stage 0 and its last W:
// (K-1)(I+c) + W <= (2K-1)W + slack, so the slack is (K-1) max(0, I+c-2W).
std::optional<Nanoseconds> zb_h2_in_flight_bound(int stages, int microbatches, const PassCosts& costs) {
  const Nanoseconds f = costs.forward, i = costs.input_grad, w = costs.weight_grad, c = costs.handoff;
  if (!valid(stages, microbatches, costs) || microbatches < 2 * stages - 1) return std::nullopt;
  const Nanoseconds k = stages, m = microbatches;
  return (k - 1) * (f + c) + m * (f + i + w) + (k - 1) * std::max<Nanoseconds>(0, i + c - 2 * w);
}

// zb_h2_in_flight_bound, which the timed order reaches without a hand-off while I <= F + W and
// I <= 2F (with one it reaches it on most shapes, not all; with I > 2F no order reaches it:
// closed_form_makespan.h).
std::optional<Nanoseconds> zb_h2_makespan(int stages, int microbatches, const PassCosts& costs) {
  if (costs.handoff != 0 || costs.input_grad > costs.forward + costs.weight_grad ||
      costs.input_grad > 2 * costs.forward) {
    return std::nullopt;
  }
  return zb_h2_in_flight_bound(stages, microbatches, costs);
}

// Device p-1 holds stages p-1 and p: micro-batch 0 reaches it after the forwards of stages 0 to
// p-2, each on its own device and handed off, and it then runs its two stages' 2M(F+I+W) one
// action at a time. Device r < p-1 starts r(F+c) in with the same work, so p-1 gives the bound;
// it holds whatever the order and however much each stage may hold.
std::optional<Nanoseconds> zb_v_device_bound(int stages, int microbatches, const PassCosts& costs) {
  if (!valid(stages, microbatches, costs) || stages % 2 != 0) return std::nullopt;
  const Nanoseconds p = stages / 2, m = microbatches;
  return (p - 1) * (costs.forward + costs.handoff) + 2 * m * (costs.forward + costs.input_grad + costs.weight_grad);
}

// Zero Bubble's ZB-V at F = I = W without hand-offs: each device runs 6M passes without a gap
// after the ramp of p-1 passes (sched/zero_bubble.h), which is zb_v_device_bound.
std::optional<Nanoseconds> zb_v_makespan(int stages, int microbatches, const PassCosts& costs) {
  const Nanoseconds f = costs.forward;
  if (costs.handoff != 0 || costs.input_grad != f || costs.weight_grad != f || microbatches < stages) {
    return std::nullopt;
  }
  return zb_v_device_bound(stages, microbatches, costs);
}

namespace {

// The largest of the pieces a F + b I + w W + h c, each given as {a, b, w, h}.
template <std::size_t N>
Nanoseconds largest_piece(const PassCosts& c, const std::array<std::array<Nanoseconds, 4>, N>& pieces) {
  Nanoseconds most = std::numeric_limits<Nanoseconds>::min();
  for (const auto& [f, i, w, h] : pieces) {
    most = std::max(most, f * c.forward + i * c.input_grad + w * c.weight_grad + h * c.handoff);
  }
  return most;
}

// The fixed order's excess over the V bound at p = 2, and what each device pair beyond adds:
// fitted to the simulator (docs/schedules.md), not derived.
Nanoseconds zb_v_fixed_excess_at_two(const PassCosts& c) {
  return largest_piece<10>(c, {{{0, 0, 0, 0}, {-1, 1, 0, 2}, {1, -1, -1, 2}, {-1, 2, -2, 3}, {-1, 2, -3, 5},
                                {1, 0, -3, 3}, {0, 0, -1, 4}, {0, 1, -3, 5}, {-1, 1, -1, 4}, {0, 1, -2, 1}}});
}
Nanoseconds zb_v_fixed_excess_per_pair(const PassCosts& c) {
  return largest_piece<7>(c, {{{1, -1, 0, 2}, {-1, 1, 0, 4}, {-1, 0, 1, 2}, {0, 0, 0, 4}, {1, 0, -2, 3},
                               {-1, 2, -2, 5}, {0, 1, -2, 5}}});
}

}  // namespace

std::optional<Nanoseconds> zb_v_fixed_order_makespan(int stages, int microbatches, const PassCosts& costs) {
  const auto bound = zb_v_device_bound(stages, microbatches, costs);
  const Nanoseconds least = std::min({costs.forward, costs.input_grad, costs.weight_grad});
  if (!bound || least < 1 || costs.handoff > least || microbatches < stages) return std::nullopt;
  const Nanoseconds p = stages / 2;
  if (p == 1) return bound;
  return *bound + zb_v_fixed_excess_at_two(costs) + (p - 2) * zb_v_fixed_excess_per_pair(costs);
}

std::optional<Nanoseconds> closed_form_makespan(sched::ScheduleKind kind, int stages, int microbatches,
                                                int virtual_stages, const PassCosts& costs) {
  using sched::ScheduleKind;
  switch (kind) {
    case ScheduleKind::kGPipe: return gpipe_makespan(stages, microbatches, costs);
    case ScheduleKind::kOneFOneB: return one_f_one_b_makespan(stages, microbatches, costs);
    case ScheduleKind::kInterleaved1F1B: return interleaved_1f1b_makespan(stages, microbatches, virtual_stages, costs);
    case ScheduleKind::kZbH1: return zb_h1_makespan(stages, microbatches, costs);
    case ScheduleKind::kZbH2: return zb_h2_makespan(stages, microbatches, costs);
    case ScheduleKind::kZbV: return zb_v_makespan(stages, microbatches, costs);
    case ScheduleKind::kLoopedBfs:
    case ScheduleKind::kDualPipeV:
    case ScheduleKind::kInterleavedZb: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace pipeworks::sim
