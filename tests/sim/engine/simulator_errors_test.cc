// Inputs the simulator must refuse with a message instead of crashing or hanging: invalid cost
// models, schedules that do not match them, and schedules that cannot progress.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/simulator.h"

using namespace pipeworks;
using sched::Action;
using sched::ActionKind;

namespace {

std::string error_of(const sched::Schedule& schedule, const sim::CostModel& model) {
  auto r = sim::simulate(schedule, model);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

sched::Schedule gpipe(int k, int m, bool lowered = false) {
  auto s = sched::gpipe(sched::ScheduleShape{k, m, {}});
  REQUIRE(s.ok());
  if (lowered) s = sched::lower_comm(*s);
  REQUIRE(s.ok());
  return *s;
}

using Catch::Matchers::Contains;

}  // namespace

TEST_CASE("invalid cost models are rejected with the offending field", "[errors]") {
  const auto schedule = gpipe(2, 2);
  auto base = sim::uniform_cost_model(2, 3, 5, 1);
  REQUIRE(sim::check_cost_model(base).ok());

  auto m = base;
  m.stages[1].forward_ns = 0;
  CHECK_THAT(error_of(schedule, m), Contains("stages[1].forward_ns is 0"));
  m = base;
  m.stages[0].backward_ns = -4;
  CHECK_THAT(error_of(schedule, m), Contains("stages[0].backward_ns is -4"));
  m = base;
  m.stages[0].stash_bytes = -1;
  CHECK_THAT(error_of(schedule, m), Contains("stages[0].stash_bytes"));
  m = base;
  m.stages[0].forward_ns = std::int64_t{1} << 51;
  CHECK_THAT(error_of(schedule, m), Contains("larger than the limit"));
  m = base;
  m.links[0].bandwidth_bytes_per_s = std::nan("");
  CHECK_THAT(error_of(schedule, m), Contains("bandwidth_bytes_per_s"));
  m = base;
  m.links[1].bandwidth_bytes_per_s = 0;
  CHECK_THAT(error_of(schedule, m), Contains("links[1].bandwidth_bytes_per_s"));
  m = base;
  m.links[0].bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  CHECK_THAT(error_of(schedule, m), Contains("finite"));
  m = base;
  m.links[0].latency_ns = -1;
  CHECK_THAT(error_of(schedule, m), Contains("links[0].latency_ns"));
  m = base;
  m.device_memory_bytes.pop_back();
  CHECK_THAT(error_of(schedule, m), Contains("device_memory_bytes has 1 entries for 2 devices"));
  m = base;
  m.link_of[0] = 0;
  CHECK_THAT(error_of(schedule, m), Contains("diagonal"));
  m = base;
  m.link_of[1] = 9;
  CHECK_THAT(error_of(schedule, m), Contains("not a link index"));
  m = base;
  m.microbatch_size = 0;
  CHECK_THAT(error_of(schedule, m), Contains("microbatch_size"));
  m = base;
  m.per_action_overhead_ns = -1;
  CHECK_THAT(error_of(schedule, m), Contains("per_action_overhead_ns"));
  m = base;
  m.stages.pop_back();
  CHECK_THAT(error_of(schedule, m), Contains("the schedule has 2 stages but the cost model has 1"));
  CHECK_THAT(error_of(schedule, sim::CostModel{}), Contains("no stages"));
}

TEST_CASE("zero-length optional kinds, overhead and transfers are allowed", "[errors]") {
  auto m = sim::uniform_cost_model(2, 3, 5, 0);
  m.stages[0].recompute_ns = 0;
  m.stages[0].backward_weight_ns = 0;
  auto r = sim::simulate(gpipe(2, 2, true), m);
  CHECK(r.ok());
}

TEST_CASE("sums that would overflow the time range are rejected", "[errors]") {
  // 4096 actions of 2^50 ns each exceed the simulator's range (int64 max / 4 = 2^61 - 1).
  const auto schedule = gpipe(1, 2048);
  const auto m = sim::uniform_cost_model(1, std::int64_t{1} << 50, std::int64_t{1} << 50);
  CHECK_THAT(error_of(schedule, m), Contains("total duration overflows the simulator's time range"));
}

TEST_CASE("an idle slowdown that could carry the sums past the time range is rejected", "[errors]") {
  // 4096 actions of 2^48 ns fit (2^61 - 1); each may take up to 1000x its time after an idle.
  const auto schedule = gpipe(1, 2048);
  auto m = sim::uniform_cost_model(1, std::int64_t{1} << 48, std::int64_t{1} << 48);
  REQUIRE(sim::simulate(schedule, m).ok());
  m.idle_slowdown = 1000;
  m.idle_slowdown_after_ns = 1;
  CHECK_THAT(error_of(schedule, m), Contains("total duration overflows the simulator's time range"));
}

TEST_CASE("sums near the range are checked op by op where a bound over the op classes is too coarse", "[errors]") {
  // One F of 2^50 ns (the stage's first, a class of its own) among 4095 ops of 1 ns: the longest
  // class times the op count passes 2^61, the actual sum does not.
  const auto schedule = gpipe(1, 2048);
  auto m = sim::uniform_cost_model(1, 1, 1);
  m.stages[0].first_forward_ns = std::int64_t{1} << 50;
  auto r = sim::simulate(schedule, m);
  REQUIRE(r.ok());
  CHECK(r->makespan_ns == (std::int64_t{1} << 50) + 4095);
  // 2^50 bytes stashed by each of 8192 forwards pass int64 (2^63 - 1).
  m = sim::uniform_cost_model(1, 1, 1);
  m.stages[0].stash_bytes = std::int64_t{1} << 50;
  CHECK_THAT(error_of(gpipe(1, 8192), m), Contains("total memory overflows the simulator's byte range"));
  CHECK(sim::simulate(gpipe(1, 8191), m).ok());  // 8191 x 2^50 < 2^63
}

TEST_CASE("schedules that do not match the cost model or miss pieces are rejected", "[errors]") {
  const auto model = sim::uniform_cost_model(2, 3, 5, 1);
  auto s = gpipe(2, 2, true);
  s.programs[1].erase(s.programs[1].begin());  // drop 1RECV_F0
  CHECK_THAT(error_of(s, model), Contains("its partner 1RECV_F0 is not in the schedule"));

  s = gpipe(2, 2);
  s.programs[1].push_back(Action{1, ActionKind::kForward, 0});
  CHECK_THAT(error_of(s, model), Contains("occurs 2 times"));

  s = gpipe(2, 2);
  s.programs[0].push_back(Action{1, ActionKind::kForward, 5});
  CHECK_THAT(error_of(s, model), Contains("out of range"));

  s = gpipe(2, 2);
  s.programs[0].push_back(s.programs[1].back());
  s.programs[1].pop_back();
  CHECK_THAT(error_of(s, model), Contains("stage 1 is placed on device 1"));

  s = gpipe(2, 2);
  s.programs[0].erase(s.programs[0].begin());  // drop 0F0: 1F0 and 0B0 lose a dependency
  CHECK_THAT(error_of(s, model), Contains("which the schedule does not contain"));

  auto no_link = model;
  no_link.link_of[1] = -1;  // 0 -> 1
  CHECK_THAT(error_of(gpipe(2, 2, true), no_link), Contains("no link from device 0 to device 1"));

  auto three = sim::uniform_cost_model(3, 3, 5);
  s = gpipe(3, 1);
  s.placement = {0, 1};
  CHECK_THAT(error_of(s, three), Contains("placement names 2 stages"));
}

TEST_CASE("a schedule that cannot progress is reported with each device's blocked action", "[errors]") {
  // d0 runs 0B0 before 0F0: it waits for its own later action, and d1 waits for 0F0.
  sched::Schedule s;
  s.num_stages = 2;
  s.num_microbatches = 1;
  s.placement = {0, 1};
  s.programs = {{{0, ActionKind::kBackward, 0}, {0, ActionKind::kForward, 0}},
                {{1, ActionKind::kForward, 0}, {1, ActionKind::kBackward, 0}}};
  const auto msg = error_of(s, sim::uniform_cost_model(2, 3, 5));
  CHECK_THAT(msg, Contains("schedule cannot progress"));
  CHECK_THAT(msg, Contains("device 0 blocked at position 0 (0B0) waits for 0F0 on device 0"));
  CHECK_THAT(msg, Contains("device 1 blocked at position 0 (1F0) waits for 0F0 on device 0"));
}

TEST_CASE("the naive 1F1B send order deadlocks with blocking transfers but not with overlapped ones", "[errors]") {
  // passes.h: "d1: ... B0 SEND_B0 RECV_F1 ..." -- d0 blocks in SEND_F1 while d1 blocks in SEND_B0.
  auto parse = [](std::initializer_list<const char*> tokens) {
    sched::Program p;
    for (const char* t : tokens) p.push_back(*sched::parse_action(t));
    return p;
  };
  sched::Schedule s;
  s.num_stages = 2;
  s.num_microbatches = 2;
  s.placement = {0, 1};
  s.programs = {parse({"0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0B0", "0RECV_B1", "0B1"}),
                parse({"1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1", "1B1", "1SEND_B1"})};
  const auto msg = error_of(s, sim::uniform_cost_model(2, 3, 5, 1, sim::CommMode::kBlocking));
  CHECK_THAT(msg, Contains("device 0 blocked at position 3 (0SEND_F1) waits for its partner 1RECV_F1 on device 1"));
  CHECK_THAT(msg, Contains("device 1 blocked at position 3 (1SEND_B0) waits for its partner 0RECV_B0 on device 0"));
  CHECK(sim::simulate(s, sim::uniform_cost_model(2, 3, 5, 1, sim::CommMode::kOverlap)).ok());
}
