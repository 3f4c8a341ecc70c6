// Runs a lowered Schedule on stage cells: one worker thread per device, each interpreting its
// own program action by action (the generators are never re-implemented here). The workers live
// as long as the Executor (started by create(), woken once per step, joined by the destructor).
//
//   F(s,m)  input = micro-batch m (stage 0), the received activation (RECV_F) or, for a stage on
//           the same device, the previous stage's output; detached, requires_grad. Keeps the
//           output and its graph until B. With R(s,m) in the schedule the forward runs under
//           NoGradGuard and only the input is kept.
//   R(s,m)  re-runs the forward with the graph; dropout masks repeat (action_context.h).
//   B(s,m)  backward from the output with the gradient from stage s+1 (last stage: the loss
//           with gradient 1/M); keeps input.grad() for stage s-1 and drops the graph.
//   SEND/RECV go through the Transport; stages sharing a device hand tensors over in memory.
//
// Gradients accumulate over the M micro-batches; after every worker finished its program (a
// barrier), each steps its cells' optimizers once. Any exception, shape mismatch or (with
// check_finite) non-finite value stops every worker promptly (transport abort) and step()
// returns an Error naming the stage, action and micro-batch. It never throws or hangs.
// Each action's span is timed by its device's ActionClock (ExecutorOptions::clock), resolved
// once every worker finished the step.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "hw/action_clock.h"
#include "hw/cpu_affinity.h"
#include "hw/model_zoo.h"
#include "hw/stage_cell.h"
#include "hw/training.h"
#include "hw/transport.h"
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
  // Measurement hook of the stage replay: from the next step on, each worker sleeps `pause`
  // before each compute action, outside its span, as a worker that waited for data does
  // (stage_replay.h: what resuming costs). Zero (the default) turns it off. Call between steps.
  void set_resume_pause(std::chrono::nanoseconds pause);

 private:
  struct State;
  explicit Executor(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace pipeworks::hw
