// One rank's part of a multi-process run, in the steps every such run takes (distributed_run.h
// runs them; distributed_prediction.h measures and predicts with them): the set-up of the rank
// (its place, devices, group, tensor-parallel group, replicas, transport and executor), one step with its checks, and
// the step's report gathered on rank 0.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/dist/c10d_group.h"
#include "hw/dist/c10d_replica_sync.h"
#include "hw/dist/c10d_transport.h"
#include "hw/dist/distributed_env.h"
#include "hw/dist/distributed_run.h"
#include "hw/dist/rank_layout.h"
#include "hw/dist/rank_report.h"
#include "hw/dist/rank_tensor_parallel.h"
#include "hw/exec/compute_devices.h"
#include "hw/exec/executor.h"
#include "hw/run/run_setup.h"

namespace pipeworks::hw {

// "rank R: message".
sched::Error rank_error(int rank, const std::string& message);

// What a rank keeps from its set-up to its last step (members in the order they are built,
// destroyed in reverse: the executor, and with it the transport, before the group).
struct RankRun {
  RunConfig config;
  DistributedEnv env;
  RunSetup setup;  // report (schedule, partition, spec) and reference; the cells are the executor's
  RankPlace place;
  std::unique_ptr<ComputeDevices> where;
  C10dGroup group;
  RankTensorParallel tensor_parallel;         // its group and shards; empty with tp 1
  std::shared_ptr<C10dReplicaSync> replicas;  // null without data parallelism
  std::unique_ptr<Executor> executor;
  std::vector<TensorMeta> metas;  // per stage, its output's dtype and shape for one micro-batch
  std::vector<int> machine_cpus;  // the cores this machine's ranks share (the launch's mask)
  std::vector<int> bound_cpus;    // this rank's own, every thread of it bound there; empty: not bound
};

// Per device, the cores its ranks on this machine were bound to (bind_rank in rank_run.cc); empty
// when the ranks are not bound or span machines.
std::vector<std::vector<int>> bound_device_cpus(const RankRun& run);

sched::Result<RankRun> set_up_rank(const RunConfig& config, const DistributedOptions& options);

// This rank's report of one step, and the step's timeline (this rank's device only).
struct RankStepOutcome {
  RankStep mine;
  sched::Timeline timeline;
};

// Step `step` of this rank: its program between the barrier that opens it and the gather, the
// reference's step and the checks (with --check). `meter` times it.
sched::Result<RankStepOutcome> run_rank_step(RankRun& run, StepMeter& meter, int step);

// Sends this rank's report of the step to rank 0 and adds the step to the run's report: on rank
// 0 the merged one (then on_step), on the others their own.
sched::Status record_step(RankRun& run, int step, RankStepOutcome outcome,
                          const std::function<void(const StepStats&)>& on_step);

}  // namespace pipeworks::hw
