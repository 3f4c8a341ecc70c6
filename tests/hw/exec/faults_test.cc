// Failures inside a pipelined step: every worker stops promptly and step() returns an Error
// naming the stage, action and micro-batch -- never a throw or a hang. Plus the transport, the
// schedule checks and the CLI-facing parsers.
#include <chrono>
#include <thread>

#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include "hw/exec/inprocess_transport.h"
#include "hw/exec/schedule_checks.h"
#include "hw/run/describe_model.h"
#include "hw/run/layer_partition.h"
#include "hw/run/run.h"
#include "sim/plan/partition_text.h"

namespace pipeworks::hw {
namespace {

using sched::ActionKind;
using sched::ScheduleKind;
using namespace testing;
using Clock = std::chrono::steady_clock;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_CASE("a failing layer at any stage, micro-batch and kind stops the step with its action named") {
  const Model model = build_model(tiny_mlp()).value();
  struct Case {
    FailAt at;
    bool recompute;
  };
  const std::vector<Case> cases = {
      {{0, 0, ActionKind::kForward}, false},  {{1, 2, ActionKind::kForward}, false},
      {{3, 3, ActionKind::kForward}, false},  {{0, 1, ActionKind::kBackward}, false},
      {{2, 0, ActionKind::kBackward}, false}, {{3, 3, ActionKind::kBackward}, false},
      {{1, 1, ActionKind::kRecompute}, true}, {{3, 0, ActionKind::kRecompute}, true},
  };
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    for (const Case& c : cases) {
      const FailAt& at = c.at;
      CAPTURE(sched::schedule_kind_name(kind), at.stage, at.microbatch, sched::kind_name(at.kind));
      const sched::Schedule schedule = lowered(kind, 4, 4, c.recompute);
      auto executor = make_executor(model, schedule, one_thread(), at);
      const MicroBatches batch = split_batch(make_batch(model.config, 8, 1), 4).value();
      const auto start = Clock::now();
      auto result = executor->step(batch, 1);
      CHECK(Clock::now() - start < std::chrono::seconds(5));
      REQUIRE_FALSE(result.ok());
      const std::string& message = result.error().message;
      CAPTURE(message);
      const std::string action = to_string(sched::Action{at.stage, at.kind, at.microbatch});
      CHECK(contains(message, "stage " + std::to_string(at.stage) + ", action " + action));
      CHECK(contains(message, "(micro-batch " + std::to_string(at.microbatch) + ")"));
      CHECK(contains(message, "deliberate failure"));
      // The executor is usable again after a failure: the next step fails the same way, no leftovers.
      auto again = executor->step(batch, 1);
      REQUIRE_FALSE(again.ok());
      CHECK(again.error().message == message);
    }
  }
}

TEST_CASE("a shape mismatch at a stage boundary is an error naming the receiving stage") {
  const Model narrow = build_model(tiny_mlp()).value();
  ModelConfig wide_config = tiny_mlp();
  wide_config.width = 9;
  const Model wide = build_model(wide_config).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kOneFOneB, 2, 2, false);
  const sim::Partition partition = sim::uniform_partition(5, 2).value();
  auto cells = make_cells(narrow, partition, {0, 1}).value();
  cells[1] = std::move(make_cells(wide, partition, {0, 1}).value()[1]);
  auto executor = Executor::create(schedule, std::move(cells), one_thread()).value();
  const MicroBatches batch = split_batch(make_batch(narrow.config, 4, 1), 2).value();
  auto result = executor->step(batch, 1);
  REQUIRE_FALSE(result.ok());
  CAPTURE(result.error().message);
  CHECK(contains(result.error().message, "stage 1, action 1F0 (micro-batch 0) on device 1"));
}

TEST_CASE("check_finite stops at the first NaN") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kGPipe, 3, 2, false);
  ExecutorOptions options = one_thread();
  options.check_finite = true;
  auto executor = make_executor(model, schedule, options);
  {
    torch::NoGradGuard no_grad;
    executor->cells()[1].parameters()[0].fill_(std::numeric_limits<float>::quiet_NaN());
  }
  const MicroBatches batch = split_batch(make_batch(model.config, 4, 1), 2).value();
  auto result = executor->step(batch, 1);
  REQUIRE_FALSE(result.ok());
  CAPTURE(result.error().message);
  CHECK(contains(result.error().message, "stage 1, action 1F0 (micro-batch 0)"));
  CHECK(contains(result.error().message, "non-finite"));
}

TEST_CASE("the executor rejects schedules it cannot run") {
  const Model model = build_model(tiny_mlp()).value();
  auto cells_for = [&](const sched::Schedule& s) {
    return make_cells(model, sim::uniform_partition(5, s.num_stages).value(), s.placement).value();
  };
  const sched::Schedule unlowered = sched::gpipe({2, 2, {}}).value();
  auto r1 = Executor::create(unlowered, cells_for(unlowered), one_thread());
  REQUIRE_FALSE(r1.ok());
  CHECK(contains(r1.error().message, "lower_comm"));

  sched::Schedule split = lowered(ScheduleKind::kGPipe, 2, 1, false);
  for (auto& program : split.programs) {
    for (auto& a : program) {
      if (a.kind == ActionKind::kBackward) a.kind = ActionKind::kBackwardInput;
    }
  }
  auto r2 = Executor::create(split, cells_for(split), one_thread());  // I without its W
  REQUIRE_FALSE(r2.ok());
  CHECK(contains(r2.error().message, "stage 0, micro-batch 0: 0 B, 1 I and 0 W; the executor needs one B, or one I and "
                                     "one W"));

  sched::Schedule missing = lowered(ScheduleKind::kGPipe, 2, 2, false);
  std::erase(missing.programs[0], sched::Action{0, ActionKind::kBackward, 1});
  CHECK_FALSE(check_executable(missing).ok());

  sched::Schedule swapped = lowered(ScheduleKind::kGPipe, 2, 1, false);
  std::reverse(swapped.programs[1].begin(), swapped.programs[1].end());
  auto r3 = check_executable(swapped);
  REQUIRE_FALSE(r3.ok());
  CHECK(contains(r3.error().message, "cannot make progress"));
}

TEST_CASE("the in-process transport delivers by receiving action, times out and aborts") {
  InProcessTransport t(3);
  const torch::Tensor x = torch::ones({2});
  REQUIRE(t.send({0, ActionKind::kSendF, 1}, x).ok());
  CHECK(t.pending() == 1);
  auto got = t.recv({1, ActionKind::kRecvF, 1}, std::chrono::milliseconds(10));
  REQUIRE(got.ok());
  CHECK(got->data_ptr() == x.data_ptr());
  CHECK_FALSE(t.send({0, ActionKind::kSendB, 0}, x).ok());  // stage 0 has no previous stage

  auto late = t.recv({1, ActionKind::kRecvB, 0}, std::chrono::milliseconds(20));
  REQUIRE_FALSE(late.ok());
  CHECK(contains(late.error().message, "1RECV_B0 timed out"));

  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    t.abort("peer failed");
  });
  const auto start = Clock::now();
  auto aborted = t.recv({2, ActionKind::kRecvF, 0}, std::chrono::seconds(30));
  aborter.join();
  CHECK(Clock::now() - start < std::chrono::seconds(5));
  REQUIRE_FALSE(aborted.ok());
  CHECK(contains(aborted.error().message, "peer failed"));
  t.reset();
  CHECK(t.send({1, ActionKind::kSendB, 0}, x).ok());
}

TEST_CASE("partitions parse from uniform or per-stage layer counts") {
  CHECK((sim::parse_partition("uniform", 9, 4).value().boundaries == std::vector<int>{0, 3, 5, 7, 9}));
  CHECK((sim::parse_partition("2,3,4", 9, 3).value().boundaries == std::vector<int>{0, 2, 5, 9}));
  CHECK_FALSE(sim::parse_partition("2,3", 9, 3).ok());
  CHECK_FALSE(sim::parse_partition("2,3,5", 9, 3).ok());
  CHECK_FALSE(sim::parse_partition("2,0,7", 9, 3).ok());
  CHECK_FALSE(sim::parse_partition("2,x,7", 9, 3).ok());
}

TEST_CASE("model configs are checked and models describe themselves in the simulator's shape") {
  ModelConfig bad = tiny_transformer();
  bad.heads = 3;
  CHECK_FALSE(build_model(bad).ok());
  CHECK(num_model_layers(tiny_transformer()) == 5);
  const Model model = build_model(tiny_mlp()).value();
  const sim::ModelSpec spec = describe_model(model).value();
  REQUIRE(spec.num_layers() == 5);
  CHECK(spec.layers[0].name == "fc0");
  CHECK(spec.layers[0].param_bytes == (8 * 8 + 8) * 4);
  CHECK(spec.layers[0].output_bytes.per_sample_bytes == 8 * 4);
  CHECK(spec.layers[0].stash_bytes.per_sample_bytes >= 8 * 4);
  CHECK(spec.input_bytes.per_sample_bytes == 8 * 4);
}

TEST_CASE("run_training reports steps and passes the check") {
  RunConfig config;
  config.model = tiny_mlp();
  config.num_stages = 3;
  config.num_microbatches = 4;
  config.batch_size = 8;
  config.steps = 2;
  config.check = true;
  config.threads_per_worker = 1;
  int seen = 0;
  auto report = run_training(config, [&](const StepStats&) { ++seen; });
  REQUIRE(report.ok());
  CHECK(seen == 2);
  CHECK(report->steps.size() == 2);
  REQUIRE(report->check.has_value());
  CHECK(report->check->passed);
  CHECK(report->check->exactly_equal);
  CHECK(report->steps[0].peak_activation_bytes.size() == 3);
  config.fail_at = FailAt{2, 1, ActionKind::kBackward};
  auto failed = run_training(config);
  REQUIRE_FALSE(failed.ok());
  CHECK(contains(failed.error().message, "step 0: stage 2, action 2B1"));
}

}  // namespace
}  // namespace pipeworks::hw
