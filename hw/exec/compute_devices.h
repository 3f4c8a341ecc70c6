// Where an in-process run's pipeline devices compute -- this CPU's worker threads, or GPUs -- for
// every piece of code that executes a lowered schedule in one process: the training run, the
// measured run and the stage replay of `run --predict`, the stage memory probe. One object puts
// cells and tensors there, gives the executor its clocks and hand-off transport, and meters each
// device's memory, so each of those has one code path for both, and the CPU tests run the path
// the GPUs take. Includes LibTorch: for hw/ sources (hw/run/device_support.h is the LibTorch-free face).
//
//   kCpu:  device d = worker thread d     host steady clock   in-process queues   counting allocator
//   kCuda: device d = GPU d % gpus        CUDA events         copy streams        caching allocator
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "hw/exec/device_kind.h"
#include "hw/exec/executor.h"
#include "hw/exec/transport.h"
#include "hw/model/model_zoo.h"
#include "hw/model/stage_cell.h"
#include "sched/result.h"
#include "sched/schedule.h"

namespace pipeworks::hw {

class ComputeDevices {
 public:
  ComputeDevices() = default;
  virtual ~ComputeDevices() = default;
  ComputeDevices(const ComputeDevices&) = delete;
  ComputeDevices& operator=(const ComputeDevices&) = delete;

  virtual DeviceKind kind() const = 0;
  // Where pipeline device `device` computes.
  virtual torch::Device device_of(int device) const = 0;
  // True when work is queued and runs later (GPUs): step times then end at synchronize().
  virtual bool asynchronous() const = 0;
  // Sets the executor's clocks and whether it counts memory itself (executor_meters_memory()).
  virtual void configure(ExecutorOptions& options) const = 0;
  // The hand-off between the devices of `cells`; nullptr: the executor's in-process queues.
  virtual std::unique_ptr<Transport> transport(const std::vector<StageCell>& cells) const = 0;
  // Blocks until the work queued on every device is done (nothing to wait for on the CPU).
  virtual void synchronize() const = 0;
  // Arithmetic exactly as on the CPU reference (GPUs: no TF32 in matrix products, convolutions).
  virtual void use_exact_arithmetic() const = 0;

  // Memory as the device's allocator sees it, for pipeline device (or counter) `device`: on the
  // CPU the counting allocator's bytes of threads inside a DeviceScope(device), on GPUs the
  // caching allocator's of that device's GPU (all streams, every thread).
  virtual sched::Bytes live_bytes(int device) const = 0;
  virtual sched::Bytes peak_bytes(int device) const = 0;
  virtual void reset_peak(int device) const = 0;
  // Which meter device `device`'s memory is counted in (devices sharing a GPU share one).
  virtual int memory_domain(int device) const = 0;
  // True when the executor's own per-device counters are a step's peaks (CPU); otherwise a
  // StepMeter takes them around the step.
  virtual bool executor_meters_memory() const = 0;
};

// This CPU's worker threads: what the executor does by default. The GPUs' are hw/cuda/'s; the
// choice between them by name is hw/run/device_choice.h's, above both.
std::unique_ptr<ComputeDevices> cpu_devices();

// Every cell's layers moved to its device.
void place_cells(const ComputeDevices& devices, std::vector<StageCell>& cells);
// An executor whose cells compute on `devices`: cells placed, options configured (clocks,
// memory), and the devices' hand-off unless `transport` is given.
sched::Result<std::unique_ptr<Executor>> make_executor_on(const ComputeDevices& devices, sched::Schedule schedule,
                                                         std::vector<StageCell> cells, ExecutorOptions options,
                                                         std::unique_ptr<Transport> transport = nullptr);
// Micro-batches moved where the schedule consumes them: inputs to the device of stage 0,
// targets to the device of the last stage.
MicroBatches place_batch(const ComputeDevices& devices, const MicroBatches& batch, const sched::Schedule& schedule);

// One step measured the same way on every device kind. start() waits for the devices, notes
// what is live, starts new peak windows and reads the host clock; finish() waits again, and where
// the executor does not count memory itself (GPUs) replaces the result's peaks with each device's
// peak minus what was live at the start (devices sharing a GPU share its peak). It returns the
// step time: the executor's own on the CPU, the host time to that last wait on GPUs (their work
// is queued; it ends there, not when the host returns from the step).
class StepMeter {
 public:
  StepMeter(const ComputeDevices& devices, int num_devices) : devices_(devices), live_(num_devices, 0) {}
  void start();
  sched::Nanoseconds finish(StepResult& result) const;

 private:
  const ComputeDevices& devices_;
  std::vector<sched::Bytes> live_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace pipeworks::hw
