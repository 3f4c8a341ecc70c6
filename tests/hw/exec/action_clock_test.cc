// How the executor times actions (hw/exec/action_clock.h): the host clock through the interface, and
// an injected deterministic clock whose marks become known spans, which proves every span and
// memory sample comes from the device's own clock (as CUDA-event clocks do on GPUs).
#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "hw/exec/action_clock.h"

namespace pipeworks::hw {
namespace {

using sched::ScheduleKind;
using namespace testing;

// Spans of `device` in the timeline's order.
std::vector<sched::Span> spans_of(const sched::Timeline& t, int device) {
  std::vector<sched::Span> out;
  for (const sched::Span& s : t.spans) {
    if (s.device == device) out.push_back(s);
  }
  return out;
}

// Each device's spans are its program, action for action, in order and without overlap.
void check_programs_timed(const sched::Schedule& schedule, const StepResult& result) {
  REQUIRE(result.timeline.spans.size() == schedule.num_actions());
  for (int d = 0; d < schedule.num_devices(); ++d) {
    CAPTURE(d);
    const auto& program = schedule.programs[static_cast<std::size_t>(d)];
    const std::vector<sched::Span> spans = spans_of(result.timeline, d);
    REQUIRE(spans.size() == program.size());
    for (std::size_t i = 0; i < spans.size(); ++i) {
      CAPTURE(i, to_string(spans[i].action));
      CHECK(spans[i].action == program[i]);
      CHECK(spans[i].start_ns >= 0);
      CHECK(spans[i].start_ns <= spans[i].end_ns);
      CHECK(spans[i].end_ns <= result.step_ns);
      if (i > 0) CHECK(spans[i - 1].end_ns <= spans[i].start_ns);
    }
  }
}

TEST_CASE("host clock: marks are nanoseconds since the origin and resolve to themselves") {
  HostClock clock;
  ActionClock& c = clock;
  const auto origin = std::chrono::steady_clock::now();
  c.start_step(origin);
  const ClockMark a = c.mark();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const ClockMark b = c.mark();
  REQUIRE(c.finish_step().ok());
  CHECK(c.ns(a) == a);
  CHECK(c.ns(b) == b);
  CHECK(a >= 0);
  CHECK(b - a >= 2'000'000);
  const auto since_origin =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin).count();
  CHECK(b <= since_origin);
}

TEST_CASE("executor timing: the host clock, default or injected, times each device's program in order") {
  const Model model = build_model(tiny_mlp()).value();
  for (const sched::Schedule& schedule :
       {lowered(ScheduleKind::kOneFOneB, 2, 4, false), lowered(ScheduleKind::kGPipe, 4, 3, true, {0, 1, 1, 0})}) {
    for (bool injected : {false, true}) {
      CAPTURE(schedule.num_stages, injected);
      ExecutorOptions options = one_thread();
      if (injected) options.clock = [](int) { return std::make_unique<HostClock>(); };
      auto executor = make_executor(model, schedule, options);
      const int m = schedule.num_microbatches;
      const MicroBatches batch = split_batch(make_batch(model.config, 2 * m, 5), m).value();
      for (int step = 0; step < 2; ++step) {
        const StepResult result = executor->step(batch, 5).value();
        check_programs_timed(schedule, result);
        for (const sched::MemorySample& sample : result.timeline.memory) {
          CHECK(sample.time_ns >= 0);
          CHECK(sample.time_ns <= result.step_ns);
        }
      }
    }
  }
}

// What the counting clocks saw, shared by every device's clock.
struct ClockLog {
  std::mutex mutex;
  std::vector<int> made;  // devices, in factory-call order
  std::set<std::chrono::steady_clock::time_point> origins;
  int starts = 0;
  int finishes = 0;
};

constexpr sched::Nanoseconds kTick = 1000;
constexpr sched::Nanoseconds kOffset = 7;

// Marks 0, 1, 2, ... per step; mark k resolves to k * kTick + kOffset (never a host time), so
// a device's i-th action must span [2i * kTick, (2i + 1) * kTick] + kOffset. Optionally fails
// to resolve its first step.
class CountingClock final : public ActionClock {
 public:
  CountingClock(ClockLog& log, bool fail_first_step) : log_(log), fail_(fail_first_step) {}
  void start_step(std::chrono::steady_clock::time_point origin) override {
    next_ = 0;
    const std::lock_guard lock(log_.mutex);
    ++log_.starts;
    log_.origins.insert(origin);
  }
  ClockMark mark() override { return next_++; }
  sched::Status finish_step() override {
    {
      const std::lock_guard lock(log_.mutex);
      ++log_.finishes;
    }
    if (fail_) {
      fail_ = false;
      return sched::Error{"the events were lost"};
    }
    return sched::Ok{};
  }
  sched::Nanoseconds ns(ClockMark mark) const override { return mark * kTick + kOffset; }

 private:
  ClockLog& log_;
  bool fail_;
  ClockMark next_ = 0;
};

ActionClockFactory counting_clocks(ClockLog& log, int failing_device = -1) {
  return [&log, failing_device](int device) -> std::unique_ptr<ActionClock> {
    {
      const std::lock_guard lock(log.mutex);
      log.made.push_back(device);
    }
    return std::make_unique<CountingClock>(log, device == failing_device);
  };
}

TEST_CASE("executor timing: an injected clock times every action span and memory sample") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kOneFOneB, 3, 4, false, {0, 1, 0});
  ClockLog log;
  ExecutorOptions options = one_thread();
  options.clock = counting_clocks(log);
  auto executor = make_executor(model, schedule, options);
  CHECK(log.made == std::vector<int>{0, 1});
  const MicroBatches batch = split_batch(make_batch(model.config, 8, 3), 4).value();
  for (int step = 1; step <= 2; ++step) {
    const StepResult result = executor->step(batch, 3).value();
    CHECK(log.starts == 2 * step);
    CHECK(log.finishes == 2 * step);
    CHECK(log.origins.size() == static_cast<std::size_t>(step));  // one origin per step, shared
    std::size_t compute = 0;
    for (int d = 0; d < schedule.num_devices(); ++d) {
      const std::vector<sched::Span> spans = spans_of(result.timeline, d);
      REQUIRE(spans.size() == schedule.programs[static_cast<std::size_t>(d)].size());
      for (std::size_t i = 0; i < spans.size(); ++i) {
        CAPTURE(d, i);
        CHECK(spans[i].action == schedule.programs[static_cast<std::size_t>(d)][i]);
        CHECK(spans[i].start_ns == static_cast<sched::Nanoseconds>(2 * i) * kTick + kOffset);
        CHECK(spans[i].end_ns == static_cast<sched::Nanoseconds>(2 * i + 1) * kTick + kOffset);
        if (sched::is_compute(spans[i].action.kind)) ++compute;
      }
    }
    // Memory is sampled at the end of each compute action, on the same clock.
    REQUIRE(result.timeline.memory.size() == compute);
    for (const sched::MemorySample& sample : result.timeline.memory) {
      CHECK((sample.time_ns - kOffset) % (2 * kTick) == kTick);
    }
    CHECK(result.timeline.flows.size() == 16);
  }
}

TEST_CASE("executor timing: a clock that cannot resolve fails the step naming its device, and the next step runs") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kGPipe, 2, 2, false);
  ClockLog log;
  ExecutorOptions options = one_thread();
  options.clock = counting_clocks(log, /*failing_device=*/1);
  auto executor = make_executor(model, schedule, options);
  const MicroBatches batch = split_batch(make_batch(model.config, 4, 9), 2).value();
  auto first = executor->step(batch, 9);
  REQUIRE_FALSE(first.ok());
  CHECK_THAT(first.error().message, Catch::Contains("timing device 1") && Catch::Contains("the events were lost"));
  auto second = executor->step(batch, 9);
  REQUIRE(second.ok());
  check_programs_timed(schedule, *second);
}

TEST_CASE("executor timing: clocks are made only for the devices run, and a missing clock is an error") {
  const Model model = build_model(tiny_mlp()).value();
  const sched::Schedule schedule = lowered(ScheduleKind::kOneFOneB, 2, 2, false);
  const sim::Partition partition = sim::uniform_partition(static_cast<int>(model.layers.size()), 2).value();
  ClockLog log;
  ExecutorOptions options = one_thread();
  options.only_device = 1;
  options.clock = counting_clocks(log);
  REQUIRE(Executor::create(schedule, make_cells(model, partition, schedule.placement).value(), options).ok());
  CHECK(log.made == std::vector<int>{1});

  options.only_device.reset();
  options.clock = [](int device) -> std::unique_ptr<ActionClock> {
    return device == 1 ? nullptr : std::make_unique<HostClock>();
  };
  auto none = Executor::create(schedule, make_cells(model, partition, schedule.placement).value(), options);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(none.error().message, Catch::Contains("no clock for device 1"));
  options.clock = [](int) -> std::unique_ptr<ActionClock> { throw std::runtime_error("no such GPU"); };
  auto throwing = Executor::create(schedule, make_cells(model, partition, schedule.placement).value(), options);
  REQUIRE_FALSE(throwing.ok());
  CHECK_THAT(throwing.error().message, Catch::Contains("device 0") && Catch::Contains("no such GPU"));
}

}  // namespace
}  // namespace pipeworks::hw
