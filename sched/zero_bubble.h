// Zero-bubble schedules (Qi et al. 2024, "Zero Bubble Pipeline Parallelism"): the backward of a
// micro-batch splits into I (input gradient, on the critical path: the previous stage waits for
// it) and W (weight gradient, needed only by the optimizer), and the W's fill the bubble.
//
// ZB-H1, K = 3, M = 4 (unit time): 1F1B's warm-up (K-1-s forwards on stage s), then F, I pairs;
// stage s holds back its W's by s pairs and runs them where 1F1B would idle. Every stage holds
// at most K micro-batches (F run, W not yet), 1F1B's peak on stage 0. With F, I and W costs the
// makespan is M(F+I+W) + (K-1)(F+I-W): 1F1B's bubble (K-1)(F+I+W) less 2W per hop (the
// zero-bubble paper's (p-1)(F+B-2W) with B the whole backward).
//
//   t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13
//   d0: F0 F1 F2  .  . I0 W0 F3 I1 W1 I2 W2 I3 W3
//   d1:  . F0 F1  . I0 F2 I1 W0 F3 I2 W1 I3 W2 W3
//   d2:  .  . F0 I0 F1 I1 F2 I2 W0 F3 I3 W1 W2 W3
//
// In unit time (F = I = W = 1) that is 3M + K - 1 steps (M >= K) against 1F1B's 3(M + K - 1).
//
// ZB-H2: more warm-up forwards and W's moved to the tail, up to 2K-1 micro-batches in flight on
// every stage. Written down as the list schedule that, whenever a stage is free, runs its next I
// if ready, else its next F if ready and fewer than 2K-1 micro-batches are in flight, else its
// oldest pending W; in unit time by default, on given stage times with zb_h2_timed (which, with a
// hand-off, leaves a W for a result on its way: see there). With F = I = W and M >= 2K-1 every
// device is busy without a gap from its first action to its last (a parallelogram): the makespan
// M(F+I+W) + (K-1)F is the least any schedule can have, and the only idle time is the forward
// ramp of the first micro-batch.
//
//   t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19
//   d0: F0 F1 F2 F3 F4 I0 W0 I1 F5 I2 W1 I3 W2 I4 W3 W4 I5 W5  .  .
//   d1:  . F0 F1 F2 I0 F3 I1 F4 I2 W0 I3 F5 I4 W1 W2 I5 W3 W4 W5  .
//   d2:  .  . F0 I0 F1 I1 F2 I2 F3 I3 F4 I4 W0 F5 I5 W1 W2 W3 W4 W5
//
// ZB-V and DualPipeV: K = 2p stages on p devices in V placement (device r holds stages r and
// 2p-1-r, so the first and the last stage share device 0 and the middle hand-off stays on
// device p-1), ordered as torch.distributed.pipelining's ScheduleZBVZeroBubble and
// ScheduleDualPipeV order them. DualPipeV's overlapped forward+backward pair (one stage's F and
// the other stage's B, meant to share a device's compute and communication) is written as the two
// actions back to back: neither this IR nor a CPU overlaps them, so the prediction is for the
// pair run one after the other. Both generate as if M were at least 2p-1 (DualPipeV: 2p) and
// then drop the actions of micro-batches that do not exist, as torch.distributed.pipelining does.
// Stage s holds at most min(M, 2p - s) micro-batches: 1F1B's counts over 2p half-size stages.
//
// ZB-V, p = 2, M = 4 (stages 0, 3 on d0; 1, 2 on d1): 6M + p - 1 steps, no device idle inside.
//
//   t:    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17  18  19  20  21  22  23  24
//   d0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 3W1 0F3 0I0 0W0 3F2 3I2 3W2 0I1 0W1 3F3 3I3 3W3 0I2 0W2 0I3 0W3   .
//   d1:   . 1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1F3 1I1 1W1 2F3 2I2 2W2 1I2 2I3 1I3 1W2 2W3 1W3
//
// DualPipeV, p = 2, M = 4 (its pairs: 0F3 3B1, 3F2 0B0, ...):
//
//   t:    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17  18
//   d0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 0F3 3B1 3F2 0B0 3B2 3F3 0B1 3B3 0I2 0W2 0I3 0W3
//   d1:   . 1F0 2F0 1F1 2F1 1F2 2B0 2F2 1B0 1F3 2B1 2F3 1B1 2B2 1B2 2I3 1I3 2W3 1W3
//
// All four pictures are asserted in tests/sched/zero_bubble_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/schedule.h"

namespace pipeworks::sched {

// One stage per device unless shape.placement shares them (then merged by merge_stage_orders).
Result<Schedule> zb_h1(const ScheduleShape& shape);
Result<Schedule> zb_h2(const ScheduleShape& shape);

// What one stage's F, I and W take, in any unit (the simulator's ns; 1 each is unit time).
struct StageTimes {
  std::int64_t forward = 1;
  std::int64_t input_grad = 1;
  std::int64_t weight_grad = 1;
};
// The longest a stage's action or the hand-off may take here (100 s in ns): the list schedule's
// clock, at most 3 x kMaxScheduleCells actions each with its hand-off, stays within 64 bits.
inline constexpr std::int64_t kMaxStageTime = 100'000'000'000;
// ZB-H2's rule run on these times and a hand-off of `handoff` between neighbouring stages (one
// entry per stage): with F, I and W unequal, the unit-time order leaves gaps the rule fills when
// it decides on the real clock. A free stage does not start a W while its next F or I is on the
// link to it (it arrives within the hand-off), nor while its last micro-batch's I arrives before
// the W would end: that I's chain up to stage 0 sets the makespan. A greedy rule still leaves
// some shapes over the bound, so unless every stage has F = I = W and there is no hand-off, the
// orders that depart from it (or from the rule without the wait) at up to three decisions are
// searched, best first and with a cap on the work, for one that ends sooner, each timed as the
// simulator times it; the rule's order stands unless beaten, and the search stops on the bound.
// zb_h2(shape) is this with unit times and no hand-off, where every result arrives on a whole
// step, no stage waits and nothing is searched.
// The search's work, in the rule's wake-ups (about 0.1 s a million): a single schedule's
// default. 0: the rule's order alone (one or two more runs of the rule), what sweep and plan
// take, which time thousands of configurations (sim/engine/timed_orders.h).
inline constexpr std::int64_t kOrderSearchWakeUps = 2'000'000;
Result<Schedule> zb_h2_timed(const ScheduleShape& shape, const std::vector<StageTimes>& times, std::int64_t handoff,
                             std::int64_t search_wake_ups = kOrderSearchWakeUps);

// shape.num_stages = 2p; shape.placement empty or the V placement.
Result<Schedule> zb_v(const ScheduleShape& shape);
// ZB-V on these times and a hand-off between stages on different devices (one entry per stage; the
// V's middle hand-off stays on device p-1): torch's order, unless a list rule on the real clock
// (a ready I, its second stage's first; a ready F under the stage's limit K - s, torch's per-stage
// in-flight counts; the oldest W) or an order departing from it at up to three decisions ends
// sooner, searched as zb_h2_timed searches and stopping on the V bound. F = I = W on every stage
// without a hand-off: torch's order unchanged.
Result<Schedule> zb_v_timed(const ScheduleShape& shape, const std::vector<StageTimes>& times, std::int64_t handoff,
                            std::int64_t search_wake_ups = kOrderSearchWakeUps);
Result<Schedule> dualpipe_v(const ScheduleShape& shape);

// The V placement of 2p stages: stage s on device s for s < p, on device 2p-1-s after.
std::vector<int> v_placement(int num_stages);

}  // namespace pipeworks::sched
