// The ReplicaSync (hw/exec/replica_sync.h) of a multi-process run: each stage's gradients reduced
// over the c10d group of its replicas (the pipeline rank's data-parallel group), one collective a
// stage on the stage's gradients laid end to end in one flat buffer (padded to dp equal shards):
//
//   --zero 0 (DDP)     REDUCE_GRAD(s): flat <- grads; all-reduce(flat)
//                      step(s): wait; grads <- flat; the stage's optimizer on its parameters
//   --zero 1 (ZeRO-1)  REDUCE_GRAD(s): flat <- grads; reduce-scatter(flat) -> this replica's shard
//                      step(s): wait; the optimizer on this replica's shard of the flat parameters
//                      (its state one dp-th of DDP's); all-gather the shards; parameters <- flat
//
// Gloo's collectives give every rank of the group the same bytes, and the optimizers are
// elementwise, so the replicas' parameters stay bit-identical step after step (the run checks).
// Every wait has a deadline and an error names the stage, the collective and the group's ranks.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/dist/c10d_group.h"
#include "hw/exec/replica_sync.h"
#include "hw/model/optimizer_config.h"
#include "sim/spec/zero_sharding.h"

namespace pipeworks::hw {

struct ReplicaSyncOptions {
  std::vector<int> group_ranks;  // the data-parallel group, by replica (world ranks, for errors)
  int replica = 0;               // this rank's index in group_ranks
  sim::ZeroStage zero = sim::ZeroStage::kNone;  // none or kOptimizer
  OptimizerConfig optimizer;
  std::chrono::milliseconds timeout = std::chrono::minutes(3);
};

class C10dReplicaSync final : public ReplicaSync {
 public:
  // `stage_parameters`: per stage of this rank, its trainable parameters (handles to the cells'
  // tensors, which stay where they are). `group`: the data-parallel group's backend.
  static sched::Result<std::shared_ptr<C10dReplicaSync>> create(
      c10::intrusive_ptr<C10dBackend> group, std::map<int, std::vector<at::Tensor>> stage_parameters,
      ReplicaSyncOptions options);
  ~C10dReplicaSync() override;

  int replicas() const override;
  sched::Status reduce_grad(int stage) override;
  sched::Result<std::chrono::steady_clock::time_point> step(int stage) override;

  // After step(stage): the stage's reduced gradient, one tensor a parameter. Under ZeRO-1 a
  // replica holds only its shard, so this all-gathers them: every replica of the group calls it
  // for the same stages in the same order (the run's check does, after each step).
  sched::Result<std::vector<at::Tensor>> reduced_gradients(int stage);

  // Before the first step: the median of `repetitions` timed runs of the stage's reduction and,
  // under ZeRO-1, its all-gather of the parameters (each after one untimed run), on the buffers
  // the step uses (what they hold then is overwritten by the step). Every replica of the group
  // calls it for the same stages in the same order (comm_profile.h).
  struct CollectiveTimes {
    std::int64_t reduce_ns = 0;
    std::int64_t gather_ns = 0;  // 0 without sharding
  };
  sched::Result<CollectiveTimes> time_collectives(int stage, int repetitions);

 private:
  struct Stage;
  C10dReplicaSync(c10::intrusive_ptr<C10dBackend> group, ReplicaSyncOptions options);
  sched::Result<Stage*> find(int stage);
  sched::Status wait(Stage& s, const char* collective);
  static void note_completion(Stage& s);
  sched::Status post_reduction(Stage& s);
  sched::Status post_gather(Stage& s);
  sched::Result<std::int64_t> time_median(Stage& s, int repetitions, sched::Status (C10dReplicaSync::*post)(Stage&),
                                          const char* collective);

  c10::intrusive_ptr<C10dBackend> group_;
  ReplicaSyncOptions options_;
  std::map<int, std::unique_ptr<Stage>> stages_;
};

}  // namespace pipeworks::hw
