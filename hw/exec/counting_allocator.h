// Live and peak CPU bytes per pipeline device, counted at the allocator: a wrapper around
// LibTorch's CPU allocator attributes every allocation to the device of the allocating thread
// (a thread_local set by DeviceScope) and remembers that device in the allocation, so the free
// decrements the right counter even when another thread drops the last reference.
#pragma once

#include <cstdint>

#include "sched/timeline.h"

namespace pipeworks::hw {

// Devices 0..kMaxCountedDevices-1 have counters, and so do the probes that measure beside a
// pipeline's devices, numbered past every device a run can have; allocations from other threads
// (or ids beyond) go to an "unattributed" counter that is not reported.
inline constexpr int kMaxCountedDevices = 64;
inline constexpr int kProfilerCounter = kMaxCountedDevices;         // `pipeworks profile`'s layer probe
inline constexpr int kStageMemoryCounter = kMaxCountedDevices + 1;  // the stage memory probe
inline constexpr int kModelProbeCounter = kMaxCountedDevices + 2;   // the model's shape probe
inline constexpr int kNumCounters = kMaxCountedDevices + 3;

// Installs the counting allocator as LibTorch's CPU allocator (once per process; later calls
// do nothing). Tensors allocated before stay uncounted, and so do their frees. Also raises
// glibc's mmap and trim thresholds (malloc_tuning.h) so allocation costs do not depend on history.
void install_counting_allocator();
bool counting_allocator_installed();

// Attributes the calling thread's allocations to `device` while alive.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_;
};

// Bytes allocated by `device` and not yet freed (0 for devices out of range).
sched::Bytes live_bytes(int device);
// Highest live_bytes(device) since the last reset_peak(device).
sched::Bytes peak_bytes(int device);
// Starts a new peak window at the current live bytes.
void reset_peak(int device);

}  // namespace pipeworks::hw
