// hw executor benchmarks: the executor's own cost per action with tiny layers (target: under
// 20 us per action), and a pipelined step against a plain sequential LibTorch loop over the
// same model and mini-batch.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "hw/exec/executor.h"
#include "hw/model/model_zoo.h"
#include "hw/model/reference.h"
#include "hw/model/stage_cell.h"
#include "sched/generators.h"
#include "sched/passes.h"

namespace pipeworks::hw {
namespace {

sched::Schedule lowered(int k, int m) {
  return sched::lower_comm(sched::generate(sched::ScheduleKind::kOneFOneB, {k, m, {}}).value()).value();
}

ModelConfig mlp(int depth, int width) {
  ModelConfig c;
  c.depth = depth;
  c.width = width;
  return c;
}

// One 1F1B step of a width-4 mlp (one layer per stage): almost all of the time is the
// executor's own (threads, transport, bookkeeping). Reported per action of the schedule.
void BM_ExecutorOverheadPerAction(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  const Model model = build_model(mlp(k - 1, 4)).value();
  const sched::Schedule schedule = lowered(k, m);
  ExecutorOptions options;
  options.threads_per_worker = 1;
  auto cells = make_cells(model, sim::uniform_partition(k, k).value(), schedule.placement).value();
  auto executor = Executor::create(schedule, std::move(cells), options).value();
  const MicroBatches batch = split_batch(make_batch(model.config, m, 1), m).value();
  for (auto _ : state) {
    auto result = executor->step(batch, 1);
    if (!result) state.SkipWithError(result.error().message.c_str());
  }
  const auto actions = static_cast<double>(schedule.num_actions());
  state.counters["actions"] = actions;
  state.counters["per_action"] =
      benchmark::Counter(actions * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ExecutorOverheadPerAction)->Args({2, 8})->Args({4, 16})->UseRealTime()->Unit(benchmark::kMicrosecond);

constexpr int kDepth = 8;
constexpr int kWidth = 512;
constexpr int kBatch = 256;

// A pipelined step (K stages, M micro-batches, 1F1B) of an 8x512 mlp on a batch of 256.
void BM_PipelinedStep(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const int m = static_cast<int>(state.range(1));
  const Model model = build_model(mlp(kDepth, kWidth)).value();
  const sched::Schedule schedule = lowered(k, m);
  ExecutorOptions options;
  auto cells = make_cells(model, sim::uniform_partition(kDepth + 1, k).value(), schedule.placement).value();
  auto executor = Executor::create(schedule, std::move(cells), options).value();
  const MicroBatches batch = split_batch(make_batch(model.config, kBatch, 1), m).value();
  for (auto _ : state) {
    auto result = executor->step(batch, 1);
    if (!result) state.SkipWithError(result.error().message.c_str());
  }
  state.counters["samples_per_s"] =
      benchmark::Counter(static_cast<double>(kBatch * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PipelinedStep)->Args({1, 1})->Args({2, 4})->Args({2, 8})->Args({4, 8})->UseRealTime()->Unit(
    benchmark::kMillisecond);

// The same model and batch in a plain loop: forward, loss, backward, SGD step, on this thread
// with all cores for intra-op parallelism.
void BM_SequentialLoop(benchmark::State& state) {
  const Model model = build_model(mlp(kDepth, kWidth)).value();
  Reference reference(model, OptimizerConfig{});
  const MicroBatches batch = split_batch(make_batch(model.config, kBatch, 1), 1).value();
  for (auto _ : state) {
    auto loss = reference.step(batch, 1, ReferenceMode::kFullBatch);
    if (!loss) state.SkipWithError(loss.error().message.c_str());
  }
  state.counters["samples_per_s"] =
      benchmark::Counter(static_cast<double>(kBatch * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SequentialLoop)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipeworks::hw

BENCHMARK_MAIN();
