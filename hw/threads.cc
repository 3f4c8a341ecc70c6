// Intra-op thread counts per worker (see threads.h).
#include "hw/threads.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include <ATen/Parallel.h>

namespace pipeworks::hw {

int default_threads_per_worker(int num_workers) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, num_workers));
}

int resolve_threads_per_worker(int requested, int num_workers) {
  return requested > 0 ? requested : default_threads_per_worker(num_workers);
}

void set_worker_threads(int threads) { at::set_num_threads(std::max(1, threads)); }

std::vector<int> worker_cores(int device, int threads) {
  if (device < 0 || threads < 1) return {};
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  // The main thread's CPUs (pid == its tid), not the caller's: a pinned caller would see only its own.
  if (sched_getaffinity(getpid(), sizeof(allowed), &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  const auto first = static_cast<std::size_t>(device) * static_cast<std::size_t>(threads);
  const auto last = first + static_cast<std::size_t>(threads);
  if (last > cpus.size()) return {};
  return {cpus.begin() + static_cast<std::ptrdiff_t>(first), cpus.begin() + static_cast<std::ptrdiff_t>(last)};
}

bool pin_worker(int device, int threads) {
  const std::vector<int> cores = worker_cores(device, threads);
  if (cores.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cores) CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace pipeworks::hw
