// hw/exec/ -- the execution room: how a lowered Schedule runs on stage cells, whatever it trains.
// The executor interpreting each device's program (this file) on its worker pool
// (worker_pool.h), the schedule checks it runs first (schedule_checks.h), the hand-offs between
// devices (transport.h: in-process queues, the loopback), the action clocks and recorder, the
// counting allocator and the compute devices (compute_devices.h: CPU worker threads or GPUs).
// It builds on hw/model/; it never decides what to run or predicts anything.
//
// Runs a lowered Schedule on stage cells: one worker per device (worker_pool.h), each
// interpreting its own program action by action (the generators are never re-implemented here).
// The workers live as long as the Executor (started by create(), woken once per step, joined by
// the destructor).
//
//   F(s,m)  input = micro-batch m (stage 0), the received activation (RECV_F) or, for a stage on
//           the same device, the previous stage's output; detached, requires_grad. Keeps the
//           output and its graph until B. With R(s,m) in the schedule the forward runs under
//           NoGradGuard and only the input is kept.
//   R(s,m)  re-runs the forward with the graph; dropout masks repeat (action_context.h).
//   B(s,m)  backward from the output with the gradient from stage s+1 (last stage: the loss
//           with gradient 1/M); keeps input.grad() for stage s-1 and drops the graph.
//   SEND/RECV go through the Transport; stages sharing a device hand tensors over in memory.
//   REDUCE_GRAD(s) with ExecutorOptions::replicas starts the reduction of stage s's gradients
//           over its data-parallel replicas (replica_sync.h); its span runs until the reduction
//           completed. Without replicas it does nothing, as UNSHARD and RESHARD always do (each
//           stage's cell holds all its parameters); their spans are recorded. A composite (0F3;3B1)OVERLAP_F_B is its two
//           sub-actions, run one after the other, as the program holds them.
//
// A step is one round of the pool in two phases: every worker runs its program, then (once all
// finished: gradients accumulate over the M micro-batches) each steps its cells' optimizers.
// Any exception, shape mismatch or (with check_finite) non-finite value stops every worker
// promptly (transport abort) and step() returns an Error naming the stage, action and
// micro-batch. It never throws or hangs. Each action's span is timed by its device's
// ActionClock (ExecutorOptions::clock), resolved once every worker finished the step.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "hw/exec/action_clock.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/exec/replica_sync.h"
#include "hw/exec/transport.h"
#include "hw/model/model_zoo.h"
#include "hw/model/stage_cell.h"
#include "hw/model/training.h"
#include "sched/schedule.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

struct ExecutorOptions {
  OptimizerConfig optimizer;
  bool check_finite = false;  // fail on NaN/Inf in any stage output or input gradient
  std::chrono::nanoseconds recv_timeout = std::chrono::seconds(60);
  int threads_per_worker = 0;  // intra-op threads per worker; 0: see threads.h
  // Each worker on cores of its own (cpu_affinity.h): device d on the usable cores
  // [d*t, (d+1)*t), by its global index also with only_device.
  WorkerPinning pin_workers = WorkerPinning::kOff;
  bool measure_memory = true;  // install the counting allocator (counting_allocator.h)
  // Run only this device's program (one process per device, a Transport between processes);
  // the other devices' spans, losses and memory are then absent from the StepResult.
  std::optional<int> only_device;
  // Times each device's actions (action_clock.h); empty: the host steady clock. hw/cuda/ gives
  // CUDA-event clocks, so GPU spans are when the GPU ran the work, not when it was launched.
  ActionClockFactory clock;
  // Called by each worker right before each of its compute actions (F, R, B, I, W), after the
  // previous action's span ended and before this one's starts: what it does (e.g. sleep, to time
  // an action as it runs after its worker waited) is in the step's time but in no span. Called on
  // the worker threads, for different devices at once. An exception it throws fails the step as
  // one thrown by the action would. Empty: nothing is called.
  std::function<void(const sched::Action&)> before_compute;
  // Data parallelism (replica_sync.h): reduces gradients at REDUCE_GRAD and steps the optimizers
  // in the executor's place; the loss is scaled by 1 / (M x replicas). Null: one replica.
  std::shared_ptr<ReplicaSync> replicas;
  // The index, in the whole mini-batch, of this replica's first micro-batch (replica r of dp:
  // r x M): dropout masks are drawn by it, as the reference draws them for the whole mini-batch.
  int microbatch_offset = 0;
};

struct StepResult {
  sched::Timeline timeline;        // "measured", times relative to the step's start (host origin)
  double loss = 0;                 // mean of the micro-batch losses
  sched::Nanoseconds step_ns = 0;  // start of the step to the end of the optimizer step
  // Per device: peak(live bytes) - bytes live at the step's start, up to the last backward.
  std::vector<sched::Bytes> peak_activation_bytes;
};

class Executor {
 public:
  // Checks the schedule (schedule_checks.h) and that cells[s] is stage s on placement[s].
  // Takes ownership of the cells; builds one optimizer per cell. `transport` defaults to an
  // InProcessTransport.
  static sched::Result<std::unique_ptr<Executor>> create(sched::Schedule schedule, std::vector<StageCell> cells,
                                                         ExecutorOptions options,
                                                         std::unique_ptr<Transport> transport = nullptr);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // One mini-batch: zero (drop) grads, run every program, step the optimizers. `seed` drives
  // dropout masks (the same seed and micro-batches give the same masks on any interleaving).
  sched::Result<StepResult> step(const MicroBatches& batch, std::uint64_t seed);

  std::vector<StageCell>& cells();
  const sched::Schedule& schedule() const;
  int threads_per_worker() const;
  // Per device, the cores its worker is pinned to; empty when the workers are not pinned.
  const std::vector<std::vector<int>>& worker_cpus() const;

 private:
  struct State;
  explicit Executor(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace pipeworks::hw
