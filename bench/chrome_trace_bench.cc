// How fast viz writes Chrome traces: the target is a million spans in under a second.
// Input is a hand-built GPipe timeline (K=16, transfers on) so the simulator is not measured.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "tests/viz/gpipe_timeline.h"
#include "viz/chrome_trace.h"

namespace {

using pipeworks::viz::testing::GpipeCosts;
using pipeworks::viz::testing::make_gpipe_timeline;

// K=16: per micro-batch 2K compute spans + 4(K-1) transfer spans = 92; M=10870 gives 1,000,040.
const pipeworks::sched::Timeline& million_span_timeline() {
  static const auto tl = make_gpipe_timeline(16, 10870, GpipeCosts{1'000'003, 2'000'011, 50'007, 1 << 20, 0});
  return tl;
}

void BM_ChromeTraceJson(benchmark::State& state) {
  const auto& tl = million_span_timeline();
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string json = pipeworks::viz::chrome_trace_json({&tl});
    bytes = json.size();
    benchmark::DoNotOptimize(json.data());
  }
  state.counters["spans"] = static_cast<double>(tl.spans.size());
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tl.spans.size()));
}
BENCHMARK(BM_ChromeTraceJson)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_WriteChromeTraceFile(benchmark::State& state) {
  const auto& tl = million_span_timeline();
  const std::string path = "/tmp/pipeworks_chrome_trace_bench.json";
  for (auto _ : state) {
    const auto status = pipeworks::viz::write_chrome_trace(path, {&tl});
    if (!status.ok()) state.SkipWithError(status.error().message.c_str());
  }
  std::remove(path.c_str());
  state.counters["spans"] = static_cast<double>(tl.spans.size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tl.spans.size()));
}
BENCHMARK(BM_WriteChromeTraceFile)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
