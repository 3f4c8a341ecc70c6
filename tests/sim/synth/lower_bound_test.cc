// The step's lower bound: earliest start + work + tail per device and the last micro-batch's
// chain, on hand-computed cases, and never above a simulated schedule.
#include <catch2/catch.hpp>

#include "sim/synth/hand_written.h"
#include "sim/synth/lower_bound.h"
#include "sim/synth/synth_test_costs.h"
#include "sim/synth/synthesize.h"

using pipeworks::sim::SynthStageTimes;

TEST_CASE("synth lower bound on uniform costs is 3M plus K minus 1", "[synth]") {
  const std::vector<SynthStageTimes> times(4, SynthStageTimes{true, 1, 1, 1, 2, 1, 2, 0, 0, 0});
  const auto bound = pipeworks::sim::step_lower_bound(times, 8);
  CHECK(bound.step_ns == 3 * 8 + 4 - 1);
  CHECK(bound.device == 3);
}

TEST_CASE("synth lower bound counts hand-offs first passes and the optimizer tail", "[synth]") {
  // Stage 0: F 2, I 3, W 1, first F 4, hand-off 5 to stage 1; stage 1: B 6 (no split; I 4, W 3),
  // first B 9, tail 7.
  SynthStageTimes s0{true, 2, 3, 1, 4, 4, 4, 5, 5, 0};
  SynthStageTimes s1{false, 2, 4, 3, 6, 2, 9, 0, 0, 7};
  const auto bound = pipeworks::sim::step_lower_bound({s0, s1}, 3);
  // Stage 1: starts at min(4, 2) + 5 (micro-batch 0 need not be stage 0's first F), works
  // 2 + 2 x 2 + min(3 x (I 4 + W 3), first B 9 + 2 x 6) = 27, then 7 of tail = 41; stage 0:
  // 4 + 2 x 2 + 3 x 4 = 20; the chain less.
  CHECK(bound.step_ns == 41);
  CHECK_FALSE(bound.chain);
  CHECK(bound.device == 1);
  CHECK(pipeworks::sim::gap_to_bound(82, 41) == Approx(1.0));
  CHECK(pipeworks::sim::gap_to_bound(5, 0) == 0);
}

TEST_CASE("synth lower bound takes the last micro-batch's chain where M is small against K", "[synth]") {
  // K = 4, M = 2, F = I = W = 1, hand-offs of 2 both ways, stage 0's later F's 3 (its first 1):
  // the chain is device 0's two F's 1 + 3, then 3 x (2 + 1) down, 3 x (1 + 2) back up and device
  // 0's I + W 2 = 24; the last device's drain starts at 3 x (1 + 2) = 9 (micro-batch 0 may be
  // stage 0's first F) and is 9 + 2 F + 2 I + (2 + 3 + 3) back + 2 = 23; its work 9 + 2 x 3 = 15.
  std::vector<SynthStageTimes> times(4, SynthStageTimes{true, 1, 1, 1, 2, 1, 2, 2, 2, 0});
  times[0].forward_ns = 3;
  const auto bound = pipeworks::sim::step_lower_bound(times, 2);
  CHECK(bound.step_ns == 24);
  CHECK(bound.chain);
  CHECK(bound.device == 0);
}

TEST_CASE("synth lower bound takes a device's drain where its W's are short and device 0's backward long", "[synth]") {
  // M = 2; stage 0: F 1, I 2, W 2; stage 1: F 3, I 3, W 1, no hand-off cost. Device 1 starts at 1
  // and works 2 x 3 + 2 x (3 + 1) = 14 (15 in all), but its last I ends no sooner than 1 + 6 + 6,
  // and device 0 then runs that micro-batch's I + W, 4: 17. Device 0: 2 x 5 = 10; the chain 12.
  //
  //   d0: F0 F1 .  .  .  .  .  .  I0 I0 W0 W0 .  .  I1 I1 W1 W1        ends 17
  //   d1: .  F0 F0 F0 I0 I0 I0 F1 F1 F1 I1 I1 I1 W0 W1
  const SynthStageTimes s0{true, 1, 2, 2, 4, 1, 4, 0, 0, 0};
  const SynthStageTimes s1{true, 3, 3, 1, 4, 3, 4, 0, 0, 0};
  const auto bound = pipeworks::sim::step_lower_bound({s0, s1}, 2);
  CHECK(bound.step_ns == 17);
  CHECK(bound.drain);
  CHECK_FALSE(bound.chain);
  CHECK(bound.device == 1);
}

TEST_CASE("synth lower bound holds every hand-written family and the search on varied costs", "[synth]") {
  for (const int k : {1, 2, 4, 6}) {
    for (const int m : {1, 2, 8}) {
      for (const pipeworks::sim::Nanoseconds overhead : {0, 3}) {
        auto costs = pipeworks::test::synth_costs(k, 5, 4, 3);
        costs.per_action_overhead_ns = overhead;
        for (pipeworks::sim::Link& link : costs.links) link = pipeworks::sim::Link{3, 1e9, 2};
        costs.stages.front().first_forward_ns = 9;
        costs.stages.back().first_backward_ns = 4;
        costs.stages.back().optimizer_step_ns = 6;
        for (pipeworks::sim::StageCost& c : costs.stages) c.output_bytes = 10;
        auto times = pipeworks::sim::synth_stage_times(costs);
        REQUIRE(times.ok());
        const auto bound = pipeworks::sim::step_lower_bound(*times, m);
        const std::vector<pipeworks::sim::Bytes> caps(static_cast<std::size_t>(k), 1000);
        auto families = pipeworks::sim::hand_written_families(k, m, costs, caps);
        REQUIRE(families.ok());
        INFO("K " << k << " M " << m << " overhead " << overhead);
        for (const auto& f : *families) CHECK(f.evaluation.step_ns() >= bound.step_ns);
        auto found = pipeworks::sim::synthesize({k, m, costs, 1000}, {60, 1, 100});
        REQUIRE(found.ok());
        CHECK(found->best.step_ns() >= bound.step_ns);
      }
    }
  }
}

TEST_CASE("synth lower bound holds schedules that re-materialize with a cheaper forward without the graph", "[synth]") {
  // F 5 with the graph, 2 without it, R 5: a re-materialized micro-batch reaches the next stage
  // sooner, so the bound counts the cheaper F on the way and its R on the way back.
  for (const int k : {2, 3, 4}) {
    for (const int m : {2, 5, 8}) {
      auto costs = pipeworks::test::synth_costs(k, 5, 4, 3);
      for (pipeworks::sim::StageCost& c : costs.stages) c.forward_no_grad_ns = 2;
      auto times = pipeworks::sim::synth_stage_times(costs);
      REQUIRE(times.ok());
      const auto bound = pipeworks::sim::step_lower_bound(*times, m);
      const std::vector<pipeworks::sim::Bytes> caps(static_cast<std::size_t>(k), 2);
      auto families = pipeworks::sim::hand_written_families(k, m, costs, caps, true);
      REQUIRE(families.ok());
      INFO("K " << k << " M " << m);
      for (const auto& f : *families) CHECK(f.evaluation.step_ns() >= bound.step_ns);
      auto found = pipeworks::sim::synthesize({k, m, costs, 2}, {60, 1, 300});
      REQUIRE(found.ok());
      CHECK(found->best.step_ns() >= bound.step_ns);
    }
  }
}
