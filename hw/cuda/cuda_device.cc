// CUDA memory statistics and event timing (see cuda_device.h).
#include "hw/cuda/cuda_device.h"

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace pipeworks::hw::cuda {
namespace {

// Index 0 of every StatArray is StatType::AGGREGATE (all pool kinds) in every LibTorch version.
constexpr std::size_t kAggregate = 0;

c10::DeviceIndex index_of(int gpu) { return static_cast<c10::DeviceIndex>(gpu); }

}  // namespace

int device_count() { return static_cast<int>(c10::cuda::device_count()); }

CudaMemory memory_stats(int gpu) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index_of(gpu));
  CudaMemory m;
  m.allocated_bytes = stats.allocated_bytes[kAggregate].current;
  m.peak_allocated_bytes = stats.allocated_bytes[kAggregate].peak;
  m.reserved_bytes = stats.reserved_bytes[kAggregate].current;
  return m;
}

void reset_peak_memory(int gpu) { c10::cuda::CUDACachingAllocator::resetPeakStats(index_of(gpu)); }

EventClock::EventClock(int gpu) : gpu_(gpu), origin_(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault)) {}

void EventClock::start() {
  const c10::cuda::CUDAGuard guard(index_of(gpu_));
  used_ = 0;
  origin_->record(c10::cuda::getCurrentCUDAStream(index_of(gpu_)));
}

std::size_t EventClock::mark() {
  const c10::cuda::CUDAGuard guard(index_of(gpu_));
  if (used_ == marks_.size()) marks_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
  marks_[used_]->record(c10::cuda::getCurrentCUDAStream(index_of(gpu_)));
  return used_++;
}

void EventClock::synchronize() const { (used_ > 0 ? *marks_[used_ - 1] : *origin_).synchronize(); }

sched::Nanoseconds EventClock::elapsed_ns(std::size_t index) const {
  if (index >= used_) throw std::out_of_range("EventClock: no mark " + std::to_string(index) + " in this step");
  const at::cuda::CUDAEvent& event = *marks_[index];
  event.synchronize();
  return static_cast<sched::Nanoseconds>(static_cast<double>(origin_->elapsed_time(event)) * 1e6);
}

}  // namespace pipeworks::hw::cuda
