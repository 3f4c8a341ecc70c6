// The CPU's ComputeDevices and the helpers every device shares (see compute_devices.h). GPUs are
// hw/cuda/gpu_devices.h, compiled only with a CUDA LibTorch.
#include "hw/exec/compute_devices.h"

#include <algorithm>

#include "hw/exec/counting_allocator.h"

namespace pipeworks::hw {
namespace {

class CpuDevices final : public ComputeDevices {
 public:
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  torch::Device device_of(int /*device*/) const override { return torch::kCPU; }
  bool asynchronous() const override { return false; }
  void configure(ExecutorOptions& options) const override { options.measure_memory = true; }
  std::unique_ptr<Transport> transport(const std::vector<StageCell>& /*cells*/) const override { return nullptr; }
  void synchronize() const override {}
  void use_exact_arithmetic() const override {}
  sched::Bytes live_bytes(int device) const override { return hw::live_bytes(device); }
  sched::Bytes peak_bytes(int device) const override { return hw::peak_bytes(device); }
  void reset_peak(int device) const override { hw::reset_peak(device); }
  int memory_domain(int device) const override { return device; }
  bool executor_meters_memory() const override { return true; }
};

}  // namespace

std::unique_ptr<ComputeDevices> cpu_devices() { return std::make_unique<CpuDevices>(); }

void place_cells(const ComputeDevices& devices, std::vector<StageCell>& cells) {
  for (StageCell& c : cells) c.layers->to(devices.device_of(c.device));
}

sched::Result<std::unique_ptr<Executor>> make_executor_on(const ComputeDevices& devices, sched::Schedule schedule,
                                                         std::vector<StageCell> cells, ExecutorOptions options,
                                                         std::unique_ptr<Transport> transport) {
  place_cells(devices, cells);
  devices.configure(options);
  if (!transport) transport = devices.transport(cells);
  return Executor::create(std::move(schedule), std::move(cells), std::move(options), std::move(transport));
}

MicroBatches place_batch(const ComputeDevices& devices, const MicroBatches& batch, const sched::Schedule& schedule) {
  if (!devices.asynchronous()) return batch;  // the CPU: already there, no copies
  const torch::Device first = devices.device_of(schedule.placement.front());
  const torch::Device last = devices.device_of(schedule.placement.back());
  MicroBatches out;
  for (const torch::Tensor& x : batch.inputs) out.inputs.push_back(x.to(first));
  for (const torch::Tensor& y : batch.targets) out.targets.push_back(y.to(last));
  return out;
}

void StepMeter::start() {
  devices_.synchronize();
  if (!devices_.executor_meters_memory()) {
    for (std::size_t d = 0; d < live_.size(); ++d) {
      live_[d] = devices_.live_bytes(static_cast<int>(d));
      devices_.reset_peak(static_cast<int>(d));
    }
  }
  start_ = std::chrono::steady_clock::now();
}

sched::Nanoseconds StepMeter::finish(StepResult& result) const {
  devices_.synchronize();
  if (!devices_.asynchronous()) return result.step_ns;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
  if (!devices_.executor_meters_memory()) {
    result.peak_activation_bytes.assign(live_.size(), 0);
    for (std::size_t d = 0; d < live_.size(); ++d) {
      result.peak_activation_bytes[d] =
          std::max<sched::Bytes>(0, devices_.peak_bytes(static_cast<int>(d)) - live_[d]);
    }
  }
  return ns.count();
}

}  // namespace pipeworks::hw
