// A schedule that is another in disguise says so, and its picture holds (schedule_notes.h).
#include <catch2/catch.hpp>

#include "sched/schedule_notes.h"
#include "sched/program_text.h"

namespace pipeworks::sched {
namespace {

std::string first_actions(ScheduleKind kind, int virtual_stages, std::size_t n) {
  auto s = generate(kind, ScheduleShape{4, 8, {}}, virtual_stages);
  REQUIRE(s.ok());
  Program head(s->programs[0].begin(), s->programs[0].begin() + static_cast<std::ptrdiff_t>(n));
  return testing::program_text(head);
}

TEST_CASE("interleaved 1F1B with one virtual stage keeps 2 (K - d - 1) + 1 forwards in flight, 1F1B K - d") {
  // The header's picture, device 0 of K = 4, M = 8.
  CHECK(first_actions(ScheduleKind::kInterleaved1F1B, 1, 10) == "0F0 0F1 0F2 0F3 0F4 0F5 0F6 0B0 0F7 0B1");
  CHECK(first_actions(ScheduleKind::kOneFOneB, 1, 8) == "0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5");
  const auto note = degenerate_schedule_note(ScheduleKind::kInterleaved1F1B, 1);
  REQUIRE(note.has_value());
  CHECK_THAT(*note, Catch::Contains("interleaves nothing"));
  CHECK_FALSE(degenerate_schedule_note(ScheduleKind::kInterleaved1F1B, 2).has_value());
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kZbH1}) {
    CHECK_FALSE(degenerate_schedule_note(kind, 1).has_value());
  }
}

}  // namespace
}  // namespace pipeworks::sched
