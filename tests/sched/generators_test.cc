// The generators' pictures (the same ones drawn in sched/generators.h) and their closed forms.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "sched/generators.h"
#include "sched/text_grid.h"
#include "sched/unit_timing.h"

using namespace pipeworks::sched;

namespace {
std::string grid_of(ScheduleKind kind, int k, int m, std::vector<int> placement = {}) {
  auto schedule = generate(kind, ScheduleShape{k, m, std::move(placement)});
  REQUIRE(schedule.ok());
  auto grid = render_grid(*schedule);
  REQUIRE(grid.ok());
  return *grid;
}
}  // namespace

TEST_CASE("gpipe K=4 M=4 matches the fill-drain picture", "[generators]") {
  CHECK(grid_of(ScheduleKind::kGPipe, 4, 4) ==
        "t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13\n"
        "d0: F0 F1 F2 F3  .  .  .  .  .  . B0 B1 B2 B3\n"
        "d1:  . F0 F1 F2 F3  .  .  .  . B0 B1 B2 B3  .\n"
        "d2:  .  . F0 F1 F2 F3  .  . B0 B1 B2 B3  .  .\n"
        "d3:  .  .  . F0 F1 F2 F3 B0 B1 B2 B3  .  .  .\n");
}

TEST_CASE("1f1b K=4 M=4 matches the one-forward-one-backward picture", "[generators]") {
  CHECK(grid_of(ScheduleKind::kOneFOneB, 4, 4) ==
        "t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13\n"
        "d0: F0 F1 F2 F3  .  .  . B0  . B1  . B2  . B3\n"
        "d1:  . F0 F1 F2  .  . B0 F3 B1  . B2  . B3  .\n"
        "d2:  .  . F0 F1  . B0 F2 B1 F3 B2  . B3  .  .\n"
        "d3:  .  .  . F0 B0 F1 B1 F2 B2 F3 B3  .  .  .\n");
}

TEST_CASE("1f1b with fewer micro-batches than stages", "[generators]") {
  CHECK(grid_of(ScheduleKind::kOneFOneB, 3, 1) ==
        "t:   0  1  2  3  4  5\n"
        "d0: F0  .  .  .  . B0\n"
        "d1:  . F0  .  . B0  .\n"
        "d2:  .  . F0 B0  .  .\n");
}

TEST_CASE("two stages sharing a device are interleaved", "[generators]") {
  // Stages 0 and 1 on device 0, stage 2 on device 1: device 0 runs whichever of its stages is
  // ready, earliest in its stage order first.
  CHECK(grid_of(ScheduleKind::kGPipe, 3, 2, {0, 0, 1}) ==
        "t:    0   1   2   3   4   5   6   7   8   9\n"
        "d0: 0F0 1F0 0F1 1F1   .   . 1B0 0B0 1B1 0B1\n"
        "d1:   .   .  F0   .  F1  B0  B1   .   .   .\n");
}

TEST_CASE("unit-time makespan is 2(M+K-1) for both kinds", "[generators]") {
  for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (int k = 1; k <= 16; ++k) {
      for (int m = 1; m <= 64; ++m) {
        auto schedule = generate(kind, ScheduleShape{k, m, {}});
        REQUIRE(schedule.ok());
        auto timing = unit_timing(*schedule);
        REQUIRE(timing.ok());
        CHECK(timing->num_steps == 2 * (m + k - 1));
      }
    }
  }
}

TEST_CASE("bad shapes are errors", "[generators]") {
  CHECK_FALSE(gpipe(ScheduleShape{0, 4, {}}).ok());
  CHECK_FALSE(gpipe(ScheduleShape{2, 0, {}}).ok());
  CHECK_FALSE(one_f_one_b(ScheduleShape{2, 2, {0}}).ok());
  CHECK_FALSE(one_f_one_b(ScheduleShape{2, 2, {0, 2}}).ok());
  CHECK_FALSE(one_f_one_b(ScheduleShape{2, 2, {0, -1}}).ok());
}

// The in-flight rule the memory model and the partitioner read, against the generated programs:
// per stage, the most forwards run whose backward has not run yet.
TEST_CASE("in-flight micro-batches per stage match the generated programs", "[generators]") {
  for (const ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (int k = 1; k <= 6; ++k) {
      for (const int m : {1, 2, 3, 5, 8, 13}) {
        auto schedule = generate(kind, ScheduleShape{k, m, {}});
        REQUIRE(schedule.ok());
        std::vector<int> held(static_cast<std::size_t>(k), 0), peak(static_cast<std::size_t>(k), 0);
        for (const Program& program : schedule->programs) {
          for (const Action& a : program) {
            auto& h = held[static_cast<std::size_t>(a.stage)];
            h += a.kind == ActionKind::kForward ? 1 : a.kind == ActionKind::kBackward ? -1 : 0;
            peak[static_cast<std::size_t>(a.stage)] = std::max(peak[static_cast<std::size_t>(a.stage)], h);
          }
        }
        INFO(schedule_kind_name(kind) << " K=" << k << " M=" << m);
        CHECK(in_flight_microbatches(kind, k, m) == peak);
      }
    }
  }
  CHECK(in_flight_microbatches(ScheduleKind::kOneFOneB, 4, 8) == std::vector<int>{4, 3, 2, 1});
  CHECK(in_flight_microbatches(ScheduleKind::kGPipe, 3, 8) == std::vector<int>{8, 8, 8});
}
