// GPUs as ComputeDevices (see gpu_devices.h).
#include "hw/cuda/gpu_devices.h"

#include <ATen/Context.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include "hw/cuda/cuda_copy_transport.h"
#include "hw/cuda/cuda_device.h"
#include "hw/cuda/event_action_clock.h"

namespace pipeworks::hw::cuda {
namespace {

class GpuDevices final : public ComputeDevices {
 public:
  explicit GpuDevices(int gpus) : gpus_(gpus) {}

  std::string name() const override { return "cuda"; }
  torch::Device device_of(int device) const override {
    return {torch::kCUDA, static_cast<c10::DeviceIndex>(gpu_of(device))};
  }
  bool asynchronous() const override { return true; }
  void configure(ExecutorOptions& options) const override {
    options.measure_memory = false;  // CPU counters; GPU memory comes from the caching allocator
    options.clock = event_clocks([gpus = gpus_](int device) { return device % gpus; });
  }
  std::unique_ptr<Transport> transport(const std::vector<StageCell>& cells) const override {
    std::vector<int> stage_gpu;
    for (const StageCell& c : cells) stage_gpu.push_back(gpu_of(c.device));
    return std::make_unique<CudaCopyTransport>(std::move(stage_gpu));
  }
  void synchronize() const override {
    for (int gpu = 0; gpu < gpus_; ++gpu) {
      const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(gpu));
      c10::cuda::device_synchronize();
    }
  }
  void use_exact_arithmetic() const override {
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
  }
  sched::Bytes live_bytes(int device) const override { return memory_stats(gpu_of(device)).allocated_bytes; }
  sched::Bytes peak_bytes(int device) const override { return memory_stats(gpu_of(device)).peak_allocated_bytes; }
  void reset_peak(int device) const override { reset_peak_memory(gpu_of(device)); }
  int memory_domain(int device) const override { return gpu_of(device); }
  bool executor_meters_memory() const override { return false; }

 private:
  int gpus_;
  int gpu_of(int device) const { return device % gpus_; }
};

}  // namespace

sched::Result<std::unique_ptr<ComputeDevices>> gpu_devices() {
  const int gpus = device_count();
  if (gpus < 1) return sched::Error{"--device cuda: no CUDA device is visible"};
  return std::unique_ptr<ComputeDevices>(std::make_unique<GpuDevices>(gpus));
}

}  // namespace pipeworks::hw::cuda
