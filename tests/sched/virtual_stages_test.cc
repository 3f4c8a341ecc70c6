// Interleaved 1F1B and looped BFS: their pictures (the ones virtual_stages.h describes), their
// shape errors, the bubble shrinking by v, validity and lowering for a range of p, v and M.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/text_grid.h"
#include "sched/unit_timing.h"
#include "sched/validate.h"

using namespace pipeworks::sched;

namespace {

std::string grid_of(ScheduleKind kind, int k, int m, int v) {
  auto schedule = generate(kind, ScheduleShape{k, m, {}}, v);
  REQUIRE(schedule.ok());
  auto grid = render_grid(*schedule);
  REQUIRE(grid.ok());
  return *grid;
}

}  // namespace

TEST_CASE("interleaved 1F1B p=2 v=2 M=4 matches the picture", "[virtual_stages]") {
  CHECK(grid_of(ScheduleKind::kInterleaved1F1B, 4, 4, 2) ==
        "t:    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17\n"
        "d0: 0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1   . 2B2   . 2B3 0B2 0B3\n"
        "d1:   . 1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3   .\n");
}

TEST_CASE("looped BFS p=2 v=2 M=2 matches the picture", "[virtual_stages]") {
  CHECK(grid_of(ScheduleKind::kLoopedBfs, 4, 2, 2) ==
        "t:    0   1   2   3   4   5   6   7   8   9\n"
        "d0: 0F0 0F1 2F0 2F1   .   . 2B1 2B0 0B1 0B0\n"
        "d1:   . 1F0 1F1 3F0 3F1 3B1 3B0 1B1 1B0   .\n");
}

TEST_CASE("interleaved 1F1B: makespan 2(vM + p - 1) in unit time, v times less bubble than 1F1B", "[virtual_stages]") {
  for (int p = 1; p <= 4; ++p) {
    for (int v = 1; v <= 3; ++v) {
      for (int m = p; m <= 4 * p; m += p) {
        INFO("p=" << p << " v=" << v << " M=" << m);
        auto schedule = generate(ScheduleKind::kInterleaved1F1B, ScheduleShape{p * v, m, {}}, v);
        REQUIRE(schedule.ok());
        auto timing = unit_timing(*schedule);
        REQUIRE(timing.ok());
        CHECK(timing->num_steps == 2 * (v * m + p - 1));
      }
    }
  }
}

TEST_CASE("virtual stages: valid, lowered without deadlock, micro-batches in flight", "[virtual_stages]") {
  for (const ScheduleKind kind : {ScheduleKind::kInterleaved1F1B, ScheduleKind::kLoopedBfs}) {
    for (int p = 1; p <= 4; ++p) {
      for (int v = 1; v <= 3; ++v) {
        for (const int m : {p, 2 * p, 3 * p}) {
          INFO(schedule_kind_name(kind) << " p=" << p << " v=" << v << " M=" << m);
          auto schedule = generate(kind, ScheduleShape{p * v, m, {}}, v);
          REQUIRE(schedule.ok());
          CHECK(schedule->num_devices() == p);
          CHECK(validate(*schedule).empty());
          auto recomputed = add_recompute(*schedule);
          REQUIRE(recomputed.ok());
          for (const Schedule& s : {*schedule, *recomputed}) {
            auto lowered = lower_comm(s);
            REQUIRE(lowered.ok());
            CHECK(validate(*lowered).empty());  // includes the deadlock search
          }
          // Looped BFS holds every micro-batch of every stage; interleaved 1F1B at most its warm-up.
          const std::vector<int> in_flight = peak_in_flight(*schedule);
          for (int s = 0; s < p * v; ++s) {
            const int r = s % p;
            const int bound = kind == ScheduleKind::kLoopedBfs ? m : std::min(m, 2 * (p - 1 - r) + (v - 1) * p + 1);
            CHECK(in_flight[static_cast<std::size_t>(s)] <= bound);
          }
        }
      }
    }
  }
}

TEST_CASE("virtual stages: shapes they cannot take are named", "[virtual_stages]") {
  const auto error_of = [](ScheduleKind kind, ScheduleShape shape, int v) {
    auto s = generate(kind, shape, v);
    REQUIRE_FALSE(s.ok());
    return s.error().message;
  };
  CHECK(error_of(ScheduleKind::kInterleaved1F1B, {6, 4, {}}, 4) ==
        "6 stages cannot be cut into 4 virtual stages per device");
  CHECK(error_of(ScheduleKind::kInterleaved1F1B, {4, 3, {}}, 2) == "3 micro-batches is not a multiple of the 2 devices");
  CHECK(error_of(ScheduleKind::kLoopedBfs, {4, 2, {0, 1, 1, 0}}, 2) ==
        "virtual stages place stage s on device s mod 2; the placement puts stage 2 on 1");
  CHECK(error_of(ScheduleKind::kGPipe, {4, 2, {}}, 2) ==
        "gpipe has one stage per device; virtual stages are for interleaved-1f1b, looped-bfs and "
        "interleaved-zb (zb-v and dualpipe-v always have two)");
}
