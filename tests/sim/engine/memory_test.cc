// The memory model: stashed activations per stage for GPipe and 1F1B, with and without
// re-materialization, the I/W release rule, the static part and the fits check.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/simulator.h"

using namespace pipeworks;
using sched::ScheduleKind;

namespace {

// Distinct sizes per stage so a wrong stage shows: stash 1000(s+1), input 10(s+1), params 7, grads 5, opt 3.
sim::CostModel sized_model(int k) {
  auto model = sim::uniform_cost_model(k, 3, 5);
  for (int s = 0; s < k; ++s) {
    auto& c = model.stages[static_cast<std::size_t>(s)];
    c.stash_bytes = 1000 * (s + 1);
    c.input_bytes = 10 * (s + 1);
    c.param_bytes = 7;
    c.grad_bytes = 5;
    c.optimizer_bytes = 3;
  }
  return model;
}

sim::SimResult run(ScheduleKind kind, int k, int m, bool recompute, bool lowered) {
  auto schedule = sched::generate(kind, sched::ScheduleShape{k, m, {}});
  REQUIRE(schedule.ok());
  if (recompute) schedule = sched::add_recompute(*schedule);
  REQUIRE(schedule.ok());
  if (lowered) schedule = sched::lower_comm(*schedule);
  REQUIRE(schedule.ok());
  auto r = sim::simulate(*schedule, sized_model(k));
  if (!r) FAIL(r.error().message);
  return *r;
}

}  // namespace

TEST_CASE("peak stashed activations: M on every stage for GPipe, min(M, K-s) for 1F1B", "[memory]") {
  for (int k = 1; k <= 8; ++k) {
    for (int m = 1; m <= 16; ++m) {
      for (bool lowered : {false, true}) {
        INFO("K=" << k << " M=" << m << " lowered " << lowered);
        const auto gpipe = run(ScheduleKind::kGPipe, k, m, false, lowered);
        const auto one_f = run(ScheduleKind::kOneFOneB, k, m, false, lowered);
        for (int s = 0; s < k; ++s) {
          const auto i = static_cast<std::size_t>(s);
          CHECK(gpipe.devices[i].memory.peak_activation_bytes == m * 1000 * (s + 1));
          CHECK(one_f.devices[i].memory.peak_activation_bytes == std::min(m, k - s) * 1000 * (s + 1));
          CHECK(gpipe.devices[i].memory.peak_bytes == 15 + m * 1000 * (s + 1));
        }
      }
    }
  }
}

TEST_CASE("with re-materialization a stage keeps only its inputs plus one stash", "[memory]") {
  for (int k = 1; k <= 8; ++k) {
    for (int m = 1; m <= 16; ++m) {
      INFO("K=" << k << " M=" << m);
      const auto gpipe = run(ScheduleKind::kGPipe, k, m, true, true);
      const auto one_f = run(ScheduleKind::kOneFOneB, k, m, true, false);
      for (int s = 0; s < k; ++s) {
        const auto i = static_cast<std::size_t>(s);
        CHECK(gpipe.devices[i].memory.peak_activation_bytes == m * 10 * (s + 1) + 1000 * (s + 1));
        CHECK(one_f.devices[i].memory.peak_activation_bytes == std::min(m, k - s) * 10 * (s + 1) + 1000 * (s + 1));
      }
    }
  }
}

TEST_CASE("memory samples form the step function of every change and return to the static bytes", "[memory]") {
  // K=1, M=2, F=3, B=5, stash 1000, static 15:
  //   t:      0  3  6       11       16
  //   d0:     F0 F1 B0------B1------|
  //   bytes:  15 1015 2015  1015     15
  const auto r = run(ScheduleKind::kGPipe, 1, 2, false, false);
  const std::vector<sched::MemorySample> expected = {{0, 0, 15}, {0, 3, 1015}, {0, 6, 2015}, {0, 11, 1015}, {0, 16, 15}};
  CHECK(r.timeline.memory == expected);
  const auto stats = sched::compute_stats(r.timeline);
  CHECK(stats.devices[0].peak_bytes == r.devices[0].memory.peak_bytes);
  CHECK(r.devices[0].memory.param_bytes == 7);
  CHECK(r.devices[0].memory.grad_bytes == 5);
  CHECK(r.devices[0].memory.optimizer_bytes == 3);
}

TEST_CASE("with an I/W split the activations are released when W ends", "[memory]") {
  using sched::ActionKind;
  sched::Schedule schedule;
  schedule.num_stages = 1;
  schedule.num_microbatches = 1;
  schedule.placement = {0};
  schedule.programs = {{{0, ActionKind::kForward, 0}, {0, ActionKind::kBackwardInput, 0},
                        {0, ActionKind::kBackwardWeight, 0}}};
  auto model = sized_model(1);  // I = 2, W = 3
  auto r = sim::simulate(schedule, model);
  REQUIRE(r.ok());
  // F0 [0,3) +1000, I0 [3,5) nothing, W0 [5,8) -1000.
  const std::vector<sched::MemorySample> expected = {{0, 0, 15}, {0, 3, 1015}, {0, 8, 15}};
  CHECK(r->timeline.memory == expected);
  CHECK(r->makespan_ns == 8);
}

TEST_CASE("a device whose peak exceeds its capacity does not fit", "[memory]") {
  auto schedule = sched::gpipe(sched::ScheduleShape{2, 4, {}});
  REQUIRE(schedule.ok());
  auto model = sized_model(2);
  model.device_memory_bytes = {15 + 4000, 15 + 8000 - 1};  // d0 exactly fits, d1 one byte short
  auto r = sim::simulate(*schedule, model);
  REQUIRE(r.ok());
  CHECK(r->devices[0].memory.fits);
  CHECK_FALSE(r->devices[1].memory.fits);
  CHECK(r->devices[1].memory.capacity_bytes == 15 + 8000 - 1);
  CHECK_FALSE(r->fits);
  model.device_memory_bytes = {0, 0};  // unknown capacity: always fits
  r = sim::simulate(*schedule, model);
  REQUIRE(r.ok());
  CHECK(r->fits);
}
