// Intra-op thread counts per worker (see threads.h).
#include "hw/exec/threads.h"

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

}  // namespace pipeworks::hw
