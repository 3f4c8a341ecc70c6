// The stage replay: each device's program of the lowered schedule run alone and all at once
// through the executor with a loopback transport, and the prediction built on it.
#include "hw/hw_test_support.h"

#include <string>

#include <catch2/catch.hpp>

#include "hw/exec/loopback_transport.h"
#include "hw/model/stage_cell.h"
#include "hw/predict/prediction.h"
#include "hw/predict/replay_and_measure.h"
#include "hw/predict/stage_replay.h"
#include "hw/predict/stage_replay_json.h"
#include "hw/run/describe_model.h"
#include "hw/run/layer_partition.h"
#include "hw/run/measured_run.h"
#include "hw/run/run.h"
#include "sim/plan/partition_text.h"

namespace pipeworks::hw {
namespace {

RunConfig small_run(sched::ScheduleKind kind, int k, int m, bool recompute) {
  RunConfig config;
  config.model = testing::tiny_mlp();
  config.num_stages = k;
  config.num_microbatches = m;
  config.batch_size = 2 * m;
  config.schedule = kind;
  config.recompute = recompute;
  config.threads_per_worker = 1;
  return config;
}

TEST_CASE("loopback transport: every receive gets its micro-batch's peer tensor at once, sends are dropped") {
  // two micro-batches: stage 0's outputs [2,3] (m=0) and [4,3] (m=1); gradients of stage 1's output
  LoopbackTransport t({{torch::ones({2, 3}), torch::ones({4, 3})}, {torch::ones({2, 5}), torch::ones({4, 5})}},
                      {{torch::zeros({2, 3}), torch::zeros({4, 3})}, {torch::zeros({2, 5}), torch::zeros({4, 5})}});
  using sched::Action;
  using sched::ActionKind;
  auto f = t.recv(Action{1, ActionKind::kRecvF, 1}, std::chrono::seconds(0));
  REQUIRE(f.ok());
  CHECK(f->sizes() == std::vector<std::int64_t>{4, 3});  // stage 0's output of micro-batch 1
  auto b = t.recv(Action{1, ActionKind::kRecvB, 0}, std::chrono::seconds(0));
  REQUIRE(b.ok());
  CHECK(b->sizes() == std::vector<std::int64_t>{2, 5});  // the gradient of stage 1's output of micro-batch 0
  CHECK(t.send(Action{0, ActionKind::kSendF, 0}, torch::ones({1})).ok());
  CHECK_FALSE(t.recv(Action{0, ActionKind::kRecvF, 0}, std::chrono::seconds(0)).ok());  // nothing before stage 0
  CHECK_FALSE(t.recv(Action{0, ActionKind::kForward, 0}, std::chrono::seconds(0)).ok());
  const auto beyond = t.recv(Action{1, ActionKind::kRecvF, 2}, std::chrono::seconds(0));  // no micro-batch 2
  REQUIRE_FALSE(beyond.ok());
  CHECK_THAT(beyond.error().message, Catch::Matchers::Contains("1RECV_F2"));
  t.abort("peer failed");
  auto aborted = t.recv(Action{1, ActionKind::kRecvF, 0}, std::chrono::seconds(0));
  REQUIRE_FALSE(aborted.ok());
  CHECK(aborted.error().message.find("peer failed") != std::string::npos);
  t.reset();
  CHECK(t.recv(Action{1, ActionKind::kRecvF, 0}, std::chrono::seconds(0)).ok());
}

TEST_CASE("stage replay: times for every stage's F, R and B, and a contention factor per device") {
  const RunConfig config = small_run(sched::ScheduleKind::kOneFOneB, 2, 4, true);
  auto schedule = build_schedule(config);
  REQUIRE(schedule.ok());
  auto partition = sim::parse_partition("uniform", num_model_layers(config.model), 2);
  REQUIRE(partition.ok());
  auto replay = replay_schedule(config, *schedule, *partition, 2);
  REQUIRE(replay.ok());
  CHECK(replay->rounds == 2);
  REQUIRE(replay->stages.size() == 2);
  for (const StageTimes& t : replay->stages) {
    CHECK(t.forward.alone.median_ns > 0);
    CHECK(t.recompute.alone.median_ns > 0);
    CHECK(t.backward.alone.median_ns > 0);
    CHECK(t.forward.alone.min_ns <= t.forward.alone.median_ns);
    CHECK(t.forward.alone.median_ns <= t.forward.alone.max_ns);
    // Two devices: the same actions after a sleep, every kind.
    CHECK(t.forward.resumed.median_ns > 0);
    CHECK(t.recompute.resumed.median_ns > 0);
    CHECK(t.backward.resumed.median_ns > 0);
    CHECK(t.forward.first.median_ns > 0);  // each stage's first of a step, every kind
    CHECK(t.recompute.first.median_ns > 0);
    CHECK(t.backward.first.median_ns > 0);
  }
  REQUIRE(replay->device_contention.size() == 2);
  for (double c : replay->device_contention) CHECK(c >= 1.0);
  CHECK(replay->device_alone.size() == 2);
  CHECK(replay->device_together.size() == 2);

  // One device: nothing to contend with, no R without re-materialization.
  const RunConfig one = small_run(sched::ScheduleKind::kGPipe, 1, 2, false);
  auto one_schedule = build_schedule(one);
  REQUIRE(one_schedule.ok());
  auto one_partition = sim::parse_partition("uniform", num_model_layers(one.model), 1);
  REQUIRE(one_partition.ok());
  auto alone = replay_schedule(one, *one_schedule, *one_partition, 1);
  REQUIRE(alone.ok());
  CHECK(alone->device_contention == std::vector<double>{1.0});
  CHECK(alone->device_together.empty());
  CHECK(alone->stages[0].recompute.alone.median_ns == 0);
  CHECK(alone->stages[0].forward.resumed.median_ns == 0);  // one device never waits: not measured
  CHECK(alone->stages[0].backward.resumed.median_ns == 0);
  CHECK(alone->stages[0].forward.first.median_ns > 0);  // measured with one device too

  CHECK_FALSE(replay_schedule(config, *schedule, *partition, 0).ok());
  CHECK_FALSE(replay_schedule(config, *schedule, *one_partition, 1).ok());
  RunConfig odd = config;
  odd.batch_size = 7;
  CHECK_FALSE(replay_schedule(odd, *schedule, *partition, 1).ok());
}

TEST_CASE("interleaving: each side spread evenly over the whole, the replay first on a tie") {
  // Pictures: R = a replay round, s = a run step.
  const auto picture = [](int rounds, int steps) {
    std::string out;
    for (bool replay : interleaving(rounds, steps)) out += replay ? 'R' : 's';
    return out;
  };
  CHECK(picture(5, 6) == "sRsRsRsRsRs");
  CHECK(picture(16, 6) == "RsRRRsRRRsRRsRRRsRRRsR");
  CHECK(picture(3, 3) == "RsRsRs");
  CHECK(picture(2, 0) == "RR");
  CHECK(picture(0, 2) == "ss");
  CHECK(picture(0, 0).empty());
}

TEST_CASE("replay and measure: the replay's rounds and the run's steps, taking turns") {
  RunConfig config = small_run(sched::ScheduleKind::kOneFOneB, 2, 2, false);
  config.steps = 3;
  auto schedule = build_schedule(config);
  REQUIRE(schedule.ok());
  auto partition = sim::fixed_partition(config.partition, num_model_layers(config.model), config.num_stages);
  REQUIRE(partition.ok());
  std::vector<std::pair<int, bool>> seen;
  auto both = replay_and_measure(config, *schedule, *partition, 4, 1,
                                 [&](const MeasuredStep& s, bool warmup) { seen.emplace_back(s.step, warmup); });
  REQUIRE(both.ok());
  CHECK(both->replay.rounds == 4);
  REQUIRE(both->replay.stages.size() == 2);
  CHECK(both->replay.stages[1].backward.alone.median_ns > 0);
  REQUIRE(both->run.steps.size() == 3);
  // interleaving(4, 3) is RsRsRsR: every measured step after a replay round follows one more
  // warm-up step (a replay round leaves other weights in the caches).
  CHECK(seen == std::vector<std::pair<int, bool>>{{0, true}, {1, true}, {2, false}, {3, true}, {4, false},
                                                  {5, true}, {6, false}});
  CHECK(both->run.warmup.size() == 4);
  for (const MeasuredStep& s : both->run.steps) {
    CHECK(s.timeline.spans.size() == schedule->num_actions());
    CHECK(s.peak_activation_bytes.size() == 2);
  }
  CHECK_FALSE(replay_and_measure(config, *schedule, *partition, 0, 1).ok());
  RunConfig no_steps = config;
  no_steps.steps = 0;
  CHECK_FALSE(replay_and_measure(no_steps, *schedule, *partition, 2, 1).ok());
}

TEST_CASE("stage replay on the run's cells: the replay trains the run's very modules") {
  const RunConfig config = small_run(sched::ScheduleKind::kGPipe, 2, 2, false);
  auto schedule = build_schedule(config);
  REQUIRE(schedule.ok());
  auto partition = sim::fixed_partition(config.partition, num_model_layers(config.model), config.num_stages);
  REQUIRE(partition.ok());
  auto stepper = RunStepper::create(config, *schedule, *partition);
  REQUIRE(stepper.ok());
  const std::vector<StageCell>& cells = (*stepper)->cells();
  std::vector<torch::Tensor> before;
  for (const StageCell& c : cells) {
    for (const torch::Tensor& p : c.parameters()) before.push_back(p.detach().clone());
  }
  auto replayer = StageReplayer::create(config, *schedule, *partition, &cells);
  REQUIRE(replayer.ok());
  REQUIRE((*replayer)->round().ok());  // warm-up: each device's optimizer steps its own stages
  std::size_t i = 0, moved = 0;
  for (const StageCell& c : cells) {
    for (const torch::Tensor& p : c.parameters()) moved += torch::equal(p, before[i++]) ? 0 : 1;
  }
  CHECK(moved == before.size());  // every stage's weights, each by its own device's executor
  CHECK_FALSE((*replayer)->result().ok());  // no measured round yet
  REQUIRE((*replayer)->round().ok());
  CHECK((*replayer)->measured_rounds() == 1);
  CHECK((*stepper)->step().ok());  // the run goes on on the same modules

  const std::vector<StageCell> one(cells.begin(), cells.begin() + 1);
  auto wrong = StageReplayer::create(config, *schedule, *partition, &one);
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.error().message, Catch::Contains("1 run cells for 2 stages"));
}

// The plan as text: "warm 0, alone 0, ..., at once".
std::string plan_text(const std::vector<RoundStep>& plan) {
  std::string out;
  for (const RoundStep& s : plan) {
    if (!out.empty()) out += ", ";
    switch (s.step) {
      case ReplayStep::kWarm: out += "warm " + std::to_string(s.device); break;
      case ReplayStep::kAlone: out += "alone " + std::to_string(s.device); break;
      case ReplayStep::kResumed: out += "resumed " + std::to_string(s.device); break;
      case ReplayStep::kAtOnce: out += "at once"; break;
    }
  }
  return out;
}

TEST_CASE("a replay round: each device's measured steps follow a step of its own executor") {
  //   d0: warm alone resumed                        | at once
  //   d1:                     warm alone resumed    | at once
  CHECK(plan_text(round_plan(2, true)) == "warm 0, alone 0, resumed 0, warm 1, alone 1, resumed 1, at once");
  CHECK(plan_text(round_plan(2, false)) == "warm 0, alone 0, warm 1, alone 1, at once");
  CHECK(plan_text(round_plan(1, false)) == "warm 0, alone 0");  // one device: nothing at once
}

TEST_CASE("replay rounds: at least the minimum, and enough for 16 samples of each action") {
  CHECK(replay_rounds_for(5, 1) == 16);
  CHECK(replay_rounds_for(5, 4) == 5);
  CHECK(replay_rounds_for(2, 16) == 2);
  CHECK(replay_rounds_for(1, 3) == 6);
  CHECK(replay_rounds_for(3, 0) == 16);
}

TEST_CASE("stage replay JSON: every kind under every condition as {median, min, max}, keys sorted") {
  ScheduleReplay replay;
  replay.rounds = 1;
  StageTimes t;
  t.forward.alone = {1, 2, 3};
  t.recompute.first = {4, 5, 6};
  t.backward.resumed = {7, 8, 9};
  t.backward_input.alone = {10, 11, 12};
  t.backward_weight.first = {13, 14, 15};
  replay.stages = {t};
  replay.device_contention = {1.5};
  const std::string zero = R"({"max":0,"median":0,"min":0})";
  CHECK(replay_json(replay).dump() ==
        R"({"device_contention":[1.5],"rounds":1,"stages":[{"backward_input_ns":{"max":12,"median":10,"min":11},)"
        R"("backward_ns":)" + zero + R"(,"backward_weight_ns":)" + zero + R"(,"first_backward_input_ns":)" + zero +
            R"(,"first_backward_ns":)" + zero + R"(,"first_backward_weight_ns":{"max":15,"median":13,"min":14},)"
            R"("first_forward_ns":)" + zero +
            R"(,"first_recompute_ns":{"max":6,"median":4,"min":5},"forward_ns":{"max":3,"median":1,"min":2},)"
            R"("recompute_ns":)" + zero + R"(,"resumed_backward_input_ns":)" + zero +
            R"(,"resumed_backward_ns":{"max":9,"median":7,"min":8},"resumed_backward_weight_ns":)" + zero +
            R"(,"resumed_forward_ns":)" + zero + R"(,"resumed_recompute_ns":)" + zero + "}]}");
  // ByKind / ByCondition name the same figures as of(kind)[condition].
  CHECK((*t.of(sched::ActionKind::kRecompute))[ReplayCondition::kFirst].median_ns == 4);
  CHECK(t.of(sched::ActionKind::kSendF) == nullptr);
}

// A stage measured alone only: F, R and B each with median = min = max.
StageTimes times_alone(std::int64_t forward_ns, std::int64_t recompute_ns, std::int64_t backward_ns) {
  StageTimes t;
  t.forward.alone = {forward_ns, forward_ns, forward_ns};
  t.recompute.alone = {recompute_ns, recompute_ns, recompute_ns};
  t.backward.alone = {backward_ns, backward_ns, backward_ns};
  return t;
}

TEST_CASE("a prediction with a replay takes its stage times and per-device contention") {
  const RunConfig config = small_run(sched::ScheduleKind::kGPipe, 2, 4, true);
  auto schedule = build_schedule(config);
  REQUIRE(schedule.ok());
  auto partition = sim::parse_partition("uniform", num_model_layers(config.model), 2);
  REQUIRE(partition.ok());
  auto spec = describe_model(build_model(config.model).value());
  REQUIRE(spec.ok());
  sim::ClusterSpec cluster;
  cluster.name = "test";
  cluster.devices.assign(2, sim::DeviceSpec{});
  cluster.devices[0].relative_speed = 0.25;  // a replay's times are this machine's: speeds are ignored
  cluster.devices_per_node = 2;
  cluster.intra_node = sim::LinkSpec{1e15, 0};
  cluster.inter_node = cluster.intra_node;
  ScheduleReplay replay;
  replay.rounds = 1;
  replay.stages = {times_alone(1000, 3000, 2000), times_alone(500, 1500, 700)};
  replay.device_contention = {1.0, 1.0};
  auto prediction = predict_run(config, *schedule, *partition, *spec, cluster, nullptr, &replay);
  REQUIRE(prediction.ok());
  CHECK(prediction->costs.stages[0].forward_ns == 1000);
  CHECK(prediction->costs.stages[0].recompute_ns == 3000);
  CHECK(prediction->costs.stages[0].backward_ns == 2000);
  CHECK(prediction->costs.stages[1].forward_ns == 500);
  CHECK(prediction->costs.stages[1].resume_forward_ns == 0);  // none measured
  CHECK(prediction->device_slowdown == std::vector<double>{1.0, 1.0});

  // Resumed figures: the excess over alone, never below 0.
  ScheduleReplay resumed = replay;
  resumed.stages[1].forward.resumed = {2620, 2600, 2700};
  resumed.stages[1].backward.resumed = {690, 650, 800};  // faster than alone: no resume cost
  resumed.stages[0].recompute.resumed = {3040, 3000, 3100};
  resumed.stages[0].backward.first = {2500, 2500, 2500};
  auto with_resume = predict_run(config, *schedule, *partition, *spec, cluster, nullptr, &resumed);
  REQUIRE(with_resume.ok());
  CHECK(with_resume->costs.stages[1].resume_forward_ns == 2120);
  CHECK(with_resume->costs.stages[1].resume_backward_ns == 0);
  CHECK(with_resume->costs.stages[0].resume_recompute_ns == 40);
  CHECK(with_resume->costs.stages[0].resume_forward_ns == 0);
  CHECK(with_resume->costs.stages[0].first_forward_ns == 0);  // none measured: as the others
  CHECK(with_resume->costs.stages[0].first_backward_ns == 2500);
  // Stage 1 waits for each input, so every F there resumes: its gradients reach stage 0 after
  // stage 0's R3 ends (4 F + R3 = 7000 ns), no longer before.
  CHECK(with_resume->result.makespan_ns > prediction->result.makespan_ns);

  // Contention 2x on device 1 only: it slows down where it overlaps device 0, device 0 never.
  replay.device_contention = {1.0, 2.0};
  auto contended = predict_run(config, *schedule, *partition, *spec, cluster, nullptr, &replay);
  REQUIRE(contended.ok());
  CHECK(contended->device_slowdown[0] == 1.0);
  CHECK(contended->device_slowdown[1] > 1.0);
  CHECK(contended->device_slowdown[1] <= 2.0);
  CHECK(contended->result.makespan_ns >= prediction->result.makespan_ns);

  ScheduleReplay wrong = replay;
  wrong.stages.pop_back();
  CHECK_FALSE(predict_run(config, *schedule, *partition, *spec, cluster, nullptr, &wrong).ok());
}

}  // namespace
}  // namespace pipeworks::hw
