// Terminal grid: exact pictures for hand-built timelines (unit costs, long backwards, folding,
// compression, irregular measured-like times, empty input).
#include "viz/terminal_grid.h"

#include <catch2/catch.hpp>

#include "gpipe_timeline.h"

namespace pipeworks::viz {
namespace {

using testing::GpipeCosts;
using testing::make_gpipe_timeline;

TEST_CASE("unit-cost GPipe K=4 M=4 prints one cell per action", "[viz][grid]") {
  const auto tl = make_gpipe_timeline(4, 4);
  CHECK(terminal_grid(tl) ==
        "t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13\n"
        "d0: F0 F1 F2 F3  .  .  .  .  .  . B0 B1 B2 B3\n"
        "d1:  . F0 F1 F2 F3  .  .  .  . B0 B1 B2 B3  .\n"
        "d2:  .  . F0 F1 F2 F3  .  . B0 B1 B2 B3  .  .\n"
        "d3:  .  .  . F0 F1 F2 F3 B0 B1 B2 B3  .  .  .\n"
        "1 slot = 1 ms; . = idle; makespan 14 ms, bubble 42.9%\n");
}

TEST_CASE("a device with two stages names the stage in every cell", "[viz][grid]") {
  // Stages 0 and 3 on d0, 1 and 2 on d1 (a V), one micro-batch, unit costs.
  using sched::ActionKind;
  sched::Timeline tl;
  tl.num_devices = 2;
  const auto add = [&tl](int device, int stage, ActionKind kind, int slot) {
    tl.spans.push_back(sched::Span{device, sched::Lane::kCompute, sched::Action{stage, kind, 0}, slot * 1'000'000,
                                   (slot + 1) * 1'000'000});
  };
  add(0, 0, ActionKind::kForward, 0);
  add(1, 1, ActionKind::kForward, 1);
  add(1, 2, ActionKind::kForward, 2);
  add(0, 3, ActionKind::kForward, 3);
  add(0, 3, ActionKind::kBackward, 4);
  add(1, 2, ActionKind::kBackward, 5);
  add(1, 1, ActionKind::kBackward, 6);
  add(0, 0, ActionKind::kBackward, 7);
  CHECK(terminal_grid(tl) ==
        "t:    0   1   2   3   4   5   6   7\n"
        "d0: 0F0   .   . 3F0 3B0   .   . 0B0\n"
        "d1:   . 1F0 2F0   .   . 2B0 1B0   .\n"
        "1 slot = 1 ms; . = idle; makespan 8 ms, bubble 50.0%\n");
}

TEST_CASE("a backward twice as long as a forward continues over two cells", "[viz][grid]") {
  // Transfers are on other lanes and do not appear; the start shift is rebased away.
  const auto tl = make_gpipe_timeline(2, 2, GpipeCosts{500'000, 1'000'000, 0, 1, 123'456'789});
  CHECK(terminal_grid(tl) ==
        "t:   0  1  2  3  4  5  6  7  8\n"
        "d0: F0 F1  .  .  . B0 -- B1 --\n"
        "d1:  . F0 F1 B0 -- B1 --  .  .\n"
        "1 slot = 500 us; . = idle; -- = action continues; makespan 4.5 ms, bubble 33.3%\n");
}

TEST_CASE("a grid wider than max_width folds into blocks", "[viz][grid]") {
  const auto tl = make_gpipe_timeline(2, 4);
  CHECK(terminal_grid(tl, 20) ==
        "t:   0  1  2  3  4\n"
        "d0: F0 F1 F2 F3  .\n"
        "d1:  . F0 F1 F2 F3\n"
        "\n"
        "t:   5  6  7  8  9\n"
        "d0:  . B0 B1 B2 B3\n"
        "d1: B0 B1 B2 B3  .\n"
        "1 slot = 1 ms; . = idle; makespan 10 ms, bubble 20.0%\n"
        "folded into 2 blocks of up to 5 slots to fit 20 columns\n");
}

TEST_CASE("a grid too long for four blocks merges slots", "[viz][grid]") {
  // 18 unit slots, 3 per line at 14 columns: merged 2x into 9 slots of 2 ms, 3 blocks.
  // Cell [8,10) on d1 holds F7 [8,9) and B0 [9,10): equal cover, the earlier wins. On d0 the
  // same cell is idle: B(0,m) starts at 10 + m.
  const auto tl = make_gpipe_timeline(2, 8);
  CHECK(terminal_grid(tl, 14) ==
        "t:   0  1  2\n"
        "d0: F0 F2 F4\n"
        "d1: F0 F1 F3\n"
        "\n"
        "t:   3  4  5\n"
        "d0: F6  . B0\n"
        "d1: F5 F7 B1\n"
        "\n"
        "t:   6  7  8\n"
        "d0: B2 B4 B6\n"
        "d1: B3 B5 B7\n"
        "1 slot = 2 ms; . = idle; makespan 18 ms, bubble 11.1%\n"
        "compressed 2x to fit 4 blocks\n"
        "each cell shows the action covering most of its slot\n"
        "folded into 3 blocks of up to 3 slots to fit 14 columns\n");
}

TEST_CASE("measured-like times without a common divisor use the shortest action as slot", "[viz][grid]") {
  sched::Timeline tl;
  tl.name = "measured";
  tl.num_devices = 2;
  auto add = [&tl](int d, sched::ActionKind k, int mb, long long a, long long b) {
    tl.spans.push_back(sched::Span{d, sched::Lane::kCompute, sched::Action{d, k, mb}, a, b});
  };
  // Slot = 1'000'003 ns (the shortest; printed to 3 decimals); boundaries share no useful
  // divisor. A cell that an action covers less than idle time does (d0's F0 runs 4 ns into
  // slot 1) stays '.'.
  add(0, sched::ActionKind::kForward, 0, 5'000'000, 6'000'007);
  add(1, sched::ActionKind::kForward, 0, 6'100'001, 7'100'004);
  add(1, sched::ActionKind::kBackward, 0, 7'100'004, 9'100'111);
  add(0, sched::ActionKind::kBackward, 0, 9'200'017, 11'200'019);
  tl.spans.push_back(sched::Span{0, sched::Lane::kSend, sched::Action{0, sched::ActionKind::kSendF, 0}, 6'000'007, 6'100'001});
  CHECK(terminal_grid(tl, 80) ==
        "t:   0  1  2  3  4  5  6\n"
        "d0: F0  .  .  . B0 --  .\n"
        "d1:  . F0 B0 --  .  .  .\n"
        "1 slot = 1 ms; . = idle; -- = action continues; makespan 6.2 ms, bubble 51.6%\n"
        "each cell shows the action covering most of its slot\n");
}

TEST_CASE("a timeline without compute spans says so", "[viz][grid]") {
  sched::Timeline tl;
  CHECK(terminal_grid(tl) == "(no compute spans)\n");
  tl.spans.push_back(sched::Span{0, sched::Lane::kCompute, sched::Action{}, 5, 5});
  CHECK(terminal_grid(tl, -3) == "(no compute spans)\n");
}

}  // namespace
}  // namespace pipeworks::viz
