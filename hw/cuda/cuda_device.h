// CUDA helpers of the hardware backend, built only when the found LibTorch has CUDA: per-GPU
// peak memory from the caching allocator's statistics, and action timing with CUDA events
// (the host clock only sees kernel launches; events see when the GPU ran them).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <ATen/cuda/CUDAEvent.h>

#include "sched/timeline.h"

namespace pipeworks::hw::cuda {

int device_count();

struct CudaMemory {
  sched::Bytes allocated_bytes = 0;       // live tensor bytes now
  sched::Bytes peak_allocated_bytes = 0;  // since the last reset_peak_memory
  sched::Bytes reserved_bytes = 0;        // held by the caching allocator
};
// From c10::cuda::CUDACachingAllocator::getDeviceStats (aggregate over pool kinds).
CudaMemory memory_stats(int gpu);
void reset_peak_memory(int gpu);

// Events on one GPU's streams, all measured from one origin event:
//
//   stream:  [origin] ... [e0] F0 [e1] ... [e2] B0 [e3]
//   span F0 = (e0 - origin, e1 - origin), resolved after the step (one synchronize).
//
// Events are created once and re-recorded step after step (no allocation once the clock has
// seen its longest step). Recording and reading throw c10::Error on CUDA errors.
class EventClock {
 public:
  explicit EventClock(int gpu);
  int gpu() const { return gpu_; }
  // Records the origin on the GPU's current stream and forgets earlier marks.
  void start();
  // Records an event on the current stream; returns its index.
  std::size_t mark();
  // Marks recorded since start().
  std::size_t marks() const { return used_; }
  // Waits until the last event recorded (the last mark, or the origin) has happened.
  void synchronize() const;
  // Nanoseconds from the origin to mark `index` (waits for that event).
  sched::Nanoseconds elapsed_ns(std::size_t index) const;

 private:
  int gpu_;
  std::unique_ptr<at::cuda::CUDAEvent> origin_;
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> marks_;  // the first `used_` are this step's
  std::size_t used_ = 0;
};

}  // namespace pipeworks::hw::cuda
