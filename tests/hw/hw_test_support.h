// Shared helpers of the hw tests: tiny models and lowered schedules, so every test runs in
// milliseconds on two cores.
#pragma once

#include <torch/torch.h>

#include "hw/exec/executor.h"
#include "hw/model/model_zoo.h"
#include "hw/model/reference.h"
#include "hw/model/stage_cell.h"
#include "sched/generators.h"
#include "sched/passes.h"

// LibTorch pulls in glog, whose CHECK(cond) would shadow Catch's; tests include this header
// before catch.hpp so Catch defines its own.
#undef CHECK

namespace pipeworks::hw::testing {

inline ModelConfig tiny_mlp(double dropout = 0.0) {
  ModelConfig c;
  c.kind = ModelKind::kMlp;
  c.depth = 4;
  c.width = 8;
  c.dropout = dropout;
  return c;
}

inline ModelConfig tiny_transformer(double dropout = 0.0) {
  ModelConfig c;
  c.kind = ModelKind::kTransformer;
  c.layers = 3;
  c.seq_len = 4;
  c.model_width = 8;
  c.heads = 2;
  c.ff_width = 16;
  c.vocab = 16;
  c.dropout = dropout;
  return c;
}

inline sched::Schedule lowered(sched::ScheduleKind kind, int k, int m, bool recompute,
                               std::vector<int> placement = {}) {
  sched::Schedule s = sched::generate(kind, {k, m, std::move(placement)}).value();
  if (recompute) s = sched::add_recompute(s).value();
  return sched::lower_comm(s).value();
}

// Interleaved 1F1B and looped BFS: K stages, v per device (stage s on device s mod K/v).
inline sched::Schedule lowered_virtual(sched::ScheduleKind kind, int k, int m, int v, bool recompute) {
  sched::Schedule s = sched::generate(kind, {k, m, {}}, v).value();
  if (recompute) s = sched::add_recompute(s).value();
  return sched::lower_comm(s).value();
}

inline ExecutorOptions one_thread(OptimizerConfig optimizer = {}) {
  ExecutorOptions options;
  options.threads_per_worker = 1;
  options.optimizer = optimizer;
  options.recv_timeout = std::chrono::seconds(20);
  return options;
}

inline std::vector<torch::Tensor> grads_of(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> out;
  for (const auto& p : parameters) out.push_back(p.grad());
  return out;
}

// Executor over `model` cut uniformly for `schedule`.
inline std::unique_ptr<Executor> make_executor(const Model& model, const sched::Schedule& schedule,
                                               const ExecutorOptions& options,
                                               const std::optional<FailAt>& fail_at = std::nullopt) {
  const auto partition =
      sim::uniform_partition(static_cast<int>(model.layers.size()), schedule.num_stages).value();
  auto cells = make_cells(model, partition, schedule.placement, fail_at).value();
  return std::move(Executor::create(schedule, std::move(cells), options).value());
}

}  // namespace pipeworks::hw::testing
