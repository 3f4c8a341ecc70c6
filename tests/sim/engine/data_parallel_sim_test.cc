// The simulator's data-parallel timing (engine.h): REDUCE_GRAD on each device's collective lane,
// after or bucketed under its stage's last backward, or holding the stream without overlap;
// UNSHARD gating its stage's computes and holding the gathered parameters until RESHARD; the
// optimizer tail after each device's program. Exact times on small hand-built cases.
#include <catch2/catch.hpp>

#include <string>

#include "sched/csv_io.h"
#include "sched/generators.h"
#include "sched/stage_level_passes.h"
#include "sched/timeline.h"
#include "sim/engine/simulator.h"

using namespace pipeworks;
using sched::ActionKind;
using sched::Lane;

namespace {

sched::Schedule from_csv(const std::string& text) {
  auto loaded = sched::parse_csv(text, "t.csv");
  REQUIRE(loaded);
  return loaded->schedule;
}

sim::SimResult run(const sched::Schedule& schedule, const sim::CostModel& model) {
  auto result = sim::simulate(schedule, model);
  if (!result) FAIL(result.error().message);
  return *result;
}

// The span of `kind` on stage `stage` (the first one).
sched::Span span_of(const sim::SimResult& r, int stage, ActionKind kind) {
  for (const sched::Span& s : r.timeline.spans) {
    if (s.action.stage == stage && s.action.kind == kind) return s;
  }
  FAIL("no such span");
  return {};
}

// GPipe K=2 M=2, F=1 B=2, each stage's gradients reduced in 4 ns:
//   t:    0  1  2  3  4  5  6  7  8  9 10 11 12 13
//   d0:   F0 F1 .  .  .  B0 B0 B1 B1
//   lane                             [ reduce  ]          9..13
//   d1:   .  F0 F1 B0 B0 B1 B1
//   lane                       [ reduce  ]                7..11
sim::CostModel reduced(int buckets) {
  sim::CostModel model = sim::uniform_cost_model(2, 1, 2);
  for (sim::StageCost& c : model.stages) {
    c.reduce_grad_ns = 4;
    c.reduce_grad_buckets = buckets;
  }
  return model;
}

sched::Schedule reduced_gpipe() {
  auto s = sched::add_reduce_grad(*sched::gpipe(sched::ScheduleShape{2, 2, {}}));
  REQUIRE(s);
  return *s;
}

}  // namespace

TEST_CASE("REDUCE_GRAD runs on the collective lane after its stage's last backward", "[simulator][dp]") {
  const sched::Schedule s = reduced_gpipe();
  const sim::SimResult r = run(s, reduced(1));
  const sched::Span d1 = span_of(r, 1, ActionKind::kReduceGrad);
  CHECK(d1.lane == Lane::kCollective);
  CHECK((d1.start_ns == 7 && d1.end_ns == 11));
  const sched::Span d0 = span_of(r, 0, ActionKind::kReduceGrad);
  CHECK((d0.start_ns == 9 && d0.end_ns == 13));
  CHECK(r.makespan_ns == 13);
  CHECK(r.step_ns == 13);
  CHECK(r.devices[0].collective_ns == 4);
  CHECK(r.devices[0].busy_ns == 6);  // compute only: the collective is not busy time
  const sched::TimelineStats stats = sched::compute_stats(r.timeline);
  CHECK(stats.devices[1].busy_ns == 6);
}

TEST_CASE("bucketed, REDUCE_GRAD starts under the last backward and ends one bucket after it", "[simulator][dp]") {
  // d1's last B spans 5..7: buckets of 2 ready at 6 and 7, each 2 ns: 6..10 (max(6 + 4, 7 + 2)).
  // d0's: 7..9, ready at 8: 8..12.
  const sched::Schedule s = reduced_gpipe();
  const sim::SimResult r = run(s, reduced(2));
  const sched::Span d1 = span_of(r, 1, ActionKind::kReduceGrad);
  CHECK((d1.start_ns == 6 && d1.end_ns == 10));
  const sched::Span d0 = span_of(r, 0, ActionKind::kReduceGrad);
  CHECK((d0.start_ns == 8 && d0.end_ns == 12));
  CHECK(r.makespan_ns == 12);
  // Many small buckets: the lane waits for each; the last ends one bucket after the backward.
  const sim::SimResult fine = run(s, reduced(4));  // d0: ready 7.5 -> 7, end max(7 + 4, 9 + 1) = 11
  CHECK(span_of(fine, 0, ActionKind::kReduceGrad).end_ns == 11);
}

TEST_CASE("without overlap REDUCE_GRAD holds the stream, and the lane serves one collective at a time",
          "[simulator][dp]") {
  // Two stages on one device, F=1 B=2, reductions of 4:
  //   overlap:  |0F0|1F0|1B0 1B0|0B0 0B0|         lane: 1 reduce 4..8, 0 reduce 8..12
  //   blocking: |0F0|1F0|1B0 1B0|1 reduce....|0B0 0B0|0 reduce....|   ends 14
  const sched::Schedule s = from_csv("0F0,1F0,1B0,1REDUCE_GRAD,0B0,0REDUCE_GRAD\n");
  sim::CostModel model = reduced(1);
  const sim::SimResult overlap = run(s, model);
  CHECK((span_of(overlap, 1, ActionKind::kReduceGrad).start_ns == 4 && span_of(overlap, 1, ActionKind::kReduceGrad).end_ns == 8));
  CHECK(span_of(overlap, 0, ActionKind::kBackward).start_ns == 4);
  CHECK((span_of(overlap, 0, ActionKind::kReduceGrad).start_ns == 8 && span_of(overlap, 0, ActionKind::kReduceGrad).end_ns == 12));
  CHECK(overlap.makespan_ns == 12);
  model.overlap_grad_reduce = false;
  const sim::SimResult blocking = run(s, model);
  CHECK(span_of(blocking, 0, ActionKind::kBackward).start_ns == 8);
  CHECK((span_of(blocking, 0, ActionKind::kReduceGrad).start_ns == 10 && span_of(blocking, 0, ActionKind::kReduceGrad).end_ns == 14));
  CHECK(blocking.makespan_ns == 14);
}

TEST_CASE("UNSHARD gates its stage's computes and holds the gathered parameters until RESHARD", "[simulator][dp]") {
  const sched::Schedule s = from_csv("0UNSHARD,0F0,0B0,0RESHARD\n");
  sim::CostModel model = sim::uniform_cost_model(1, 1, 2);
  model.stages[0].unshard_ns = 5;
  model.stages[0].unshard_bytes = 100;
  const sim::SimResult r = run(s, model);
  const sched::Span unshard = span_of(r, 0, ActionKind::kUnshard);
  CHECK((unshard.lane == Lane::kCollective && unshard.start_ns == 0 && unshard.end_ns == 5));
  CHECK((span_of(r, 0, ActionKind::kForward).start_ns == 5 && span_of(r, 0, ActionKind::kBackward).end_ns == 8));
  CHECK(span_of(r, 0, ActionKind::kReshard).start_ns == 8);
  CHECK(r.devices[0].memory.peak_activation_bytes == 100);
  CHECK(r.timeline.memory.back().bytes == 0);  // freed again (the uniform model holds no static bytes)
}

TEST_CASE("the step adds each device's optimizer step and parameter gather after its last collective",
          "[simulator][dp]") {
  const sched::Schedule s = reduced_gpipe();
  sim::CostModel model = reduced(1);
  model.stages[0].optimizer_step_ns = 3;
  model.stages[0].param_gather_ns = 1;
  model.stages[1].optimizer_step_ns = 10;
  const sim::SimResult r = run(s, model);
  // d0 ends at 13, + 4; d1 at 11, + 10: the step is 21.
  CHECK(r.makespan_ns == 13);
  CHECK(r.step_ns == 21);
  CHECK(r.devices[0].optimizer_ns == 4);
  CHECK(r.devices[1].optimizer_ns == 10);
  CHECK(r.throughput_samples_per_s == Approx(2 * 1e9 / 21));
}

TEST_CASE("a reduction on a link the pipeline sends on takes turns with the sends", "[simulator][dp]") {
  // GPipe K=2 M=2, F=1 B=2, transfers of 3 on each direction's link, stage 1's reduction of 4
  // driving the link d1 sends its gradients on (its NIC):
  //   d1: F0 4..5, F1 7..8, B0 8..10, B1 10..12; SEND_B0 on the link 10..13, SEND_B1 13..16
  //   reduction after SEND_B1 in the program: alone 12..16, taking turns 16..20 (after the send)
  //   reduction before SEND_B1: 13..17 (after SEND_B0), and SEND_B1 waits for it: 17..20, so d0's
  //   B1 starts at 20 instead of 16 and its own reduction ends at 26 instead of 22
  const std::string d0 = "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD\n";
  const sched::Schedule after = from_csv(d0 + "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1,1REDUCE_GRAD\n");
  const sched::Schedule before = from_csv(d0 + "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1REDUCE_GRAD,1SEND_B1\n");
  sim::CostModel model = sim::uniform_cost_model(2, 1, 2, 3);
  for (sim::StageCost& c : model.stages) c.reduce_grad_ns = 4;
  const sim::SimResult alone = run(after, model);
  CHECK((span_of(alone, 1, ActionKind::kReduceGrad).start_ns == 12 && span_of(alone, 1, ActionKind::kReduceGrad).end_ns == 16));
  CHECK(alone.makespan_ns == 22);
  model.stages[1].reduce_grad_link = model.link_of[1 * 2 + 0];
  model.stages[1].reduce_grad_link_ns = 4;
  const sim::SimResult turns = run(after, model);
  CHECK((span_of(turns, 1, ActionKind::kReduceGrad).start_ns == 16 && span_of(turns, 1, ActionKind::kReduceGrad).end_ns == 20));
  CHECK(turns.makespan_ns == 22);
  const sim::SimResult first = run(before, model);
  CHECK((span_of(first, 1, ActionKind::kReduceGrad).start_ns == 13 && span_of(first, 1, ActionKind::kReduceGrad).end_ns == 17));
  CHECK(span_of(first, 0, ActionKind::kBackward).start_ns == 13);  // B0 as before: its data left at 10
  CHECK((span_of(first, 0, ActionKind::kReduceGrad).start_ns == 22 && span_of(first, 0, ActionKind::kReduceGrad).end_ns == 26));
  CHECK(first.makespan_ns == 26);
  model.stages[1].reduce_grad_link = 7;
  auto refused = sim::simulate(before, model);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("stages[1].reduce_grad_link is 7"));
}
