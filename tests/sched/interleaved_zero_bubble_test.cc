// Interleaved zero bubble: its picture (the one interleaved_zero_bubble.h draws), ZB-H1 at one
// virtual stage, validity, recompute and lowering for a range of p, v and M, the micro-batches it
// holds, and the shapes it refuses as torch does.
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

// torch's rule: M splits into max(1, M / p) rounds of equal size.
bool rounds_split(int p, int m) { return m % std::max(1, m / p) == 0; }

Result<Schedule> interleaved_zb(int p, int v, int m) {
  return generate(ScheduleKind::kInterleavedZb, ScheduleShape{p * v, m, {}}, v);
}

}  // namespace

TEST_CASE("interleaved ZB p=2 v=2 M=4 matches the picture", "[interleaved_zero_bubble]") {
  auto schedule = interleaved_zb(2, 2, 4);
  REQUIRE(schedule.ok());
  auto grid = render_grid(*schedule);
  REQUIRE(grid.ok());
  CHECK(*grid ==
        "t:    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17  18  19  20  21  22  23  24\n"
        "d0: 0F0 0F1 2F0 2F1   . 2I0 2W0 0F2 2I1 2W1 0F3 0I0 0W0 2F2 0I1 0W1 2F3 2I2 2W2 2I3 2W3 0I2 0W2 0I3 0W3\n"
        "d1:   . 1F0 1F1 3F0 3I0 3F1 3I1 3W0 1F2 1I0 3W1 1F3 1I1 1W0 3F2 3I2 1W1 3F3 3I3 3W2 1I2 3W3 1I3 1W2 1W3\n");
}

TEST_CASE("interleaved ZB with one virtual stage is ZB-H1 wherever its rounds split M", "[interleaved_zero_bubble]") {
  int compared = 0;
  for (int p = 1; p <= 6; ++p) {
    for (int m = 1; m <= 4 * p + 2; ++m) {
      INFO("p=" << p << " M=" << m);
      auto zb = interleaved_zb(p, 1, m);
      REQUIRE(zb.ok() == rounds_split(p, m));
      if (!zb) continue;
      auto h1 = generate(ScheduleKind::kZbH1, ScheduleShape{p, m, {}});
      REQUIRE(h1.ok());
      CHECK(*zb == *h1);
      CHECK(in_flight_microbatches(ScheduleKind::kInterleavedZb, p, m) == peak_in_flight(*zb));
      ++compared;
    }
  }
  CHECK(compared > 60);
}

TEST_CASE("interleaved ZB: makespan 3vM + p - 1 in unit time once M >= p, min(M, p) in flight on the last chunk",
          "[interleaved_zero_bubble]") {
  for (int p = 1; p <= 5; ++p) {
    for (int v = 1; v <= 3; ++v) {
      for (int m = 1; m <= 4 * p; ++m) {
        if (!rounds_split(p, m)) continue;
        INFO("p=" << p << " v=" << v << " M=" << m);
        auto schedule = interleaved_zb(p, v, m);
        REQUIRE(schedule.ok());
        const std::vector<int> in_flight = peak_in_flight(*schedule);
        for (int s = (v - 1) * p; s < v * p; ++s) CHECK(in_flight[static_cast<std::size_t>(s)] == std::min(m, p));
        if (m < p) continue;
        auto timing = unit_timing(*schedule);
        REQUIRE(timing.ok());
        CHECK(timing->num_steps == 3 * v * m + p - 1);
      }
    }
  }
  auto schedule = interleaved_zb(4, 2, 8);
  REQUIRE(schedule.ok());
  CHECK(peak_in_flight(*schedule) == std::vector<int>{8, 8, 8, 8, 4, 4, 4, 4});
}

TEST_CASE("interleaved ZB: valid, recomputed and lowered without deadlock, every I before its W",
          "[interleaved_zero_bubble]") {
  for (int p = 1; p <= 4; ++p) {
    for (int v = 1; v <= 3; ++v) {
      for (int m = 1; m <= 3 * p + 1; ++m) {
        if (!rounds_split(p, m)) continue;
        INFO("p=" << p << " v=" << v << " M=" << m);
        auto schedule = interleaved_zb(p, v, m);
        REQUIRE(schedule.ok());
        CHECK(schedule->num_devices() == p);
        for (int s = 0; s < p * v; ++s) CHECK(schedule->device_of(s) == s % p);
        CHECK(validate(*schedule).empty());  // I before W on every stage, each action once
        auto recomputed = add_recompute(*schedule);
        REQUIRE(recomputed.ok());
        for (const Schedule& s : {*schedule, *recomputed}) {
          auto lowered = lower_comm(s);
          REQUIRE(lowered.ok());
          CHECK(validate(*lowered).empty());  // includes the deadlock search
        }
      }
    }
  }
}

TEST_CASE("interleaved ZB: the shapes torch refuses are refused and named", "[interleaved_zero_bubble]") {
  const auto error_of = [](ScheduleShape shape, int v) {
    auto s = generate(ScheduleKind::kInterleavedZb, shape, v);
    REQUIRE_FALSE(s.ok());
    return s.error().message;
  };
  CHECK(error_of({4, 5, {}}, 2) ==
        "interleaved-zb runs max(1, M / p) = 2 rounds of micro-batches on 2 devices; 5 micro-batches do not split "
        "into 2 equal rounds");
  CHECK(error_of({6, 4, {}}, 4) == "6 stages cannot be cut into 4 virtual stages per device");
  CHECK(error_of({4, 4, {0, 1, 1, 0}}, 2) ==
        "virtual stages place stage s on device s mod 2; the placement puts stage 2 on 1");
  // Fewer micro-batches than devices, or M a multiple of its rounds but not of p: one round, taken.
  CHECK(interleaved_zb(4, 2, 3).ok());
  CHECK(interleaved_zb(4, 2, 6).ok());
  CHECK(interleaved_zb(4, 3, 10).ok());
  CHECK(parse_schedule_kind("interleaved-zb").value() == ScheduleKind::kInterleavedZb);
  CHECK(has_virtual_stages(ScheduleKind::kInterleavedZb));
  CHECK(splits_backward(ScheduleKind::kInterleavedZb));
  CHECK_FALSE(is_v_shaped(ScheduleKind::kInterleavedZb));
}
