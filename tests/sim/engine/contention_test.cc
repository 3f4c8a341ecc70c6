// Contention between devices of one group: the overlap share of each device's compute, and the
// simulator's slow-down under uniform costs (a closed form: equal slow-downs scale the whole
// timeline, so the overlap shares stay what they were at full speed).
#include <catch2/catch.hpp>

#include "sched/generators.h"
#include "sim/engine/contention.h"
#include "sim/engine/simulator.h"

using namespace pipeworks;

TEST_CASE("overlap fractions: the share of a device's busy time while another device of its group is busy") {
  //   device 0  [0,10)      [20,30)                      busy 20, shared 5 + 5 = 10  -> 1/2
  //   device 1       [5 ......... 25)   [40,50)          busy 30, shared 5 + 5 = 10  -> 1/3
  //   device 2                                [100,110)  busy 10, shared 0           -> 0
  const std::vector<std::vector<sim::BusyInterval>> busy = {
      {{20, 30}, {0, 10}}, {{5, 25}, {40, 50}}, {{100, 110}}};
  const std::vector<double> f = sim::overlap_fractions(busy, {});
  REQUIRE(f.size() == 3);
  CHECK(f[0] == Approx(0.5));
  CHECK(f[1] == Approx(1.0 / 3.0));
  CHECK(f[2] == 0.0);
  // Devices 0 and 1 in different groups never slow each other.
  CHECK(sim::overlap_fractions(busy, {0, 1, 0}) == std::vector<double>{0.0, 0.0, 0.0});
  // A device that is never busy has no share.
  CHECK(sim::overlap_fractions({{}, {{0, 5}}}, {}) == std::vector<double>{0.0, 0.0});
}

TEST_CASE("contention: GPipe K=2 M=2 under uniform costs overlaps half of each device's compute", "[simulator]") {
  // F = 1, B = 2, ideal comm:       t: 0  1  2  3  4  5  6  7  8
  //                               d0: F0 F1 .  .  .  B0 B0 B1 B1     busy 6, shared [1,2) [5,7) = 3
  //                               d1: .  F0 F1 B0 B0 B1 B1 .  .      busy 6, shared 3
  // Each device overlaps 1/2: with factor 3 both slow down by 1 + 2 x 1/2 = 2, every op doubles,
  // the shares stay 1/2, and the makespan is 2 x 9.
  auto schedule = sched::generate(sched::ScheduleKind::kGPipe, sched::ScheduleShape{2, 2, {}});
  REQUIRE(schedule.ok());
  sim::CostModel costs = sim::uniform_cost_model(2, 1000, 2000);
  REQUIRE(sim::simulate(*schedule, costs)->makespan_ns == 9000);
  costs.contention_factor = {3.0, 3.0};
  auto contended = sim::simulate(*schedule, costs);
  REQUIRE(contended.ok());
  CHECK(contended->makespan_ns == 18000);
  CHECK(contended->devices[0].contention_slowdown == Approx(2.0));
  CHECK(contended->devices[1].contention_slowdown == Approx(2.0));
  CHECK(contended->devices[0].busy_ns == 12000);

  costs.contention_group = {0, 1};  // two machines: no contention
  CHECK(sim::simulate(*schedule, costs)->makespan_ns == 9000);
  costs.contention_group.clear();
  costs.contention_factor = {0.5, 1.0};
  auto refused = sim::simulate(*schedule, costs);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("contention_factor[0]") != std::string::npos);
}

TEST_CASE("contention: one micro-batch under GPipe never overlaps, so nothing slows", "[simulator]") {
  auto schedule = sched::generate(sched::ScheduleKind::kGPipe, sched::ScheduleShape{2, 1, {}});
  REQUIRE(schedule.ok());
  sim::CostModel costs = sim::uniform_cost_model(2, 1000, 2000);
  costs.contention_factor = {2.0, 2.0};
  auto r = sim::simulate(*schedule, costs);
  REQUIRE(r.ok());
  CHECK(r->makespan_ns == 6000);
  CHECK(r->devices[0].contention_slowdown == 1.0);
}
