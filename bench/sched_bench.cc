// Throughput of the schedule pipeline at scale, K = 64, M = 1024 (about 390k actions once
// lowered): generate + comm lowering + validation of GPipe and 1F1B, comm lowering alone (1F1B,
// ZB-H1), and validation alone. Counters report actions per second.
#include <benchmark/benchmark.h>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/validate.h"

namespace {

using pipeworks::sched::ScheduleKind;
using pipeworks::sched::ScheduleShape;

constexpr int kStages = 64;
constexpr int kMicrobatches = 1024;

void generate_lower_validate(benchmark::State& state, ScheduleKind kind) {
  std::size_t actions = 0;
  for (auto _ : state) {
    auto schedule = pipeworks::sched::generate(kind, ScheduleShape{kStages, kMicrobatches, {}});
    auto lowered = pipeworks::sched::lower_comm(*schedule);
    const auto diagnostics = pipeworks::sched::validate(*lowered);
    if (!diagnostics.empty()) state.SkipWithError("generated schedule did not validate");
    actions = lowered->num_actions();
    benchmark::DoNotOptimize(diagnostics.data());
  }
  state.counters["actions"] = static_cast<double>(actions);
  state.counters["actions_per_s"] = benchmark::Counter(
      static_cast<double>(actions) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void lower_only(benchmark::State& state, ScheduleKind kind) {
  auto schedule = pipeworks::sched::generate(kind, ScheduleShape{kStages, kMicrobatches, {}});
  std::size_t actions = 0;
  for (auto _ : state) {
    auto lowered = pipeworks::sched::lower_comm(*schedule);
    if (!lowered) state.SkipWithError("lowering failed");
    actions = lowered->num_actions();
    benchmark::DoNotOptimize(lowered->programs.data());
  }
  state.counters["actions"] = static_cast<double>(actions);
  state.counters["actions_per_s"] = benchmark::Counter(
      static_cast<double>(actions) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void validate_only(benchmark::State& state, ScheduleKind kind) {
  auto schedule = pipeworks::sched::generate(kind, ScheduleShape{kStages, kMicrobatches, {}});
  auto lowered = pipeworks::sched::lower_comm(*schedule);
  for (auto _ : state) {
    const auto diagnostics = pipeworks::sched::validate(*lowered);
    if (!diagnostics.empty()) state.SkipWithError("generated schedule did not validate");
    benchmark::DoNotOptimize(diagnostics.data());
  }
  const auto actions = static_cast<double>(lowered->num_actions());
  state.counters["actions"] = actions;
  state.counters["actions_per_s"] =
      benchmark::Counter(actions * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(generate_lower_validate, gpipe_k64_m1024, ScheduleKind::kGPipe)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(generate_lower_validate, 1f1b_k64_m1024, ScheduleKind::kOneFOneB)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(lower_only, 1f1b_k64_m1024, ScheduleKind::kOneFOneB)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(lower_only, zb_h1_k64_m1024, ScheduleKind::kZbH1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(validate_only, gpipe_k64_m1024, ScheduleKind::kGPipe)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(validate_only, 1f1b_k64_m1024, ScheduleKind::kOneFOneB)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
