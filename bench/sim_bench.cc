// Simulated actions per second: every schedule at K=64, M=1024 with communication lowered, one
// thread (interleaved 1F1B and looped BFS with v = 2; ZB-V and DualPipeV on 32 devices).
// Target: >= 20 million actions/s without building the Timeline.
#include <benchmark/benchmark.h>

#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/simulator.h"

namespace {

using namespace pipeworks;

// args: schedule kind (sched::ScheduleKind's order: 0 gpipe, 1 1f1b, ... 7 dualpipe-v), comm mode
// (0 overlap, 1 blocking), build timeline (0/1)
void BM_Simulate(benchmark::State& state) {
  const int k = 64;
  const int m = 1024;
  const auto kind = static_cast<sched::ScheduleKind>(state.range(0));
  const auto mode = state.range(1) == 0 ? sim::CommMode::kOverlap : sim::CommMode::kBlocking;
  const bool interleaved = sched::has_virtual_stages(kind) && !sched::is_v_shaped(kind);
  auto schedule = sched::generate(kind, sched::ScheduleShape{k, m, {}}, interleaved ? 2 : 1);
  if (!schedule) {
    state.SkipWithError(schedule.error().message.c_str());
    return;
  }
  auto lowered = sched::lower_comm(*schedule);
  if (!lowered) {
    state.SkipWithError(lowered.error().message.c_str());
    return;
  }
  const auto model = sim::uniform_cost_model(k, 3000, 5000, 700, mode);  // I = W = B/2
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
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
