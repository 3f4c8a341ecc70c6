// ZB-H1, ZB-H2, ZB-V and DualPipeV: their pictures, their closed forms in unit time, micro-batches
// in flight against the papers' memory figures, validity, recompute and lowering for a range of
// p and M, and the shapes they refuse.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/text_grid.h"
#include "sched/unit_timing.h"
#include "sched/validate.h"
#include "sched/zero_bubble.h"

using namespace pipeworks::sched;

namespace {

Schedule generated(ScheduleKind kind, int k, int m) {
  auto schedule = generate(kind, ScheduleShape{k, m, {}});
  REQUIRE(schedule.ok());
  return *schedule;
}

std::string grid_of(ScheduleKind kind, int k, int m) {
  auto grid = render_grid(generated(kind, k, m));
  REQUIRE(grid.ok());
  return *grid;
}

// Per device, the unit steps between its first action's start and its last action's end that it
// spends idle.
std::vector<std::int64_t> inner_gaps(const Schedule& schedule, const UnitTiming& timing) {
  std::vector<std::int64_t> gaps;
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const auto& starts = timing.start[d];
    const auto [first, last] = std::minmax_element(starts.begin(), starts.end());
    gaps.push_back(*last + 1 - *first - static_cast<std::int64_t>(starts.size()));
  }
  return gaps;
}

constexpr ScheduleKind kZeroBubbleKinds[] = {ScheduleKind::kZbH1, ScheduleKind::kZbH2, ScheduleKind::kZbV,
                                            ScheduleKind::kDualPipeV};

}  // namespace

TEST_CASE("ZB-H1 K=3 M=4 matches the picture", "[zero_bubble]") {
  CHECK(grid_of(ScheduleKind::kZbH1, 3, 4) ==
        "t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13\n"
        "d0: F0 F1 F2  .  . I0 W0 F3 I1 W1 I2 W2 I3 W3\n"
        "d1:  . F0 F1  . I0 F2 I1 W0 F3 I2 W1 I3 W2 W3\n"
        "d2:  .  . F0 I0 F1 I1 F2 I2 W0 F3 I3 W1 W2 W3\n");
}

TEST_CASE("ZB-H2 K=3 M=6 matches the picture", "[zero_bubble]") {
  CHECK(grid_of(ScheduleKind::kZbH2, 3, 6) ==
        "t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19\n"
        "d0: F0 F1 F2 F3 F4 I0 W0 I1 F5 I2 W1 I3 W2 I4 W3 W4 I5 W5  .  .\n"
        "d1:  . F0 F1 F2 I0 F3 I1 F4 I2 W0 I3 F5 I4 W1 W2 I5 W3 W4 W5  .\n"
        "d2:  .  . F0 I0 F1 I1 F2 I2 F3 I3 F4 I4 W0 F5 I5 W1 W2 W3 W4 W5\n");
}

TEST_CASE("ZB-H2 on real times: a stage leaves a W for the last micro-batch's I on its way", "[zero_bubble]") {
  // F 185, I 181, W 93, c 6 (issue 39's costs / 100), K = 4, M = 7. Stage 2 runs I5 and W3 and
  // is free at 3135, when stage 3's I6 ends; I6 reaches it at 3141. Running W4 first (the plain
  // rule) delays I6, and with it stage 0's end, by 87; the rule waits the 6 and runs W4 after I6.
  const std::vector<StageTimes> times(4, {185, 181, 93});
  const Schedule timed = zb_h2_timed({4, 7, {}}, times, 6).value();
  const std::vector<Action> tail = {{2, ActionKind::kBackwardInput, 5},  {2, ActionKind::kBackwardWeight, 3},
                                    {2, ActionKind::kBackwardInput, 6},  {2, ActionKind::kBackwardWeight, 4},
                                    {2, ActionKind::kBackwardWeight, 5}, {2, ActionKind::kBackwardWeight, 6}};
  const Program& stage2 = timed.programs[2];
  CHECK(std::vector<Action>(stage2.end() - 6, stage2.end()) == tail);
  // Without a hand-off nothing is in flight: the plain rule, whatever the times.
  CHECK(zb_h2_timed({3, 6, {}}, std::vector<StageTimes>(3), 0).value() == generated(ScheduleKind::kZbH2, 3, 6));
}

TEST_CASE("ZB-H2 on real times: the search departs from the rule where the rule ends over its bound", "[zero_bubble]") {
  // F = 5, I = 8, W = 6 without a hand-off, K = 2, M = 3: the rule's stage 0 waited for its last I
  // (it arrives before a W would end) and ended at 64; nothing waits on stage 0's I, and running
  // W1 first ends at 62, the bound (K-1)F + M(F+I+W).
  const Schedule timed = zb_h2_timed({2, 3, {}}, std::vector<StageTimes>(2, {5, 8, 6}), 0).value();
  const std::vector<Action> stage0_tail = {{0, ActionKind::kBackwardInput, 1}, {0, ActionKind::kBackwardWeight, 1},
                                           {0, ActionKind::kBackwardInput, 2}, {0, ActionKind::kBackwardWeight, 2}};
  CHECK(std::vector<Action>(timed.programs[0].end() - 4, timed.programs[0].end()) == stage0_tail);
  // F = I = W without a hand-off is unit time scaled: the rule's order, nothing searched.
  CHECK(zb_h2_timed({4, 9, {}}, std::vector<StageTimes>(4, {7, 7, 7}), 0).value() == generated(ScheduleKind::kZbH2, 4, 9));
}

TEST_CASE("ZB-V on real times: torch's in-flight counts, torch's order in unit time, valid", "[zero_bubble]") {
  for (int p = 1; p <= 4; ++p) {
    for (const int m : {1, 2 * p - 1, 2 * p, 3 * p + 1}) {
      INFO("p=" << p << " M=" << m);
      const int k = 2 * p;
      CHECK(zb_v_timed({k, m, {}}, std::vector<StageTimes>(static_cast<std::size_t>(k), {3, 3, 3}), 0).value() ==
            generated(ScheduleKind::kZbV, k, m));
      for (const StageTimes& t : {StageTimes{10, 12, 20}, StageTimes{30, 5, 5}, StageTimes{185, 181, 93}}) {
        const Schedule timed = zb_v_timed({k, m, {}}, std::vector<StageTimes>(static_cast<std::size_t>(k), t), 4).value();
        CHECK(timed.placement == v_placement(k));
        CHECK(validate(timed).empty());
        // Per stage, the most micro-batches run forward whose W has not run: at most K - s (and M).
        std::vector<int> held(static_cast<std::size_t>(k), 0), most(held);
        for (const Program& program : timed.programs) {
          for (const Action& a : program) {
            int& h = held[static_cast<std::size_t>(a.stage)];
            h += a.kind == ActionKind::kForward ? 1 : a.kind == ActionKind::kBackwardWeight ? -1 : 0;
            most[static_cast<std::size_t>(a.stage)] = std::max(most[static_cast<std::size_t>(a.stage)], h);
          }
        }
        for (int s = 0; s < k; ++s) CHECK(most[static_cast<std::size_t>(s)] <= std::min(m, k - s));
      }
    }
  }
  CHECK_FALSE(zb_v_timed({4, 4, {}}, std::vector<StageTimes>(3), 0).ok());
  CHECK_FALSE(zb_v_timed({4, 4, {}}, std::vector<StageTimes>(4), -1).ok());
  CHECK_FALSE(zb_v_timed({5, 4, {}}, std::vector<StageTimes>(5), 0).ok());
}

TEST_CASE("ZB-V p=2 M=4 matches the picture", "[zero_bubble]") {
  CHECK(grid_of(ScheduleKind::kZbV, 4, 4) ==
        "t:    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17  18  19  20  21  22  23  24\n"
        "d0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 3W1 0F3 0I0 0W0 3F2 3I2 3W2 0I1 0W1 3F3 3I3 3W3 0I2 0W2 0I3 0W3   .\n"
        "d1:   . 1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1F3 1I1 1W1 2F3 2I2 2W2 1I2 2I3 1I3 1W2 2W3 1W3\n");
}

TEST_CASE("DualPipeV p=2 M=4 matches the picture", "[zero_bubble]") {
  // The pairs torch runs overlapped (0F3;3B1), (3F2;0B0), (3F3;0B1) on d0 and (2F2;1B0),
  // (1F3;2B1), (2F3;1B1) on d1 are composites: each hands on its F's output when its B ends, so
  // 3F3 waits a step for 2F3's output on d0 and 2I3 for 3B3's gradient on d1.
  const Schedule schedule = generated(ScheduleKind::kDualPipeV, 4, 4);
  CHECK(schedule.composites == std::vector<Composite>{{0, 7}, {0, 9}, {0, 12}, {1, 6}, {1, 8}, {1, 10}});
  CHECK(grid_of(ScheduleKind::kDualPipeV, 4, 4) ==
        "t:    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17  18  19\n"
        "d0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 0F3 3B1 3F2 0B0 3B2   . 3F3 0B1 3B3 0I2 0W2 0I3 0W3\n"
        "d1:   . 1F0 2F0 1F1 2F1 1F2 2B0 2F2 1B0 1F3 2B1 2F3 1B1 2B2 1B2   . 2I3 1I3 2W3 1W3\n");
}

TEST_CASE("ZB-H1: makespan 3M + K - 1 in unit time (1F1B: 3(M + K - 1)), at most K micro-batches in flight",
          "[zero_bubble]") {
  for (int k = 1; k <= 6; ++k) {
    for (int m = k; m <= 4 * k; ++m) {
      INFO("K=" << k << " M=" << m);
      const Schedule schedule = generated(ScheduleKind::kZbH1, k, m);
      auto timing = unit_timing(schedule);
      REQUIRE(timing.ok());
      CHECK(timing->num_steps == 3 * m + k - 1);
      CHECK(peak_in_flight(schedule) == std::vector<int>(static_cast<std::size_t>(k), std::min(m, k)));
    }
  }
}

TEST_CASE("ZB-H2: from M = 2K - 1 on, no device idles between its first and last action, 2K - 1 in flight",
          "[zero_bubble]") {
  for (int k = 1; k <= 6; ++k) {
    for (int m = 1; m <= 4 * k; ++m) {
      INFO("K=" << k << " M=" << m);
      const Schedule schedule = generated(ScheduleKind::kZbH2, k, m);
      auto timing = unit_timing(schedule);
      REQUIRE(timing.ok());
      CHECK(peak_in_flight(schedule) == std::vector<int>(static_cast<std::size_t>(k), std::min(m, 2 * k - 1)));
      if (m < 2 * k - 1) continue;
      CHECK(timing->num_steps == 3 * m + k - 1);
      CHECK(inner_gaps(schedule, *timing) == std::vector<std::int64_t>(static_cast<std::size_t>(k), 0));
    }
  }
}

TEST_CASE("ZB-V and DualPipeV: no inner idle once M is large enough, 1F1B's in-flight counts over 2p stages",
          "[zero_bubble]") {
  for (const ScheduleKind kind : {ScheduleKind::kZbV, ScheduleKind::kDualPipeV}) {
    for (int p = 1; p <= 5; ++p) {
      for (int m = 1; m <= 4 * p + 2; ++m) {
        INFO(schedule_kind_name(kind) << " p=" << p << " M=" << m);
        const Schedule schedule = generated(kind, 2 * p, m);
        CHECK(schedule.placement == v_placement(2 * p));
        auto timing = unit_timing(schedule);
        REQUIRE(timing.ok());
        // Stage s holds min(M, 2p - s): device r, with stages r and 2p-1-r, holds 2p + 1 half-size
        // stages' micro-batches, against 2p for 1F1B's first device with full-size stages.
        std::vector<int> in_flight;
        for (int s = 0; s < 2 * p; ++s) in_flight.push_back(std::min(m, 2 * p - s));
        CHECK(peak_in_flight(schedule) == in_flight);
        const bool full = kind == ScheduleKind::kZbV ? m >= 2 * p - 1 : m >= 2 * p;
        if (!full) continue;
        // DualPipeV's overlapped pairs are marked as torch marks them, and a composite hands on what
        // its F made only when its B ends (unit_timing.h); the order itself leaves no idle step.
        Schedule order = schedule;
        order.composites.clear();
        CHECK(inner_gaps(order, *unit_timing(order)) == std::vector<std::int64_t>(static_cast<std::size_t>(p), 0));
        if (kind == ScheduleKind::kZbV) CHECK(timing->num_steps == 6 * m + p - 1);
      }
    }
  }
}

TEST_CASE("zero-bubble schedules: valid, recomputed and lowered without deadlock", "[zero_bubble]") {
  for (const ScheduleKind kind : kZeroBubbleKinds) {
    for (int p = 1; p <= 4; ++p) {
      for (const int m : {1, p, 2 * p, 3 * p + 1}) {
        INFO(schedule_kind_name(kind) << " p=" << p << " M=" << m);
        const int k = is_v_shaped(kind) ? 2 * p : p;
        const Schedule schedule = generated(kind, k, m);
        CHECK(schedule.num_devices() == p);
        CHECK(validate(schedule).empty());
        auto recomputed = add_recompute(schedule);
        REQUIRE(recomputed.ok());
        for (const Schedule& s : {schedule, *recomputed}) {
          auto lowered = lower_comm(s);
          REQUIRE(lowered.ok());
          CHECK(validate(*lowered).empty());  // includes the deadlock search
        }
      }
    }
  }
  // ZB-H1 and ZB-H2 take a placement that shares devices, like GPipe and 1F1B.
  for (const ScheduleKind kind : {ScheduleKind::kZbH1, ScheduleKind::kZbH2}) {
    auto shared = generate(kind, ScheduleShape{3, 4, {0, 0, 1}});
    REQUIRE(shared.ok());
    CHECK(shared->num_devices() == 2);
    CHECK(validate(*shared).empty());
  }
}

TEST_CASE("zero-bubble schedules: shapes they cannot take are named", "[zero_bubble]") {
  const auto error_of = [](ScheduleKind kind, ScheduleShape shape, int v) {
    auto s = generate(kind, shape, v);
    REQUIRE_FALSE(s.ok());
    return s.error().message;
  };
  CHECK(error_of(ScheduleKind::kZbV, {3, 4, {}}, 1) == "zb-v places two stages on each device; 3 stages is odd");
  CHECK(error_of(ScheduleKind::kDualPipeV, {4, 4, {0, 1, 0, 1}}, 2) ==
        "dualpipe-v places stages in a V (device r holds stages r and 3-r); the placement puts stage 2 on 0, not 1");
  CHECK(error_of(ScheduleKind::kZbV, {4, 4, {}}, 3) ==
        "zb-v places exactly two stages on each device (a V); 3 virtual stages cannot be");
  CHECK(error_of(ScheduleKind::kZbH1, {4, 4, {}}, 2) ==
        "zb-h1 has one stage per device; virtual stages are for interleaved-1f1b, looped-bfs and "
        "interleaved-zb (zb-v and dualpipe-v always have two)");
  CHECK(error_of(ScheduleKind::kZbH2, {0, 4, {}}, 1).find("stages") != std::string::npos);
  CHECK(parse_schedule_kind("zb-h3").error().message ==
        "unknown schedule 'zb-h3' (expected gpipe, 1f1b, interleaved-1f1b, looped-bfs, zb-h1, zb-h2, zb-v, "
        "dualpipe-v or interleaved-zb)");
  CHECK(parse_schedule_kind("dualpipe-v").value() == ScheduleKind::kDualPipeV);
}
