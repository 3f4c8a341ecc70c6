// add_recompute and lower_comm: pictures, idempotence and deadlock freedom under rendezvous.
#include <set>

#include <catch2/catch.hpp>

#include "sched/program_text.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/unit_timing.h"

using namespace pipeworks::sched;
using pipeworks::sched::testing::program_text;


TEST_CASE("add_recompute puts R right before each backward", "[passes]") {
  auto schedule = gpipe(ScheduleShape{2, 2, {}});
  REQUIRE(schedule.ok());
  auto with_r = add_recompute(*schedule);
  REQUIRE(with_r.ok());
  CHECK(program_text(with_r->programs[0]) == "0F0 0F1 0R0 0B0 0R1 0B1");
  CHECK(program_text(with_r->programs[1]) == "1F0 1F1 1R0 1B0 1R1 1B1");
  auto twice = add_recompute(*with_r);
  REQUIRE(twice.ok());
  CHECK(*twice == *with_r);
}

TEST_CASE("lower_comm on 1f1b K=2 M=2 orders pairs so rendezvous cannot deadlock", "[passes]") {
  auto schedule = one_f_one_b(ScheduleShape{2, 2, {}});
  REQUIRE(schedule.ok());
  auto lowered = lower_comm(*schedule);
  REQUIRE(lowered.ok());
  CHECK(program_text(lowered->programs[0]) == "0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1");
  CHECK(program_text(lowered->programs[1]) == "1RECV_F0 1F0 1RECV_F1 1B0 1SEND_B0 1F1 1B1 1SEND_B1");
  CHECK(strip_comm(*lowered) == *schedule);
}

TEST_CASE("lower_comm leaves stages that share a device without comm", "[passes]") {
  auto schedule = gpipe(ScheduleShape{3, 2, {0, 0, 1}});
  REQUIRE(schedule.ok());
  auto lowered = lower_comm(*schedule);
  REQUIRE(lowered.ok());
  for (const Action& a : lowered->programs[0]) {
    if (is_comm(a.kind)) CHECK((a.kind == ActionKind::kSendF || a.kind == ActionKind::kRecvB));
    if (is_comm(a.kind)) CHECK(a.stage != 0);
  }
  CHECK_FALSE(lower_comm(*lowered).ok());
}

// Rendezvous execution: a SEND and its RECV complete together, only when both devices have
// reached them. Returns false on deadlock.
static bool runs_with_rendezvous(const Schedule& s) {
  std::vector<std::size_t> next(static_cast<std::size_t>(s.num_devices()), 0);
  std::set<Action> done;
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (std::size_t d = 0; d < next.size(); ++d) {
      while (next[d] < s.programs[d].size()) {
        const Action& a = s.programs[d][next[d]];
        if (is_comm(a.kind)) {
          // Find the peer's device and check it is waiting at the peer action.
          const bool send = is_send(a.kind);
          const int peer_stage = a.kind == ActionKind::kSendF || a.kind == ActionKind::kRecvB ? a.stage + 1 : a.stage - 1;
          const ActionKind peer_kind = a.kind == ActionKind::kSendF   ? ActionKind::kRecvF
                                       : a.kind == ActionKind::kRecvF ? ActionKind::kSendF
                                       : a.kind == ActionKind::kSendB ? ActionKind::kRecvB
                                                                      : ActionKind::kSendB;
          const Action peer{peer_stage, peer_kind, a.microbatch};
          const auto pd = static_cast<std::size_t>(s.device_of(peer_stage));
          (void)send;
          if (done.count(peer)) {
            done.insert(a);
            ++next[d];
            progressed = true;
            continue;
          }
          if (next[pd] < s.programs[pd].size() && s.programs[pd][next[pd]] == peer) {
            done.insert(a);
            done.insert(peer);
            ++next[d];
            ++next[pd];
            progressed = true;
            continue;
          }
          break;
        }
        done.insert(a);
        ++next[d];
        progressed = true;
      }
    }
  }
  for (std::size_t d = 0; d < next.size(); ++d) {
    if (next[d] != s.programs[d].size()) return false;
  }
  return true;
}

TEST_CASE("lowered schedules run under rendezvous semantics for K=1..16, M=1..32", "[passes]") {
  for (auto kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (int k = 1; k <= 16; ++k) {
      for (int m = 1; m <= 32; ++m) {
        auto schedule = generate(kind, ScheduleShape{k, m, {}});
        REQUIRE(schedule.ok());
        auto recomputed = add_recompute(*schedule);
        REQUIRE(recomputed.ok());
        for (const Schedule* s : {&*schedule, &*recomputed}) {
          auto lowered = lower_comm(*s);
          REQUIRE(lowered.ok());
          CHECK(runs_with_rendezvous(*lowered));
          auto timing = unit_timing(*lowered);
          REQUIRE(timing.ok());
          // Comm is free in unit time, so lowering keeps the makespan: 2(M+K-1) without recompute;
          // with it GPipe's last stage runs R+B per micro-batch after the fill while earlier stages
          // re-materialize while they wait: (M+K-1) + 2M + (K-1).
          if (!s->has_recompute()) CHECK(timing->num_steps == 2 * (m + k - 1));
          if (s->has_recompute() && kind == ScheduleKind::kGPipe) CHECK(timing->num_steps == 3 * m + 2 * k - 2);
        }
      }
    }
  }
}
