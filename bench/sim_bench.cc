// Simulated actions per second: GPipe and 1F1B at K=64, M=1024 with communication lowered, one
// thread. Target: >= 20 million actions/s without building the Timeline.
#include <benchmark/benchmark.h>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/simulator.h"

namespace {

using namespace pipeworks;

// args: schedule kind (0 gpipe, 1 1f1b), comm mode (0 overlap, 1 blocking), build timeline (0/1)
void BM_Simulate(benchmark::State& state) {
  const int k = 64;
  const int m = 1024;
  const auto kind = state.range(0) == 0 ? sched::ScheduleKind::kGPipe : sched::ScheduleKind::kOneFOneB;
  const auto mode = state.range(1) == 0 ? sim::CommMode::kOverlap : sim::CommMode::kBlocking;
  auto schedule = sched::generate(kind, sched::ScheduleShape{k, m, {}});
  auto lowered = sched::lower_comm(*schedule);
  if (!lowered) {
    state.SkipWithError(lowered.error().message.c_str());
    return;
  }
  const auto model = sim::uniform_cost_model(k, 3000, 5000, 700, mode);
  const sim::SimOptions options{state.range(2) != 0};
  std::int64_t actions = 0;
  for (auto _ : state) {
    auto result = sim::simulate(*lowered, model, options);
    if (!result) {
      state.SkipWithError(result.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(result->makespan_ns);
    actions += result->num_actions;
  }
  state.SetItemsProcessed(actions);
  state.SetLabel(std::string(sched::schedule_kind_name(kind)) +
                 (mode == sim::CommMode::kOverlap ? " overlap" : " blocking") +
                 (options.build_timeline ? " +timeline" : ""));
}

BENCHMARK(BM_Simulate)
    ->ArgNames({"kind", "blocking", "timeline"})
    ->ArgsProduct({{0, 1}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
