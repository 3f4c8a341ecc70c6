// Pins each pipeline worker to cores of its own, so a device's actions run on the same cores in
// every step and in every executor that runs them: two executors of the same device (the run's
// and the stage replay's, never running at once) then time its actions on the same cores, not
// on whichever cores the scheduler picked for each. Pinned workers cannot move off a core that
// another thread (the main thread, the kernel, other processes) wants too, so `auto` pins only
// when at least one core is left over (bench/README.md, "hw", has what both choices cost).
//
//   4 usable cores, 2 threads per worker:   device 0 -> cores {c0, c1}   device 1 -> {c2, c3}
//   (c0 < c1 < ... the calling thread's affinity mask; the OpenMP team a worker starts inherits
//   its mask, so intra-op threads stay on the worker's cores)
//
// Device d gets usable cores [d*t, (d+1)*t) by its global index, so ranks of one multi-process
// run on one machine get distinct cores. LibTorch-free.
#pragma once

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sched/result.h"

namespace pipeworks::hw {

enum class WorkerPinning {
  kOff,   // the OS places worker threads
  kAuto,  // pin when the workers' threads leave at least one usable core free, else don't
  kOn,    // pin; an error when they do not fit the usable cores
};

// "off" | "auto" | "on".
sched::Result<WorkerPinning> parse_worker_pinning(std::string_view text);
std::string_view to_string(WorkerPinning pinning);

// The calling thread's affinity mask, ascending (every online core where it cannot be read).
std::vector<int> usable_cpus();

// Per device, the cores its worker is pinned to: usable[d*t .. (d+1)*t) for t threads per worker.
// Empty when pinning is off, or auto and num_devices * t leaves no usable core free; an error
// when pinning is on and num_devices * t exceeds the usable cores, or an argument is not positive.
sched::Result<std::vector<std::vector<int>>> plan_worker_cpus(WorkerPinning pinning, int num_devices,
                                                              int threads_per_worker, const std::vector<int>& usable);

// The cores of local rank r of `local_ranks` processes on one machine, each with t threads per
// worker: usable[r*t .. (r+1)*t), as plan_worker_cpus gives device r. A rank's process is bound
// whole (its worker, its main thread, its backend's threads), so unlike in-process workers it
// needs no core left over: auto binds whenever local_ranks * t fit the usable cores. Empty when
// off, or auto and they do not fit; an error when on and they do not, or local_rank is out of
// range.
//
//   2 ranks x 1 thread, cores 0-1:   rank 0 -> core 0, rank 1 -> core 1
//   2 ranks x 2 threads, cores 0-3:  rank 0 -> cores 0-1, rank 1 -> cores 2-3
//   4 ranks x 1 thread, cores 0-1:   none (auto), an error (on)
sched::Result<std::vector<int>> plan_rank_cpus(WorkerPinning pinning, int local_rank, int local_ranks,
                                               int threads_per_worker, const std::vector<int>& usable);

// Restricts `thread` to `cpus` (pthread_setaffinity_np); threads it starts later inherit them.
sched::Status pin_thread(std::thread& thread, const std::vector<int>& cpus);
// The same for the calling thread.
sched::Status pin_current_thread(const std::vector<int>& cpus);

// Restricts every thread this process has now to `cpus`, the calling one first (threads started
// later inherit from the thread that starts them). Errors name the thread that could not be.
sched::Status pin_process(const std::vector<int>& cpus);

// "0-1", "2,5,7": a core list as taskset and /proc print it.
std::string format_cpu_list(const std::vector<int>& cpus);

// "device 0 on core 0, device 1 on cores 2-3" for a plan, "not pinned" for an empty one.
std::string describe_worker_cpus(const std::vector<std::vector<int>>& plan);

}  // namespace pipeworks::hw
