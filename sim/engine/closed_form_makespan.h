// The makespan each generated schedule has in closed form on real costs (issue 39): uniform stages
// of forward F, input gradient I, weight gradient W (B = I + W where a kind runs a whole backward)
// and a hand-off c between neighbouring stages, so that a test can hold the simulator to it exactly
// and a reader can see what bound each schedule's constraints allow. The makespan here is the end
// of the last compute (SimResult::compute_end_ns), before any optimizer step.
//
// The hand-off is the simulator's (engine.h): a stage's result reaches a stage on another device c
// after its producer ends and one on the same device at once; each link carries one transfer at a
// time, so every form asks c <= the passes whose results share a link (no queue on it).
//
//   kind              makespan                                                range
//   gpipe             (M+K-1)(F+B) + 2(K-1)c                                   M >= 1, c <= min(F, B)
//   1f1b              (M+K-1)(F+B) + 2c(K-1 + floor((M-1)(K-1)/K))             M >= 1, c <= min(F, B)
//   interleaved-1f1b  (vM+p-1)(F+B) + 2(K-1)c, K = vp stages on p devices       M = p, 2p, ...; p >= 2; c <= min(F, B)
//   zb-h1             M(F+I+W) + (K-1) max(F+I-W+4c, F+3c, I+2c)               M >= K+1 (M >= K if c = 0); 2c <= W; c <= min(F, I)
//   zb-h2 (timed)     (K-1)F + M(F+I+W) + (K-1) max(0, I-2W)                   c = 0, M >= 2K-1, I <= min(F+W, 2F)
//   zb-v              (6M+p-1)F on 2p stages                                   F = I = W, c = 0, M >= 2p
//   zb-v, fixed order the V bound + E(p) (zb_v_fixed_order_makespan), fitted  c <= min(F, I, W), M >= 2p
//   dualpipe-v        none derived
//
// Bounds, which no order with the schedule's constraints beats, for the cases without a form:
//
//   zb-h2, c > 0      (K-1)(F+c) + M(F+I+W) + (K-1) max(0, I+c-2W)             M >= 2K-1
//   zb-v, dualpipe-v  (p-1)(F+c) + 2M(F+I+W) on 2p stages                      any order in the V
//
// ZB-H2's timed order (sched::zb_h2_timed: its rule, then a search over departures from it)
// reaches its bound on every c > 0 shape its tests try but a few with c near F/2 (K = 3, M = 6,
// F = 10, I = W = 15, c = 5: 5 over, where an exhaustive search finds an order on it); on K = 2, 3
// it ends on the bound wherever that search finds an order that does, but one in 762. With c = 0
// and I > 2F no order reaches the bound (K = 2, 3: (K-1)(I-2F) over is the least). ZB-V's
// torch order is above the V bound by a ramp that does not grow with M (issue 39's costs, p = 4:
// 0.8 ms at c = 0, 5.9 ms at c = 0.6 ms; the fitted E(p) below), its timed order (sched::zb_v_timed,
// what `simulate` times) by less, on it at p = 2 on most costs tried (measured, not a form: its
// search is capped); DualPipeV (its pairs back to back) adds
// (p-1) max(F, F+I-W) to the V bound at c = 0, I <= F: measured, not derived (docs/schedules.md).
//
// The derivations are in docs/schedules.md ("Makespans on real costs"); each form is asserted
// against the simulator in tests/sim/engine/closed_form_makespan_test.cc.
#pragma once

#include <optional>

#include "sched/generators.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

// One stage's pass times and the hand-off between neighbouring stages, every stage alike.
struct PassCosts {
  Nanoseconds forward = 0;      // F
  Nanoseconds input_grad = 0;   // I
  Nanoseconds weight_grad = 0;  // W
  Nanoseconds handoff = 0;      // c
  Nanoseconds backward() const { return input_grad + weight_grad; }  // B
};

// Each family's form on K stages and M micro-batches; none outside the range the table gives.
std::optional<Nanoseconds> gpipe_makespan(int stages, int microbatches, const PassCosts& costs);
std::optional<Nanoseconds> one_f_one_b_makespan(int stages, int microbatches, const PassCosts& costs);
std::optional<Nanoseconds> interleaved_1f1b_makespan(int stages, int microbatches, int virtual_stages,
                                                     const PassCosts& costs);
std::optional<Nanoseconds> zb_h1_makespan(int stages, int microbatches, const PassCosts& costs);
std::optional<Nanoseconds> zb_h2_makespan(int stages, int microbatches, const PassCosts& costs);
std::optional<Nanoseconds> zb_v_makespan(int stages, int microbatches, const PassCosts& costs);

// ZB-H2's bound with a hand-off, M >= 2K-1: no order that keeps its in-flight limit (2K-1 on each
// stage) ends sooner; (K-1)(F+c) + M(F+I+W) + (K-1) max(0, I+c-2W). Its timed order reaches it on
// most shapes with c > 0, not on all (docs/schedules.md).
std::optional<Nanoseconds> zb_h2_in_flight_bound(int stages, int microbatches, const PassCosts& costs);

// The bound of any order of K = 2p stages in the V placement (ZB-V, DualPipeV): device p-1's
// start and work, (p-1)(F+c) + 2M(F+I+W); none for an odd K.
std::optional<Nanoseconds> zb_v_device_bound(int stages, int microbatches, const PassCosts& costs);

// The makespan of ZB-V's fixed order (sched::zb_v, torch's ScheduleZBVZeroBubble, what `run
// --schedule zb-v` runs) on 2p stages in the V: the V bound, plus for p >= 2 an excess that does
// not grow with M,
//   E(p) = max(0, I-F+2c, F-I-W+2c, 2I-F-2W+3c, 2I-F-3W+5c, F-3W+3c, 4c-W, I-3W+5c, I-F-W+4c, I-2W+c)
//        + (p-2) max(F-I+2c, I-F+4c, W-F+2c, 4c, F-2W+3c, 2I-F-2W+5c, I-2W+5c),
// for F, I, W >= 1, c <= min(F, I, W) and M >= 2p; none outside. Fitted to the simulator, not
// derived: each piece is the least of those that the fit needed (docs/schedules.md).
std::optional<Nanoseconds> zb_v_fixed_order_makespan(int stages, int microbatches, const PassCosts& costs);

// The form of `kind` (virtual_stages: interleaved-1f1b's v); none where it has none or outside its
// range (dualpipe-v, looped-bfs and interleaved-zb have none).
std::optional<Nanoseconds> closed_form_makespan(sched::ScheduleKind kind, int stages, int microbatches,
                                                int virtual_stages, const PassCosts& costs);

}  // namespace pipeworks::sim
