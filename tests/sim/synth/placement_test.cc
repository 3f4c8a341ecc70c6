// Synthesis on a given placement (several stages per device): a V under 1F1B's memory no slower
// than ZB-V and with less bubble than one stage per device, a looped placement no slower than
// interleaved 1F1B, each device's shared cap kept, the device terms of the bound, placement
// errors, and the identity placement giving today's result.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/validate.h"
#include "sched/zero_bubble.h"
#include "sim/synth/in_flight_limits.h"
#include "sim/synth/list_rule.h"
#include "sim/synth/policies.h"
#include "sim/synth/synth_test_costs.h"
#include "sim/synth/synthesize.h"

namespace {

using pipeworks::sim::Bytes;
using pipeworks::sim::CostModel;
using pipeworks::sim::Nanoseconds;
using pipeworks::sim::SearchOptions;
using pipeworks::sim::SynthesisProblem;

const std::vector<int> kV8 = {0, 1, 2, 3, 3, 2, 1, 0};
const std::vector<int> kLooped8 = {0, 1, 2, 3, 0, 1, 2, 3};

SearchOptions fixed_budget(std::int64_t evaluations) { return SearchOptions{60, 1, evaluations}; }

// A family of `kind` on the placement, lowered and simulated.
pipeworks::sim::SimResult placed_family(pipeworks::sched::ScheduleKind kind, int k, int m,
                                        const std::vector<int>& placement, const CostModel& costs,
                                        int virtual_stages = 1) {
  auto schedule = pipeworks::sched::generate(kind, pipeworks::sched::ScheduleShape{k, m, placement}, virtual_stages);
  REQUIRE(schedule.ok());
  return pipeworks::test::simulate_lowered(*schedule, costs);
}

Bytes largest_peak(const pipeworks::sim::SimResult& r) {
  Bytes peak = 0;
  for (const auto& d : r.devices) peak = std::max(peak, d.memory.peak_bytes);
  return peak;
}

// The result lowers, validates, fits `cap` on every device when simulated as a file is, and
// says the step that simulation gives.
void check_result(const pipeworks::sim::SynthesisResult& r, const CostModel& costs, Bytes cap) {
  CHECK(r.best.fits);
  auto lowered = pipeworks::sched::lower_comm(r.best.schedule);
  REQUIRE(lowered.ok());
  CHECK(pipeworks::sched::validate(*lowered).empty());
  const auto simulated = pipeworks::test::simulate_lowered(r.best.schedule, costs);
  for (const auto& d : simulated.devices) CHECK(d.memory.peak_bytes <= cap);
  CHECK(simulated.step_ns == r.best.step_ns());
  CHECK(r.best.step_ns() >= r.bound.step_ns);
}

}  // namespace

TEST_CASE("synth on a V placement under 1F1B memory beats one stage per device and is no slower than zb-v", "[synth]") {
  // K = 8 half stages on 4 devices in a V against the same model cut into 4 whole stages, one a
  // device (each F, I, W and stash twice a half's), both under the cap 1F1B of the 4 stages
  // needs: 4 micro-batches of 2 bytes on device 0.
  const int m = 16;
  for (const auto& [f, i, w, c] : {std::tuple{1'000, 1'000, 1'000, 0}, std::tuple{18'500, 18'100, 9'300, 600}}) {
    INFO("F " << f << " I " << i << " W " << w << " hand-off " << c);
    const CostModel halves = pipeworks::test::placed_synth_costs(8, 4, f, i, w, c);
    CostModel wholes = pipeworks::test::synth_costs(4, 2 * f, 2 * i, 2 * w);
    for (pipeworks::sim::StageCost& s : wholes.stages) s.stash_bytes = 2;
    for (pipeworks::sim::Link& link : wholes.links) link.latency_ns = c;
    const Bytes cap = largest_peak(placed_family(pipeworks::sched::ScheduleKind::kOneFOneB, 4, m, {}, wholes));
    CHECK(cap == 8);
    auto v = pipeworks::sim::synthesize(SynthesisProblem{8, m, halves, cap, kV8}, fixed_budget(300));
    auto one_each = pipeworks::sim::synthesize(SynthesisProblem{4, m, wholes, cap}, fixed_budget(300));
    REQUIRE(v.ok());
    REQUIRE(one_each.ok());
    check_result(*v, halves, cap);
    CHECK(v->best.schedule.placement == kV8);
    const auto zb_v = placed_family(pipeworks::sched::ScheduleKind::kZbV, 8, m, kV8, halves);
    CHECK(largest_peak(zb_v) <= cap);
    CHECK(v->best.step_ns() <= zb_v.step_ns);
    CHECK(v->best.simulated.bubble_fraction < one_each->best.simulated.bubble_fraction);
    CHECK(v->best.step_ns() < one_each->best.step_ns());
    if (c == 0) {
      // Unit costs (x 1000): the V reaches ZB-V's 6M + p - 1 (the middle device's start and
      // work), one stage per device ZB-H1's 3M x 2 + (K-1)(F+I-W) x 2.
      CHECK(v->bound.step_ns == (6 * m + 3) * f);
      CHECK(v->best.step_ns() == (6 * m + 3) * f);
      CHECK(one_each->best.step_ns() == (6 * m + 3 * 2) * f);
    }
  }
}

TEST_CASE("synth on a V placement reaches the bound 6M plus p minus 1 on unit costs", "[synth]") {
  // p = 2: device 1 (stages 1, 2) starts at 1 and then has 2 x 3M units of work; zb-v has the
  // same step (zero_bubble.h), and so does the search.
  const CostModel costs = pipeworks::test::placed_synth_costs(4, 2, 1, 1, 1);
  auto r = pipeworks::sim::synthesize(SynthesisProblem{4, 4, costs, 100, {0, 1, 1, 0}}, fixed_budget(200));
  REQUIRE(r.ok());
  CHECK(r->bound.step_ns == 6 * 4 + 2 - 1);
  CHECK(r->bound.device == 1);
  CHECK_FALSE(r->bound.chain);
  CHECK(r->best.step_ns() == 6 * 4 + 2 - 1);
  CHECK(placed_family(pipeworks::sched::ScheduleKind::kZbV, 4, 4, {0, 1, 1, 0}, costs).step_ns == 6 * 4 + 2 - 1);
  std::vector<std::string> families;
  for (const auto& h : r->hand_written) families.push_back(h.label());
  CHECK(families == std::vector<std::string>{"zb-v", "dualpipe-v"});
}

TEST_CASE("synth on a looped placement is no slower than interleaved 1F1B under its memory", "[synth]") {
  const int m = 8;
  const CostModel costs = pipeworks::test::placed_synth_costs(8, 4, 3, 3, 2, 1);
  const auto interleaved = placed_family(pipeworks::sched::ScheduleKind::kInterleaved1F1B, 8, m, kLooped8, costs, 2);
  const Bytes cap = largest_peak(interleaved);
  auto r = pipeworks::sim::synthesize(SynthesisProblem{8, m, costs, cap, kLooped8}, fixed_budget(300));
  REQUIRE(r.ok());
  check_result(*r, costs, cap);
  CHECK(r->best.step_ns() <= interleaved.step_ns);
  REQUIRE_FALSE(r->hand_written.empty());
  CHECK(r->hand_written.front().label() == "interleaved-1f1b");
}

TEST_CASE("synth keeps each device within the cap its V stages share", "[synth]") {
  // Stage 0 and stage 7 share device 0: the smallest cap holds one micro-batch on each of them,
  // so stage 0 takes one while stage 7 (the later) may take two.
  const CostModel costs = pipeworks::test::placed_synth_costs(8, 4, 5, 4, 2);
  auto limits = pipeworks::sim::in_flight_limits(costs, std::vector<Bytes>(4, 2), 12, kV8, false);
  REQUIRE(limits.ok());
  CHECK(*limits == std::vector<int>{1, 1, 1, 1, 2, 2, 2, 2});
  auto roomier = pipeworks::sim::in_flight_limits(costs, std::vector<Bytes>(4, 6), 12, kV8, false);
  REQUIRE(roomier.ok());
  CHECK(*roomier == std::vector<int>{5, 5, 5, 5, 6, 6, 6, 6});
  for (Bytes cap = 2; cap <= 10; ++cap) {
    INFO("cap " << cap);
    auto r = pipeworks::sim::synthesize(SynthesisProblem{8, 12, costs, cap, kV8}, fixed_budget(100));
    REQUIRE(r.ok());
    check_result(*r, costs, cap);
    const pipeworks::sim::HandWritten* best = pipeworks::sim::best_fitting(r->hand_written);
    if (best != nullptr) CHECK(r->best.step_ns() <= best->evaluation.step_ns());
  }
}

TEST_CASE("synth list rule on a V placement keeps every device within its shared cap", "[synth]") {
  const CostModel costs = pipeworks::test::placed_synth_costs(8, 4, 3, 4, 2);
  auto times = pipeworks::sim::synth_stage_times(costs, kV8);
  REQUIRE(times.ok());
  CHECK((*times)[3].handoff_forward_ns == 0);  // stages 3 and 4 share device 3
  for (const Bytes cap : {Bytes{2}, Bytes{3}, Bytes{5}, Bytes{9}}) {
    const std::vector<Bytes> caps(4, cap);
    auto limits = pipeworks::sim::in_flight_limits(costs, caps, 16, kV8, false);
    REQUIRE(limits.ok());
    const auto memory = pipeworks::sim::device_memory(costs, caps, kV8, false);
    for (const auto& policy : pipeworks::sim::list_policies(*limits, 16)) {
      auto built = pipeworks::sim::list_schedule(*times, 16, policy, memory);
      REQUIRE(built.ok());
      CHECK(built->placement == kV8);
      CHECK(pipeworks::sched::validate(*built).empty());
      for (const auto& d : pipeworks::test::simulate_lowered(*built, costs).devices) CHECK(d.memory.peak_bytes <= cap);
    }
  }
}

TEST_CASE("synth lower bound holds every family of a V or looped placement on varied costs", "[synth]") {
  for (const int p : {2, 3, 4}) {
    for (const int m : {1, p, 3 * p}) {
      for (const bool v_shape : {true, false}) {
        const int k = 2 * p;
        std::vector<int> placed = pipeworks::sched::v_placement(k);
        if (!v_shape) {
          for (int s = 0; s < k; ++s) placed[static_cast<std::size_t>(s)] = s % p;
        }
        CostModel costs = pipeworks::test::placed_synth_costs(k, p, 5, 4, 3, 3);
        costs.per_action_overhead_ns = 2;
        costs.stages.front().first_forward_ns = 9;
        costs.stages.back().first_backward_ns = 4;
        costs.stages.back().optimizer_step_ns = 6;
        costs.stages[1].optimizer_step_ns = 5;
        auto times = pipeworks::sim::synth_stage_times(costs, placed);
        REQUIRE(times.ok());
        const auto bound = pipeworks::sim::step_lower_bound(*times, m, placed);
        const std::vector<Bytes> caps(static_cast<std::size_t>(p), 1000);
        auto families = pipeworks::sim::hand_written_families(k, m, costs, caps, false, placed);
        REQUIRE(families.ok());
        INFO("p " << p << " M " << m << (v_shape ? " V" : " looped"));
        if (v_shape || m % p == 0) CHECK_FALSE(families->empty());
        for (const auto& f : *families) CHECK(f.evaluation.step_ns() >= bound.step_ns);
        auto found = pipeworks::sim::synthesize(SynthesisProblem{k, m, costs, 1000, placed}, fixed_budget(100));
        REQUIRE(found.ok());
        CHECK(found->best.step_ns() >= bound.step_ns);
      }
    }
  }
}

TEST_CASE("synth refuses a placement that does not place the stages on the cost model's devices", "[synth]") {
  const CostModel costs = pipeworks::test::placed_synth_costs(4, 2, 1, 1, 1);
  const auto refused = [&](const SynthesisProblem& problem, const std::string& words) {
    auto r = pipeworks::sim::synthesize(problem, fixed_budget(10));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains(words));
  };
  refused({4, 4, costs, 8, {0, 1, 0}}, "placement 0,1,0 on the cost model's 2 devices: placement names 3 stages but "
                                        "the schedule has 4");
  refused({4, 4, costs, 8, {0, 1, 2, 0}}, "stage 2 is placed on device 2, outside 0..1");
  refused({4, 4, costs, 8, {0, 0, 0, 0}}, "placement leaves device 1 without a stage");
  refused({4, 4, costs, 8, {}}, "one stage on each device");
  refused({4, 4, costs, 1, {0, 1, 1, 0}},
          "no schedule fits a memory cap of 1 B on device 0: its stages 0, 3 hold 0 B of parameters, gradients and "
          "optimizer state, and one micro-batch's activations take 2 B more");
}

TEST_CASE("synth with the identity placement given is the search without one", "[synth]") {
  const CostModel costs = pipeworks::test::synth_costs(4, 7, 6, 3);
  for (const Bytes cap : {Bytes{3}, Bytes{5}, Bytes{12}}) {
    auto without = pipeworks::sim::synthesize(SynthesisProblem{4, 12, costs, cap}, fixed_budget(200));
    auto identity = pipeworks::sim::synthesize(SynthesisProblem{4, 12, costs, cap, {0, 1, 2, 3}}, fixed_budget(200));
    REQUIRE(without.ok());
    REQUIRE(identity.ok());
    CHECK(identity->best.schedule == without->best.schedule);
    CHECK(identity->best.step_ns() == without->best.step_ns());
    CHECK(identity->bound.step_ns == without->bound.step_ns);
    CHECK(identity->in_flight_limits == without->in_flight_limits);
    CHECK(identity->hand_written.size() == without->hand_written.size());
    CHECK(identity->search.evaluations == without->search.evaluations);
    CHECK(identity->origin == without->origin);
  }
}
