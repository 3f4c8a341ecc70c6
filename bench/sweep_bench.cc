// The planner's speed targets: the full sweep of a GPT-3-175B-like model (96 blocks) on 64 H100s
// (8 DGX nodes) -- stages in the divisors of 64, micro-batches 1..512 dividing the batch of
// 1536 sequences, GPipe and 1F1B, re-materialization off and on -- in under 2 s on all cores;
// and the full plan of its layouts on 1024 H100s (128 nodes) -- every pp x dp = 1024, the plan's
// four schedules, no sharding and ZeRO-1, re-materialization off and on -- in at most 2 s.
#include <benchmark/benchmark.h>

#include "sim/plan/planner.h"
#include "sim/plan/sweep.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/int_ranges.h"
#include "sim/spec/model_presets.h"

namespace {

using namespace pipeworks;

sim::SweepSpec gpt3_spec() {
  sim::SweepSpec spec;
  spec.model = sim::model_preset("gpt3-175b").value();
  spec.cluster = sim::cluster_preset("multinode", {.nodes = 8}).value();
  spec.batch_sizes = {1536};  // GPT-3 175B's published batch: 3.2M tokens / 2048
  spec.stage_counts = sim::parse_int_list("1,2,4,8,16,32,64").value();
  spec.microbatch_counts = sim::parse_int_list("1..512").value();
  spec.schedules = {sched::ScheduleKind::kGPipe, sched::ScheduleKind::kOneFOneB};
  spec.recompute_modes = {false, true};
  return spec;
}

// state.range(0): threads (0 = every core).
void BM_Gpt3FullSweep(benchmark::State& state) {
  const sim::SweepSpec spec = gpt3_spec();
  sim::SweepOptions options;
  options.threads = static_cast<int>(state.range(0));
  std::size_t rows = 0;
  for (auto _ : state) {
    auto result = sim::run_sweep(spec, options);
    if (!result) {
      state.SkipWithError(result.error().message.c_str());
      return;
    }
    rows = result->rows.size();
    benchmark::DoNotOptimize(result->rows.data());
  }
  state.counters["configs"] = static_cast<double>(rows);
}
BENCHMARK(BM_Gpt3FullSweep)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// The largest single configuration of that sweep: K = 64, M = 512, 1F1B with re-materialization.
void BM_Gpt3LargestConfig(benchmark::State& state) {
  const sim::SweepSpec spec = gpt3_spec();
  const sim::SweepConfig config{1536, 64, 512, sched::ScheduleKind::kOneFOneB, true};
  for (auto _ : state) {
    sim::SweepRow row = sim::evaluate_config(spec, config);
    benchmark::DoNotOptimize(row.makespan_ns);
  }
}
BENCHMARK(BM_Gpt3LargestConfig)->Unit(benchmark::kMillisecond);

// make_plan for GPT-3 175B, batch 1536, on all 1024 GPUs of `multinode --nodes 128`.
// state.range(0): threads (0 = every core).
void BM_Gpt3PlanOn1024(benchmark::State& state) {
  sim::PlanRequest request;
  request.model = sim::model_preset("gpt3-175b").value();
  request.cluster = sim::cluster_preset("multinode", {.nodes = 128}).value();
  request.batch_size = 1536;
  request.num_devices = 1024;
  sim::SweepOptions options;
  options.threads = static_cast<int>(state.range(0));
  std::size_t rows = 0;
  int devices = 0;
  for (auto _ : state) {
    auto plan = sim::make_plan(request, options);
    if (!plan || !plan->best) {
      state.SkipWithError(plan ? "nothing fits" : plan.error().message.c_str());
      return;
    }
    rows = plan->sweep.rows.size();
    devices = plan->sweep.rows[*plan->best].config.total_devices();
  }
  state.counters["configs"] = static_cast<double>(rows);
  state.counters["best_devices"] = devices;
}
BENCHMARK(BM_Gpt3PlanOn1024)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
