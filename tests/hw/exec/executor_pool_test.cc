// The executor on its persistent worker pool: the same threads serve every step, a fault in one
// step leaves the pool usable for the next, and destroying an executor (idle, after a fault,
// or never stepped) joins its workers without hanging; and its before_compute observer.
#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

namespace pipeworks::hw {
namespace {

using sched::ActionKind;
using sched::ScheduleKind;
using namespace testing;
using Clock = std::chrono::steady_clock;

TEST_CASE("executor pool: two executors stepped in turn stay bit-identical over many steps") {
  // Both pools live side by side and are woken alternately; any state leaking between steps or
  // between pools (slots, losses, thread settings) would make the losses drift apart.
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kOneFOneB, 4, 4, false);
  auto a = make_executor(model, schedule, one_thread());
  auto b = make_executor(model, schedule, one_thread());
  for (int step = 0; step < 20; ++step) {
    CAPTURE(step);
    const auto seed = static_cast<std::uint64_t>(step + 1);
    const MicroBatches batch = split_batch(make_batch(model.config, 8, seed), 4).value();
    auto ra = a->step(batch, seed);
    auto rb = b->step(batch, seed);
    REQUIRE(ra.ok());
    REQUIRE(rb.ok());
    CHECK(ra->loss == rb->loss);
    CHECK(ra->timeline.spans.size() == static_cast<std::size_t>(schedule.num_actions()));
  }
}

TEST_CASE("executor pool: a fault stops the step, the next good step on the same executor succeeds") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kGPipe, 4, 4, false);
  auto good = make_executor(model, schedule, one_thread());
  auto faulty = make_executor(model, schedule, one_thread(), FailAt{2, 1, ActionKind::kForward});
  const MicroBatches batch = split_batch(make_batch(model.config, 8, 1), 4).value();
  for (int round = 0; round < 5; ++round) {
    const auto start = Clock::now();
    auto failed = faulty->step(batch, 1);
    CHECK(Clock::now() - start < std::chrono::seconds(5));
    REQUIRE_FALSE(failed.ok());
    auto ok = good->step(batch, 1);
    REQUIRE(ok.ok());
    CHECK(ok->timeline.spans.size() == static_cast<std::size_t>(schedule.num_actions()));
  }
}

TEST_CASE("executor: before_compute is called before each compute action, outside its span, and changes no result") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kGPipe, 1, 2, false);
  constexpr auto kPause = std::chrono::milliseconds(20);
  std::atomic<bool> pausing{true};
  std::vector<std::string> observed;  // one device: one worker calls it
  ExecutorOptions options = one_thread();
  options.before_compute = [&](const sched::Action& a) {
    observed.push_back(to_string(a));
    if (pausing.load()) std::this_thread::sleep_for(kPause);
  };
  auto paused = make_executor(model, schedule, options);
  auto plain = make_executor(model, schedule, one_thread());
  const MicroBatches batch = split_batch(make_batch(model.config, 8, 1), 2).value();
  auto a = paused->step(batch, 1);
  auto b = plain->step(batch, 1);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->loss == b->loss);
  // The sleep lies between a compute span and the one before it (or the step's start), not in
  // the span: every gap is at least the pause, whatever the machine's load.
  int compute = 0;
  sched::Nanoseconds previous_end = 0;
  for (const sched::Span& span : a->timeline.spans) {
    if (span.lane != sched::Lane::kCompute) continue;
    ++compute;
    CHECK(span.start_ns - previous_end >= std::chrono::nanoseconds(kPause).count());
    previous_end = span.end_ns;
  }
  CHECK(compute == 4);
  CHECK(a->step_ns >= compute * std::chrono::nanoseconds(kPause).count());  // but in the step
  // Every compute action of the program, in program order, and nothing else.
  std::vector<std::string> compute_actions;
  for (const sched::Action& action : schedule.programs[0]) {
    if (sched::is_compute(action.kind)) compute_actions.push_back(to_string(action));
  }
  CHECK(observed == compute_actions);
  pausing.store(false);
  CHECK(paused->step(batch, 2).ok());
  CHECK(observed.size() == 2 * compute_actions.size());
}

TEST_CASE("executor: a before_compute that throws fails the step naming the action, the next step runs") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kGPipe, 2, 2, false);
  std::atomic<bool> throwing{true};
  ExecutorOptions options = one_thread();
  options.before_compute = [&](const sched::Action& a) {
    if (throwing.load() && a.stage == 1 && a.kind == ActionKind::kBackward) throw std::runtime_error("observer broke");
  };
  auto executor = make_executor(model, schedule, options);
  const MicroBatches batch = split_batch(make_batch(model.config, 4, 1), 2).value();
  auto failed = executor->step(batch, 1);
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.error().message, Catch::StartsWith("stage 1, action 1B"));
  CHECK_THAT(failed.error().message, Catch::EndsWith("on device 1: observer broke"));
  throwing.store(false);
  auto ok = executor->step(batch, 2);
  REQUIRE(ok.ok());
  CHECK(ok->timeline.spans.size() == static_cast<std::size_t>(schedule.num_actions()));
}

TEST_CASE("executor pool: destroying executors never hangs (never stepped, stepped, failed)") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kOneFOneB, 4, 8, true);
  const MicroBatches batch = split_batch(make_batch(model.config, 8, 1), 8).value();
  const auto start = Clock::now();
  for (int i = 0; i < 30; ++i) {
    const std::optional<FailAt> fail_at =
        i % 3 == 2 ? std::optional<FailAt>(FailAt{1, 3, ActionKind::kBackward}) : std::nullopt;
    auto executor = make_executor(model, schedule, one_thread(), fail_at);
    if (i % 3 != 0) {
      auto result = executor->step(batch, 1);
      CHECK(result.ok() == (i % 3 == 1));
    }
  }
  CHECK(Clock::now() - start < std::chrono::seconds(20));
}

}  // namespace
}  // namespace pipeworks::hw
