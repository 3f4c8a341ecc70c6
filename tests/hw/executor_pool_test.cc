// The executor's persistent worker pool: the same threads serve every step, a fault in one
// step leaves the pool usable for the next, and destroying an executor (idle, after a fault,
// or never stepped) joins its workers without hanging.
#include <chrono>
#include <optional>

#include "hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

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

TEST_CASE("executor: a resume pause sleeps before each compute action, outside its span, and changes no result") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kGPipe, 1, 2, false);
  auto paused = make_executor(model, schedule, one_thread());
  auto plain = make_executor(model, schedule, one_thread());
  const MicroBatches batch = split_batch(make_batch(model.config, 8, 1), 2).value();
  constexpr auto kPause = std::chrono::milliseconds(20);
  paused->set_resume_pause(kPause);
  auto a = paused->step(batch, 1);
  auto b = plain->step(batch, 1);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->loss == b->loss);
  int compute = 0;
  for (const sched::Span& span : a->timeline.spans) {
    if (span.lane != sched::Lane::kCompute) continue;
    ++compute;
    CHECK(span.end_ns - span.start_ns < std::chrono::nanoseconds(kPause).count());  // the sleep is not in it
  }
  CHECK(compute == 4);
  CHECK(a->step_ns >= compute * std::chrono::nanoseconds(kPause).count());  // but in the step
  paused->set_resume_pause(std::chrono::nanoseconds(0));
  CHECK(paused->step(batch, 2).ok());
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
