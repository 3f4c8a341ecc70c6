// How fast the balanced partitioner is at the sizes a sweep calls it with: GPT-3 175B
// (98 layers) into 2..64 stages, with and without a memory cap.
#include <benchmark/benchmark.h>

#include "sim/plan/partition.h"
#include "sim/spec/model_presets.h"

namespace {

using pipeworks::sim::BalanceOptions;
using pipeworks::sim::PartitionProblem;

PartitionProblem gpt3_problem(int stages, bool capped) {
  const auto spec = pipeworks::sim::model_preset("gpt3-175b").value();
  BalanceOptions options;
  options.microbatch_size = 1;
  if (capped) {
    options.capacity_bytes.assign(static_cast<std::size_t>(stages), 80LL << 30);
    for (int s = 0; s < stages; ++s) options.in_flight.push_back(stages - s);  // 1F1B
  }
  return pipeworks::sim::partition_problem(spec, options).value();
}

void BM_BalancedGpt3(benchmark::State& state) {
  const int stages = static_cast<int>(state.range(0));
  const bool capped = state.range(1) != 0;
  const PartitionProblem problem = gpt3_problem(stages, capped);
  for (auto _ : state) {
    auto partition = pipeworks::sim::balanced_partition(problem, stages);
    benchmark::DoNotOptimize(partition);
  }
}
BENCHMARK(BM_BalancedGpt3)->ArgsProduct({{2, 8, 16, 32, 64}, {0, 1}})->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
