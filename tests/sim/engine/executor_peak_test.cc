// The executor-peak walk over constructed timelines: gradients from the end of a stage's first
// backward, temporaries on top while a backward runs, input gradients held until consumed.
#include <catch2/catch.hpp>

#include "sim/engine/executor_peak.h"
#include "sched/generators.h"
#include "sched/passes.h"

namespace pipeworks::sim {
namespace {

sched::Schedule lowered(sched::ScheduleKind kind, int k, int m) {
  return sched::lower_comm(sched::generate(kind, {k, m, {}}).value()).value();
}

// `costs` with stage 0's temporaries set.
CostModel with_extra(CostModel costs, StageExtraBytes extra) {
  costs.stages[0].extra = extra;
  return costs;
}

sched::Span backward(int device, int stage, int microbatch, sched::Nanoseconds start, sched::Nanoseconds end) {
  sched::Span s;
  s.device = device;
  s.lane = sched::Lane::kCompute;
  s.action = sched::Action{stage, sched::ActionKind::kBackward, microbatch};
  s.start_ns = start;
  s.end_ns = end;
  return s;
}

// A backward pass of `kind` (B, or a split backward's I or W).
sched::Span pass(sched::ActionKind kind, int device, int stage, int microbatch, sched::Nanoseconds start,
                 sched::Nanoseconds end) {
  sched::Span s = backward(device, stage, microbatch, start, end);
  s.action.kind = kind;
  return s;
}

TEST_CASE("peak walk: the first backward has no gradients yet, later ones do") {
  //   t:      0      10     20 [B0 first] 30 [B1 later] 40
  //   level:  0     +100   +100          -100          -100     (static 1000 at t = 0)
  //   grads:                             +50 (end of the first B)
  //   probe B0: 200 + 0 + first      probe B1: 100 + 50 + later
  const sched::Schedule schedule = lowered(sched::ScheduleKind::kGPipe, 1, 2);
  CostModel costs;
  costs.stages.resize(1);
  costs.stages[0].grad_bytes = 50;
  sched::Timeline t;
  t.num_devices = 1;
  t.spans = {backward(0, 0, 0, 20, 30), backward(0, 0, 1, 30, 40)};
  t.memory = {{0, 0, 1000}, {0, 10, 1100}, {0, 20, 1200}, {0, 30, 1100}, {0, 40, 1000}};
  CHECK(walk_peak_memory(t, schedule, with_extra(costs, {0, 0})) == std::vector<sched::Bytes>{200});
  CHECK(walk_peak_memory(t, schedule, with_extra(costs, {30, 0})) == std::vector<sched::Bytes>{230});
  CHECK(walk_peak_memory(t, schedule, with_extra(costs, {0, 60})) == std::vector<sched::Bytes>{210});
  // Without figures for the stage, temporaries count 0.
  CHECK(walk_peak_memory(t, schedule, costs) == std::vector<sched::Bytes>{200});
}

TEST_CASE("peak walk: held input gradients raise a device's peak only where they coexist with its largest level") {
  // Stage 1 on device 1 makes the 100-byte gradient of its input when B(1,0) ends (t = 20); it is
  // held until B(0,0) on device 0 ends (t = 40). Device 1's memory: 1000 from 0, 1500 from 10.
  //   stash freed at 20 (1000 from 20): 1000 + 100 < 1500, peak 500 above the start
  //   stash kept (1500 until 50):       1500 + 100 from 20 to 40, peak 600
  const sched::Schedule schedule = lowered(sched::ScheduleKind::kGPipe, 2, 1);
  CostModel costs;
  costs.stages.resize(2);
  costs.stages[0].output_bytes = 100;
  sched::Timeline t;
  t.num_devices = 2;
  t.spans = {backward(1, 1, 0, 15, 20), backward(0, 0, 0, 30, 40)};
  t.memory = {{0, 0, 500}, {1, 0, 1000}, {1, 10, 1500}, {1, 20, 1000}};
  CHECK(walk_peak_memory(t, schedule, costs) == std::vector<sched::Bytes>{0, 500});
  t.memory = {{0, 0, 500}, {1, 0, 1000}, {1, 10, 1500}, {1, 50, 1000}};
  CHECK(walk_peak_memory(t, schedule, costs) == std::vector<sched::Bytes>{0, 600});
}

TEST_CASE("peak walk: a forward's temporaries sit above the level its end leaves") {
  //   F(0,0) [0,10] ends: +100 stash; its peak was 100 + 40 (attention scores, say)
  //   B(0,0) [10,20]: probe 100 + first 5
  const sched::Schedule schedule = lowered(sched::ScheduleKind::kGPipe, 1, 1);
  CostModel costs;
  costs.stages.resize(1);
  sched::Span forward = backward(0, 0, 0, 0, 10);
  forward.action.kind = sched::ActionKind::kForward;
  sched::Timeline t;
  t.num_devices = 1;
  t.spans = {forward, backward(0, 0, 0, 10, 20)};
  t.memory = {{0, 0, 0}, {0, 10, 100}, {0, 20, 0}};
  StageExtraBytes extra;
  extra.first = 5;
  extra.forward = 40;
  extra.forward_no_grad = 1000;  // only for F of a stage that re-materializes
  CHECK(walk_peak_memory(t, schedule, with_extra(costs, extra)) == std::vector<sched::Bytes>{140});
  extra.forward = 0;
  CHECK(walk_peak_memory(t, schedule, with_extra(costs, extra)) == std::vector<sched::Bytes>{105});
}

TEST_CASE("peak walk: changes at one time stamp apply together before a backward starting then is probed") {
  // F ends at 10 (+100) as B starts at 10; the same instant frees nothing, so the probe sees 100.
  const sched::Schedule schedule = lowered(sched::ScheduleKind::kGPipe, 1, 1);
  CostModel costs;
  costs.stages.resize(1);
  sched::Timeline t;
  t.num_devices = 1;
  t.spans = {backward(0, 0, 0, 10, 20)};
  t.memory = {{0, 0, 0}, {0, 10, 100}, {0, 20, 0}};
  CHECK(walk_peak_memory(t, schedule, with_extra(costs, {7, 0})) == std::vector<sched::Bytes>{107});
}

TEST_CASE("peak walk: a re-materializing stage's F output is freed when the next stage's B drops it") {
  //   d1:            [B(1,0) 20..25]
  //   d0:  F end 10: +40 kept        R end 35: +100 stash   [B(0,0) 35..45] end: -140
  //   the kept 40 go at 25 (stage 1 drops its input), so d0 never holds 140 at once: peak 100
  const sched::Schedule schedule = lowered(sched::ScheduleKind::kGPipe, 2, 1);
  CostModel costs;
  costs.stages.resize(2);
  costs.stages[0].input_bytes = 40;
  sched::Span recompute = backward(0, 0, 0, 30, 35);
  recompute.action.kind = sched::ActionKind::kRecompute;
  sched::Timeline t;
  t.num_devices = 2;
  t.spans = {backward(1, 1, 0, 20, 25), recompute, backward(0, 0, 0, 35, 45)};
  t.memory = {{0, 0, 0}, {0, 10, 40}, {0, 35, 140}, {0, 45, 0}, {1, 0, 0}};
  CHECK(walk_peak_memory(t, schedule, costs) == std::vector<sched::Bytes>{100, 0});
  // Without the R span the simulator's lifetime stands.
  t.spans = {backward(1, 1, 0, 20, 25), backward(0, 0, 0, 35, 45)};
  CHECK(walk_peak_memory(t, schedule, costs) == std::vector<sched::Bytes>{140, 0});
}

TEST_CASE("peak walk: a split backward holds what its I keeps for its W, and a run adds parameters and optimizer state") {
  //   t:    0 [I(0,0) 10..20] [W(0,0) 20..30]
  //   level: +100 at 10 (F's stash), -100 at 30 (W frees it); I keeps 30 from 20 to 30
  //   above the start: 100 + 30 from 20; gradients (50) from W's end, when the stash is gone
  const sched::Schedule schedule = lowered(sched::ScheduleKind::kZbH1, 1, 1);
  CostModel costs;
  costs.stages.resize(1);
  costs.stages[0].grad_bytes = 50;
  costs.stages[0].param_bytes = 50;
  costs.stages[0].optimizer_bytes = 100;
  costs.stages[0].extra.split_held = 30;
  sched::Timeline t;
  t.num_devices = 1;
  t.spans = {pass(sched::ActionKind::kBackwardInput, 0, 0, 0, 10, 20), pass(sched::ActionKind::kBackwardWeight, 0, 0, 0, 20, 30)};
  t.memory = {{0, 0, 200}, {0, 10, 300}, {0, 30, 200}};
  CHECK(walk_peak_memory(t, schedule, costs) == std::vector<Bytes>{130});
  CHECK(executor_peak_bytes(t, schedule, costs) == std::vector<Bytes>{280});
}

TEST_CASE("peak walk: the first stage's W runs the whole backward from the gradient stage 1 made") {
  //   d0:  stash +100 at 5, +50 at 25      [I(0,0) 20..21]           [W(0,0) 30..40]
  //   d1:  stash +60 from 8 to 25, again from 32 to 35   [I(1,0) 10..20][W(1,0) 20..25]
  //   I(0,0) computes nothing; stage 1's input gradient (8) stays on d1 from I(1,0)'s end to
  //   W(0,0)'s end, and W(0,0) is probed with the first backward's temporaries (40).
  //   d0: 150 + 40 = 190 at W(0,0)'s start;  d1: 60 + 8 = 68 at 32
  const sched::Schedule schedule = lowered(sched::ScheduleKind::kZbH1, 2, 1);
  CostModel costs;
  costs.stages.resize(2);
  costs.stages[0].output_bytes = 8;
  costs.stages[0].grad_bytes = 50;
  costs.stages[0].extra.first = 40;
  using sched::ActionKind;
  sched::Timeline t;
  t.num_devices = 2;
  t.spans = {pass(ActionKind::kBackwardInput, 1, 1, 0, 10, 20), pass(ActionKind::kBackwardWeight, 1, 1, 0, 20, 25),
             pass(ActionKind::kBackwardInput, 0, 0, 0, 20, 21), pass(ActionKind::kBackwardWeight, 0, 0, 0, 30, 40)};
  t.memory = {{0, 0, 0}, {0, 5, 100}, {0, 25, 150}, {0, 40, 0},
              {1, 0, 0}, {1, 8, 60},  {1, 25, 0},   {1, 32, 60}, {1, 35, 0}};
  CHECK(walk_peak_memory(t, schedule, costs) == std::vector<Bytes>{190, 68});
}

TEST_CASE("peak walk: a stage's output stays on its device until the next stage's W is surely done") {
  //   d0:  F(0,0) stash 50 at 10 .. [I(0,0) 40..41][W(0,0) 41..50] .. 100 more from 60 to 75 .. [I(0,1) 80..81]
  //   d1:  [I(1,0) 20..30][W(1,0) 30..35] .................................. [I(1,1) 72..78]
  //   W(1,0) ended first here, but only I(1,1), made after it, orders it before d0's actions: the
  //   output of (0,0), 8 B on d0 in stage 1's graph, is held from W(0,0)'s end to I(0,1)'s end.
  //   d0: 100 + 8 = 108 from 60;  d1: stage 1's input gradients, 8 at a time
  const sched::Schedule schedule = lowered(sched::ScheduleKind::kZbH1, 2, 2);
  CostModel costs;
  costs.stages.resize(2);
  costs.stages[0].output_bytes = 8;
  using sched::ActionKind;
  sched::Timeline t;
  t.num_devices = 2;
  t.spans = {pass(ActionKind::kBackwardInput, 0, 0, 0, 40, 41), pass(ActionKind::kBackwardWeight, 0, 0, 0, 41, 50),
             pass(ActionKind::kBackwardInput, 0, 0, 1, 80, 81), pass(ActionKind::kBackwardInput, 1, 1, 0, 20, 30),
             pass(ActionKind::kBackwardWeight, 1, 1, 0, 30, 35), pass(ActionKind::kBackwardInput, 1, 1, 1, 72, 78)};
  t.memory = {{0, 0, 0}, {0, 10, 50}, {0, 50, 0}, {0, 60, 100}, {0, 75, 0}, {1, 0, 0}};
  CHECK(walk_peak_memory(t, schedule, costs) == std::vector<Bytes>{108, 8});
  // With both stages on one device its order decides: the output goes with the stash at 50 (the
  // input gradients, now on d0 too, add 8 from 30 to 50 and from 78, when the level is 50 and 0).
  sched::Schedule one_device = schedule;
  one_device.placement = {0, 0};
  one_device.programs.resize(1);
  for (sched::Span& s : t.spans) s.device = 0;
  CHECK(walk_peak_memory(t, one_device, costs) == std::vector<Bytes>{100});
}

}  // namespace
}  // namespace pipeworks::sim
