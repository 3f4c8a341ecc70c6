// The least step time any schedule of K stages (one per device, or placed, below) and M
// micro-batches can have on a cost model, so that a synthesized schedule can say how far it is
// from the best possible.
//
// Device s cannot start before micro-batch 0's forwards and hand-offs reach it, and then has all
// of its own work to do, one action at a time, and its optimizer tail after it. A device s >= 1
// also has a drain: its last backward on the chain (I, or B) follows all its F's and backwards,
// and that micro-batch's gradient then goes back up to device 0 and its W; its own W's may wait
// after it. With k of its M backwards run as whole B's (the schedule picks k):
//
//   start(s)   = sum_{j < s} (min(F_first(j), F(j), F_ng(j)) + handoff(j -> j+1))
//   fwd(s)     = min(F_first(s), f(s)) + (M-1) f(s),   f = min(F, F_ng + R)
//   work_k(s)  = B_first + (k-1) B + (M-k)(I+W)     (0 B's: M (I+W))
//   drain_k(s) = k min(B_first, B) + (M-k) I + sum_{0<j<s} (h'(j) + min(I(j), B(j))) + h'(0)
//                + min(I(0) + W(0), B(0)) + tail(0)
//   device(s)  = start(s) + fwd(s) + min_k max(work_k(s) + tail(s), drain_k(s))     (s >= 1)
//   device(0)  = fwd(0) + min(M (I+W), B_first + (M-1)(I+W), B_first + (M-1) B) + tail(0)
//
// and the last micro-batch's chain: device 0 runs M forwards, the last one's F goes down every
// stage and its backward (I, or B) comes back up, then device 0 runs its W and its tail:
//
//   chain    = min(F_first(0), F_ng(0)) + (M-1) min(F(0), F_ng(0))
//              + sum_{s>0} (h(s-1) + min(F(s), F_ng(s) + R(s)) + min(I(s), B(s)) + h'(s-1))
//              + min(I(0) + W(0), B(0)) + tail(0)
//
// (every stage may run I + W or a whole B for any micro-batch, whichever the list rule uses)
//   bound    = max(max_s device(s), chain)
//
// A re-materialized micro-batch's F keeps no graph and may cost less (F_ng), and its R comes before
// its backward: start(s) and device 0's forwards on the chain take the least F of either kind, a
// stage's forward work per micro-batch min(F, F_ng + R), and the chain's F on each later stage the
// same (its R on the way back).
//
// Times as stage_times.h reads them (each with the per-action overhead, so a whole B, one action,
// can be less than I + W, two); each F and B of one micro-batch at the lesser of its first and
// usual cost where the schedule chooses which micro-batch comes first. The chain decides where M
// is small against K. On uniform costs with free hand-offs the last stage gives
// (K-1) F + M (F+I+W): 3M + K - 1 in unit time, which ZB-H2 reaches with enough memory
// (zero_bubble.h). The bound leaves out what only adds time (resume costs, contention, send
// overheads on the sender's stream, waits beyond the one chain), so no simulated schedule is below
// it (tests/sim/synth/lower_bound_test.cc holds every hand-written family to it).
//
// With several stages on a device (a placement; hand-offs between stages on one device cost
// nothing in the times, stage_times.h) every term above still holds stage by stage (a stage's
// actions run one at a time on its device, and its tail is part of its device's), and a device d
// holding the stages S (lowest a) adds its own:
//
//   shared(d) = start(a) + max(sum_{s in S} work(s) + sum_{s in S} tail(s),
//                              sum_{s in S} (fwd(s) + M min(I(s), B(s))) + way_back(a))   (way back: a > 0)
//
// work(s) as device(0)'s (the least over I + W and B), way_back(a) the drain's from a to device 0's W
// and tail: a's last backward on the chain follows every F and backward (I or B) of the device's
// stages, since a later stage's backward of a micro-batch precedes a's.
#pragma once

#include <vector>

#include "sim/synth/stage_times.h"

namespace pipeworks::sim {

struct LowerBound {
  Nanoseconds step_ns = 0;
  int device = 0;  // the device whose term gives it (the first such), 0 for the chain
  bool chain = false;  // the last micro-batch's chain gives it
  bool drain = false;  // the device's drain (its last backward's way back to device 0) gives it
};

LowerBound step_lower_bound(const std::vector<SynthStageTimes>& times, int num_microbatches);

// The same with stage s on device placement[s] (times from synth_stage_times with that placement):
// the terms above and each shared device's; `device` names a device.
LowerBound step_lower_bound(const std::vector<SynthStageTimes>& times, int num_microbatches,
                            const std::vector<int>& placement);

// (step - bound) / bound, 0 when the bound is 0.
double gap_to_bound(Nanoseconds step_ns, Nanoseconds bound_ns);

}  // namespace pipeworks::sim
