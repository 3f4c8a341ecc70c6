// GPUs as ComputeDevices (see gpu_devices.h).
#include "hw/cuda/gpu_devices.h"

#include <functional>
#include <utility>
#include <vector>

#include <ATen/Context.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include "hw/cuda/cuda_copy_transport.h"
#include "hw/cuda/cuda_device.h"
#include "hw/cuda/event_action_clock.h"

namespace pipeworks::hw::cuda {
namespace {

// gpu_of(d): the GPU pipeline device d computes on, or kElsewhere when another process runs it.
constexpr int kElsewhere = -1;

class GpuDevices final : public ComputeDevices {
 public:
  GpuDevices(std::vector<int> gpus, std::function<int(int)> gpu_of, bool own_transport)
      : gpus_(std::move(gpus)), gpu_of_(std::move(gpu_of)), own_transport_(own_transport) {}

  DeviceKind kind() const override { return DeviceKind::kCuda; }
  torch::Device device_of(int device) const override {
    const int gpu = gpu_of_(device);
    if (gpu == kElsewhere) return torch::kCPU;
    return {torch::kCUDA, static_cast<c10::DeviceIndex>(gpu)};
  }
  bool asynchronous() const override { return true; }
  void configure(ExecutorOptions& options) const override {
    options.measure_memory = false;  // CPU counters; GPU memory comes from the caching allocator
    options.clock = event_clocks(gpu_of_);
  }
  std::unique_ptr<Transport> transport(const std::vector<StageCell>& cells) const override {
    if (!own_transport_) return nullptr;
    std::vector<int> stage_gpu;
    for (const StageCell& c : cells) stage_gpu.push_back(gpu_of_(c.device));
    return std::make_unique<CudaCopyTransport>(std::move(stage_gpu));
  }
  void synchronize() const override {
    for (int gpu : gpus_) {
      const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(gpu));
      c10::cuda::device_synchronize();
    }
  }
  void use_exact_arithmetic() const override {
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
  }
  sched::Bytes live_bytes(int device) const override {
    const int gpu = gpu_of_(device);
    return gpu == kElsewhere ? 0 : memory_stats(gpu).allocated_bytes;
  }
  sched::Bytes peak_bytes(int device) const override {
    const int gpu = gpu_of_(device);
    return gpu == kElsewhere ? 0 : memory_stats(gpu).peak_allocated_bytes;
  }
  void reset_peak(int device) const override {
    if (const int gpu = gpu_of_(device); gpu != kElsewhere) reset_peak_memory(gpu);
  }
  int memory_domain(int device) const override { return gpu_of_(device); }  // kElsewhere: not metered
  bool executor_meters_memory() const override { return false; }

 private:
  std::vector<int> gpus_;  // the GPUs this process computes on
  std::function<int(int)> gpu_of_;
  bool own_transport_;  // false: the caller brings the hand-off (a rank's c10d transport)
};

}  // namespace

sched::Result<std::unique_ptr<ComputeDevices>> gpu_devices() {
  const int gpus = device_count();
  if (gpus < 1) return sched::Error{"--device cuda: no CUDA device is visible"};
  std::vector<int> all;
  for (int gpu = 0; gpu < gpus; ++gpu) all.push_back(gpu);
  return std::unique_ptr<ComputeDevices>(
      std::make_unique<GpuDevices>(std::move(all), [gpus](int device) { return device % gpus; }, true));
}

std::unique_ptr<ComputeDevices> rank_gpu_devices(int device, int gpu) {
  return std::make_unique<GpuDevices>(
      std::vector<int>{gpu}, [device, gpu](int d) { return d == device ? gpu : kElsewhere; }, false);
}

}  // namespace pipeworks::hw::cuda
