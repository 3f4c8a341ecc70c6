// Shapes inside the shared limits that once cost far more than the schedule they make: each is
// either handled with work proportional to its actions (counted, never timed) or refused at
// once with its figure and the limit.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sched/csv_io.h"
#include "sched/generators.h"
#include "sched/json_io.h"
#include "sched/limits.h"
#include "sched/passes.h"
#include "sched/text_grid.h"
#include "sched/unit_timing.h"
#include "sched/validate.h"

namespace pipeworks::sched {
namespace {

Schedule generated(ScheduleKind kind, int k, int m, std::vector<int> placement = {}, int v = 1) {
  auto schedule = generate(kind, ScheduleShape{k, m, std::move(placement)}, v);
  REQUIRE(schedule);
  return *schedule;
}

TEST_CASE("unit timing tries each device about once per action, not once per step", "[sched][hostile]") {
  // 1F1B's backward wave runs from the last stage to the first: a sweep over all devices per
  // step would try K x 2(K + M) devices (about 8.4 million here) for 2KM = 8192 actions.
  const Schedule schedule = generated(ScheduleKind::kOneFOneB, 2048, 2);
  for (const Schedule& s : {schedule, *lower_comm(schedule)}) {
    auto timing = unit_timing(s);
    REQUIRE(timing);
    const auto actions = static_cast<std::int64_t>(s.num_actions());
    INFO("actions " << actions << ", tried " << timing->device_steps_tried);
    CHECK(timing->device_steps_tried <= 2 * actions + 2 * s.num_devices());
  }
  CHECK(unit_timing(schedule)->num_steps == 2 * (2 + 2048 - 1));
}

TEST_CASE("zb-h2 and placed stage orders at the stage limit stay proportional to their actions", "[sched][hostile]") {
  // ZB-H2's list schedule used to try all K stages in each of its ~3K steps: 65536 stages and one
  // micro-batch meant 13 billion tries for 196608 actions.
  const Schedule zb = generated(ScheduleKind::kZbH2, kMaxStages, 1);
  CHECK(zb.num_actions() == 3u * kMaxStages);
  CHECK(validate(zb).empty());
  // Two stages per device go through the unit-time merge, which used to try every device in
  // every step.
  std::vector<int> pairs(8192);
  for (int s = 0; s < 8192; ++s) pairs[static_cast<std::size_t>(s)] = s / 2;
  const Schedule placed = generated(ScheduleKind::kOneFOneB, 8192, 1, pairs);
  CHECK(placed.num_devices() == 4096);
  CHECK(placed.num_actions() == 2u * 8192);
  CHECK(validate(placed).empty());
}

TEST_CASE("the V kinds refuse a V they would build far beyond M", "[sched][hostile]") {
  // zb-v and dualpipe-v build every device's program for at least 2p - 1 (2p) micro-batches.
  for (const ScheduleKind kind : {ScheduleKind::kZbV, ScheduleKind::kDualPipeV}) {
    const auto refused = generate(kind, ScheduleShape{4096, 2, {}}, 2);
    REQUIRE_FALSE(refused);
    INFO(refused.error().message);
    CHECK_THAT(refused.error().message, Catch::Contains("4096 stages x 409"));
    CHECK_THAT(refused.error().message, Catch::Contains("beyond the largest supported schedule (4194304 cells)"));
    CHECK(generate(kind, ScheduleShape{64, 2, {}}, 2));
  }
}

TEST_CASE("a grid far larger than its schedule is refused with its size", "[sched][hostile][grid]") {
  const Schedule deep = generated(ScheduleKind::kOneFOneB, 4096, 2);  // 8192 actions, 4096 x 8194 cells
  const auto size = check_grid_size(deep);
  REQUIRE_FALSE(size);
  CHECK(size.error().message ==
        "the grid would have 4096 rows x 8194 steps = 33562624 cells, beyond the largest grid drawn (4194304 cells); "
        "CSV and JSON have no such limit");
  CHECK_FALSE(render_grid(deep));
  CHECK(check_grid_size(generated(ScheduleKind::kOneFOneB, 64, 64)));
  CHECK(to_csv(deep).size() < 8192 * 16);  // the CSV stays proportional to its 8192 actions
}

TEST_CASE("what the writers write within the limits the readers read", "[sched][hostile][io]") {
  // The largest file is kMaxScheduleCells x kMaxActionsPerCell actions of at most
  // kMaxActionTextBytes each (limits.h); this checks that bound on the longest-written kind,
  // lowered and re-materialized, and that the readers accept a file of that size.
  const Schedule s = *lower_comm(*add_recompute(generated(ScheduleKind::kZbH2, 16, 16)));
  const std::int64_t cells = std::int64_t{s.num_stages} * s.num_microbatches;
  CHECK(static_cast<std::int64_t>(s.num_actions()) <= cells * kMaxActionsPerCell);
  for (const Program& program : s.programs) {
    for (const Action& a : program) {
      CHECK(static_cast<std::int64_t>(to_string(a).size()) + 3 <= kMaxActionTextBytes);
    }
  }
  CHECK(static_cast<std::int64_t>(to_json(s).size()) <= cells * kMaxActionsPerCell * kMaxActionTextBytes + 1000);
  CHECK(kMaxCsvBytes == static_cast<std::size_t>(kMaxScheduleFileBytes));
  CHECK(kMaxJsonBytes == static_cast<std::size_t>(kMaxScheduleFileBytes));
  CHECK(kMaxScheduleCells * kMaxActionsPerCell * kMaxActionTextBytes < kMaxScheduleFileBytes);
}

}  // namespace
}  // namespace pipeworks::sched
