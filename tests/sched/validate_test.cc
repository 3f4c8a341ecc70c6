// validate() over every generated schedule, hand-made broken schedules, hostile inputs, the
// marked grid and the deadlock search.
#include <algorithm>
#include <climits>

#include <catch2/catch.hpp>

#include "sched/deadlock.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/validate.h"

using namespace pipeworks::sched;

namespace {

std::string kinds_of(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) out += std::string(diagnostic_kind_name(d.kind)) + " ";
  return out;
}

Schedule make(int k, int m, std::vector<int> placement, std::vector<std::vector<std::string>> programs) {
  Schedule s;
  s.num_stages = k;
  s.num_microbatches = m;
  s.placement = std::move(placement);
  for (const auto& tokens : programs) {
    Program program;
    for (const auto& t : tokens) program.push_back(*parse_action(t));
    s.programs.push_back(std::move(program));
  }
  return s;
}

int count_kind(const Schedule& s, int stage, ActionKind kind) {
  int n = 0;
  for (const Program& p : s.programs) {
    n += static_cast<int>(std::count_if(p.begin(), p.end(), [&](const Action& a) { return a.stage == stage && a.kind == kind; }));
  }
  return n;
}

}  // namespace

TEST_CASE("every generated schedule validates, K=1..16 x M=1..64, with and without recompute and comm",
          "[validate]") {
  for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (int k = 1; k <= 16; ++k) {
      for (int m = 1; m <= 64; ++m) {
        auto base = generate(kind, ScheduleShape{k, m, {}});
        REQUIRE(base.ok());
        auto recomputed = add_recompute(*base);
        REQUIRE(recomputed.ok());
        for (const Schedule* s : {&*base, &*recomputed}) {
          auto lowered = lower_comm(*s);
          REQUIRE(lowered.ok());
          for (const Schedule* v : {s, static_cast<const Schedule*>(&*lowered)}) {
            const auto diagnostics = validate(*v);
            INFO(schedule_kind_name(kind) << " K=" << k << " M=" << m << ": " << kinds_of(diagnostics));
            REQUIRE(diagnostics.empty());
            for (int stage = 0; stage < k; ++stage) {
              REQUIRE(count_kind(*v, stage, ActionKind::kForward) == m);
              REQUIRE(count_kind(*v, stage, ActionKind::kBackward) == m);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("schedules with stages sharing a device validate", "[validate]") {
  for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (const std::vector<int>& placement : {std::vector<int>{0, 0, 1}, {0, 1, 1, 0}, {1, 0, 1, 0}, {0, 0, 0}}) {
      auto s = generate(kind, ScheduleShape{static_cast<int>(placement.size()), 5, placement});
      REQUIRE(s.ok());
      auto lowered = lower_comm(*add_recompute(*s));
      REQUIRE(lowered.ok());
      CHECK(kinds_of(validate(*s)).empty());
      CHECK(kinds_of(validate(*lowered)).empty());
    }
  }
}

TEST_CASE("hostile inputs give diagnostics, never a crash", "[validate]") {
  CHECK(validate(Schedule{}).front().kind == DiagnosticKind::kBadShape);
  CHECK(validate(make(-5, -7, {}, {})).size() == 2);
  CHECK(validate(make(INT_MAX, INT_MAX, {0}, {{"0F0"}})).front().kind == DiagnosticKind::kBadShape);
  CHECK(validate(make(1 << 16, 1 << 16, {}, {})).front().kind == DiagnosticKind::kBadShape);
  // Empty programs: every stage misses everything.
  const auto empty = validate(make(2, 3, {0, 1}, {{}, {}}));
  REQUIRE(empty.size() == 4);
  CHECK(empty[0].kind == DiagnosticKind::kWrongCount);
  CHECK(empty[0].message == "stage 0 has 0 of 3 forwards; missing micro-batches 0, 1, 2");
  // Placement pointing nowhere, no programs at all.
  const auto nowhere = validate(make(2, 1, {INT_MAX, -1}, {}));
  CHECK(kinds_of(nowhere) == "bad-placement bad-placement wrong-count wrong-count wrong-count wrong-count ");
  // Huge indices in actions.
  Schedule huge = make(1, 1, {0}, {{"0F0", "0B0"}});
  huge.programs[0].push_back(Action{INT_MAX, ActionKind::kSendB, INT_MAX});
  huge.programs[0].push_back(Action{-1, ActionKind::kForward, -1});
  CHECK(kinds_of(validate(huge)) == "out-of-range out-of-range ");
}

TEST_CASE("long missing lists are cut", "[validate]") {
  const auto d = validate(make(1, 40, {0}, {{}}));
  REQUIRE(d.size() == 2);
  CHECK(d[0].message == "stage 0 has 0 of 40 forwards; missing micro-batches 0, 1, 2, 3, 4, 5, 6, 7, ... (40 in all)");
}

TEST_CASE("split backward (I then W) is valid and W before I is not", "[validate]") {
  CHECK(validate(make(2, 1, {0, 1}, {{"0F0", "0I0", "0W0"}, {"1F0", "1I0", "1W0"}})).empty());
  const auto d = validate(make(1, 1, {0}, {{"0F0", "0W0", "0I0"}}));
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagnosticKind::kWeightBeforeInput);
  CHECK(d[0].device == 0);
  CHECK(d[0].position == 1);
}

TEST_CASE("a partly lowered schedule reports the missing pair", "[validate]") {
  auto s = *lower_comm(*gpipe(ScheduleShape{2, 2, {}}));
  std::erase(s.programs[0], Action{0, ActionKind::kSendF, 1});
  std::erase(s.programs[1], Action{1, ActionKind::kRecvF, 1});
  const auto d = validate(s);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagnosticKind::kMissingComm);
  CHECK(d[0].message == "1F1 needs the output of stage 0 on device 0, but there is no 0SEND_F1 / 1RECV_F1 pair");
}

TEST_CASE("render marks the cell and its related cells", "[validate]") {
  const Schedule s = make(2, 1, {0, 1}, {{"0F0", "0B0"}, {"1B0", "1F0"}});
  const auto d = validate(s);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagnosticKind::kBackwardBeforeForward);
  CHECK(render(s, d[0]) ==
        "        0    1\n"
        "  d0  0F0  0B0\n"
        "  d1 [1B0]<1F0>\n");
}

TEST_CASE("render cuts long programs to a window around the cell", "[validate]") {
  auto s = *gpipe(ScheduleShape{1, 20, {}});
  std::swap(s.programs[0][15], s.programs[0][35]);  // 0F15 <-> 0B15
  const auto d = validate(s);
  REQUIRE(d.size() == 1);
  CHECK(d[0].position == 15);
  CHECK(render(s, d[0]) ==
        "     ...    9    10    11    12    13    14    15    16    17    18    19    20    21\n"
        "  d0 ...  0F9  0F10  0F11  0F12  0F13  0F14 [0B15] 0F16  0F17  0F18  0F19   0B0   0B1 ...\n");
}

TEST_CASE("deadlock_cycle finds the rendezvous cycle of naive comm ordering", "[validate][deadlock]") {
  const Schedule s = make(2, 2, {0, 1},
                          {{"0F0", "0SEND_F0", "0F1", "0SEND_F1", "0RECV_B0", "0B0", "0RECV_B1", "0B1"},
                           {"1RECV_F0", "1F0", "1B0", "1SEND_B0", "1RECV_F1", "1F1", "1B1", "1SEND_B1"}});
  auto index = ActionIndex::build(s);
  REQUIRE(index.ok());
  const auto cycle = deadlock_cycle(s, *index);
  REQUIRE(cycle.size() == 2);
  CHECK(cycle[0].at == Location{0, 3});
  CHECK(cycle[0].peer == Location{1, 4});
  CHECK(cycle[1].at == Location{1, 3});
  CHECK(cycle[1].peer == Location{0, 4});
  const auto d = validate(s);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == DiagnosticKind::kDeadlock);
  CHECK(d[0].message ==
        "deadlock: these actions wait on each other in a cycle: 0SEND_F1=1RECV_F1 (d0:3, d1:4) -> "
        "1SEND_B0=0RECV_B0 (d1:3, d0:4) -> back to the first");
  // The same order is fine once the pass orders it: no cycle.
  auto lowered = lower_comm(*one_f_one_b(ScheduleShape{2, 2, {}}));
  REQUIRE(lowered.ok());
  CHECK(deadlock_cycle(*lowered, *ActionIndex::build(*lowered)).empty());
}

TEST_CASE("every diagnostic kind has a distinct name", "[validate]") {
  std::vector<std::string_view> names;
  for (int i = 0; i < kNumDiagnosticKinds; ++i) names.push_back(diagnostic_kind_name(static_cast<DiagnosticKind>(i)));
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  CHECK(diagnostic_kind_name(DiagnosticKind::kDeadlock) == "deadlock");
}
