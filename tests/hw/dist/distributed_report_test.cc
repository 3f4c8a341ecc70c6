// The LibTorch-free pieces of multi-process runs: reading the rendezvous variables, the die-at
// hook's grammar, and the rank step reports rank 0 merges into one Timeline.
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "hw/dist/die_at.h"
#include "hw/dist/distributed_env.h"
#include "hw/dist/rank_report.h"
#include "sched/dependencies.h"
#include "sched/generators.h"
#include "sched/passes.h"

namespace pipeworks::hw {
namespace {

EnvLookup lookup_in(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

sched::Schedule lowered_1f1b(int k, int m) {
  auto s = sched::generate(sched::ScheduleKind::kOneFOneB, {k, m, {}});
  REQUIRE(s.ok());
  auto lowered = sched::lower_comm(*s);
  REQUIRE(lowered.ok());
  return *lowered;
}

TEST_CASE("distributed env: torchrun's variables with defaults") {
  auto env = read_distributed_env(lookup_in({{"RANK", "2"}, {"WORLD_SIZE", "4"}}));
  REQUIRE(env.ok());
  CHECK(env->rank == 2);
  CHECK(env->world_size == 4);
  CHECK(env->local_rank == 2);
  CHECK(env->local_world_size == 4);
  CHECK(env->master_addr == "127.0.0.1");
  CHECK(env->master_port == 29500);
  env = read_distributed_env(lookup_in({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "5"},
                                        {"MASTER_ADDR", "10.0.0.7"}, {"MASTER_PORT", "1234"}}));
  REQUIRE(env.ok());
  CHECK(env->local_rank == 5);
  CHECK(env->local_world_size == 1);
  CHECK(env->master_addr == "10.0.0.7");
  CHECK(env->master_port == 1234);
  env = read_distributed_env(lookup_in({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                        {"LOCAL_WORLD_SIZE", "4"}}));
  REQUIRE(env.ok());
  CHECK(env->local_world_size == 4);
  CHECK(distributed_env_present(lookup_in({{"WORLD_SIZE", "2"}})));
  CHECK_FALSE(distributed_env_present(lookup_in({})));
}

TEST_CASE("distributed env: malformed variables are errors naming the variable") {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"WORLD_SIZE", "2"}}, "RANK and WORLD_SIZE"},
      {{{"RANK", "2"}, {"WORLD_SIZE", "2"}}, "RANK='2'"},
      {{{"RANK", "-1"}, {"WORLD_SIZE", "2"}}, "RANK='-1'"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE='0'"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2x"}}, "WORLD_SIZE='2x'"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}, "MASTER_PORT='70000'"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", ""}}, "MASTER_ADDR"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "a"}}, "LOCAL_RANK='a'"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "3"}}, "LOCAL_WORLD_SIZE='3'"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "0"}}, "LOCAL_WORLD_SIZE='0'"},
  };
  for (const auto& [vars, expected] : cases) {
    auto env = read_distributed_env(lookup_in(vars));
    REQUIRE_FALSE(env.ok());
    CHECK_THAT(env.error().message, Catch::Contains(expected));
  }
}

TEST_CASE("die-at hook: stage,KIND,microbatch") {
  auto none = read_die_at(lookup_in({}));
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  auto b = read_die_at(lookup_in({{"PIPEWORKS_TEST_DIE_AT", "1,B,2"}}));
  REQUIRE(b.ok());
  CHECK(**b == (sched::Action{1, sched::ActionKind::kBackward, 2}));
  auto send = read_die_at(lookup_in({{"PIPEWORKS_TEST_DIE_AT", "0,SEND_F,3"}}));
  REQUIRE(send.ok());
  CHECK(**send == (sched::Action{0, sched::ActionKind::kSendF, 3}));
  for (const char* bad : {"", "1B2", "1,B", "1,X,2", "a,B,2", "1,B,2,", "1,I,0"}) {
    CHECK_FALSE(read_die_at(lookup_in({{"PIPEWORKS_TEST_DIE_AT", bad}})).ok());
  }
}

TEST_CASE("rank reports: encode/decode round trip") {
  RankStep step;
  step.rank = 3;  // device 1 of replica 1 (pp 2 x dp 2)
  step.device = 1;
  step.replica = 1;
  step.loss_sum = 0.75;
  step.peak_activation_bytes = 4096;
  step.step_ns = 123456;
  step.spans = {{1, sched::Lane::kRecv, {1, sched::ActionKind::kRecvF, 0}, 10, 20},
                {1, sched::Lane::kCompute, {1, sched::ActionKind::kForward, 0}, 20, 35}};
  step.memory = {{1, 35, 2048}};
  step.check = GradientCheck{1e-9, 2e-8, false, true, 1e-5, 4e-5};
  auto back = decode_rank_step(encode_rank_step(step));
  REQUIRE(back.ok());
  CHECK(back->rank == 3);
  CHECK(back->device == 1);
  CHECK(back->replica == 1);
  CHECK(back->loss_sum == 0.75);
  CHECK(back->peak_activation_bytes == 4096);
  CHECK(back->step_ns == 123456);
  CHECK(back->spans == step.spans);
  CHECK(back->memory == step.memory);
  REQUIRE(back->check.has_value());
  CHECK(back->check->max_abs_diff == 1e-9);
  CHECK(back->check->max_rel_diff == 2e-8);
  CHECK_FALSE(back->check->exactly_equal);
  CHECK(back->check->passed);
  CHECK_FALSE(decode_rank_step("{\"rank\": 1}").ok());
  CHECK_FALSE(decode_rank_step("not json").ok());
  CHECK_FALSE(decode_rank_step(R"({"rank":0,"loss_sum":0,"peak_activation_bytes":0,"step_ns":0,)"
                               R"("spans":[["0Q0",1,2]],"memory":[]})")
                   .ok());
}

// Two ranks, K = 2, M = 1: d0 runs F0 SEND_F0 RECV_B0 B0, d1 runs RECV_F0 F0 B0 SEND_B0, each
// span one time unit (10 ns) in the unit-time order:
//   d0: [F0][SEND_F0]        [RECV_B0][B0]
//   d1:      [RECV_F0][F0][B0][SEND_B0]
TEST_CASE("rank reports: merged into one timeline with flows and step statistics") {
  const sched::Schedule schedule = lowered_1f1b(2, 1);
  std::vector<RankStep> steps(2);
  for (int r = 0; r < 2; ++r) {
    steps[static_cast<std::size_t>(r)].rank = r;
    steps[static_cast<std::size_t>(r)].device = r;
    sched::Nanoseconds t = r == 0 ? 0 : 10;
    for (const sched::Action& a : schedule.programs[static_cast<std::size_t>(r)]) {
      const sched::Lane lane = sched::is_send(a.kind)   ? sched::Lane::kSend
                               : sched::is_recv(a.kind) ? sched::Lane::kRecv
                                                        : sched::Lane::kCompute;
      if (r == 0 && a.kind == sched::ActionKind::kRecvB) t = 40;
      steps[static_cast<std::size_t>(r)].spans.push_back({r, lane, a, t, t + 10});
      t += 10;
    }
    steps[static_cast<std::size_t>(r)].step_ns = t;
    steps[static_cast<std::size_t>(r)].peak_activation_bytes = 100 * (r + 1);
  }
  steps[1].loss_sum = 0.5;
  steps[0].check = GradientCheck{0, 0, true, true, 1e-5, 4e-5};
  steps[1].check = GradientCheck{1e-7, 1e-6, false, true, 1e-5, 4e-5};
  auto merged = merge_rank_steps(steps, schedule, 3, 8);
  REQUIRE(merged.ok());
  const sched::Timeline& t = merged->timeline;
  CHECK(t.name == "measured");
  CHECK(t.num_devices == 2);
  CHECK(t.spans.size() == 8);
  REQUIRE(t.flows.size() == 2);
  for (const sched::Flow& f : t.flows) {
    const sched::Action send = t.spans[f.send_span].action;
    const sched::Action recv = t.spans[f.recv_span].action;
    CHECK(sched::is_send(send.kind));
    CHECK(recv == *sched::comm_peer(send, 2));
  }
  CHECK(merged->stats.step == 3);
  CHECK(merged->stats.step_ns == 60);
  CHECK(merged->stats.loss == 0.5);
  CHECK(merged->stats.samples_per_s == Approx(8 * 1e9 / 60));
  CHECK(merged->stats.peak_activation_bytes == (std::vector<sched::Bytes>{100, 200}));
  // Compute busy: d0 F0 [0,10) + B0 [50,60) = 20, d1 F0 [20,30) + B0 [30,40) = 20, makespan 60.
  CHECK(merged->stats.bubble_fraction == Approx(1.0 - 40.0 / 120.0));
  REQUIRE(merged->check.has_value());
  CHECK(merged->check->max_abs_diff == 1e-7);
  CHECK_FALSE(merged->check->exactly_equal);
  CHECK(merged->check->passed);
  steps[1].rank = 0;
  CHECK_FALSE(merge_rank_steps(steps, schedule, 0, 8).ok());
  steps.pop_back();
  CHECK_FALSE(merge_rank_steps(steps, schedule, 0, 8).ok());
}

// pp 2 x dp 2: the timeline is replica 0's (ranks 0 and 2 in Megatron's order), the step the
// slowest rank's, the loss the whole mini-batch's and each device's peak its largest replica's.
TEST_CASE("rank reports: replicas merge into replica 0's timeline with the slowest step and the whole loss") {
  const sched::Schedule schedule = lowered_1f1b(2, 1);
  std::vector<RankStep> steps(4);
  for (int r = 0; r < 4; ++r) {
    RankStep& s = steps[static_cast<std::size_t>(r)];
    s.rank = r;
    s.device = r / 2;
    s.replica = r % 2;
    s.step_ns = 100 + 10 * r;
    s.loss_sum = s.device == 1 ? 2.0 + s.replica : 0;
    s.peak_activation_bytes = 100 * (r + 1);
    for (const sched::Action& a : schedule.programs[static_cast<std::size_t>(s.device)]) {
      s.spans.push_back({s.device, sched::lane_of(a.kind), a, 10 * s.replica, 10 * s.replica + 5});
    }
  }
  auto merged = merge_rank_steps(steps, schedule, 0, 8, 2);
  REQUIRE(merged.ok());
  CHECK(merged->timeline.spans.size() == 8);  // replica 0's 4 + 4 actions
  for (const sched::Span& span : merged->timeline.spans) CHECK(span.start_ns == 0);
  CHECK(merged->stats.step_ns == 130);
  CHECK(merged->stats.loss == 5.0 / 2);  // (2 + 3) / (M 1 x dp 2)
  CHECK(merged->stats.peak_activation_bytes == (std::vector<sched::Bytes>{200, 400}));
  CHECK_FALSE(merge_rank_steps(steps, schedule, 0, 8, 1).ok());
  steps[3].replica = 2;
  CHECK_FALSE(merge_rank_steps(steps, schedule, 0, 8, 2).ok());
}

// tp 2 x pp 2: ranks 2d and 2d + 1 are device d's tensor ranks; the timeline and the loss are
// tensor rank 0's (both tensor ranks of the last stage compute the same loss), the step the
// slowest rank's, each device's peak its largest tensor rank's.
TEST_CASE("rank reports: tensor ranks merge into tensor rank 0's timeline and loss") {
  const sched::Schedule schedule = lowered_1f1b(2, 1);
  std::vector<RankStep> steps(4);
  for (int r = 0; r < 4; ++r) {
    RankStep& s = steps[static_cast<std::size_t>(r)];
    s.rank = r;
    s.device = r / 2;
    s.step_ns = 100 + 10 * r;
    s.loss_sum = s.device == 1 ? 3.0 : 0;
    s.peak_activation_bytes = 100 * (r + 1);
    for (const sched::Action& a : schedule.programs[static_cast<std::size_t>(s.device)]) {
      s.spans.push_back({s.device, sched::lane_of(a.kind), a, 10 * (r % 2), 10 * (r % 2) + 5});
    }
  }
  auto merged = merge_rank_steps(steps, schedule, 0, 8, 1, 2);
  REQUIRE(merged.ok());
  CHECK(merged->timeline.spans.size() == 8);  // tensor rank 0's 4 + 4 actions
  for (const sched::Span& span : merged->timeline.spans) CHECK(span.start_ns == 0);
  CHECK(merged->stats.step_ns == 130);
  CHECK(merged->stats.loss == 3.0);
  CHECK(merged->stats.peak_activation_bytes == (std::vector<sched::Bytes>{200, 400}));
  CHECK_FALSE(merge_rank_steps(steps, schedule, 0, 8, 1, 1).ok());
  CHECK_FALSE(merge_rank_steps(steps, schedule, 0, 8, 2, 2).ok());
}

}  // namespace
}  // namespace pipeworks::hw
