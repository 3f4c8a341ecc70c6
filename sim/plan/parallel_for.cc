// A minimal work-sharing pool: threads pull the next index from one atomic counter.
#include "sim/plan/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace pipeworks::sim {

int default_thread_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t)>& body,
                  const std::function<void(std::size_t)>& on_done, const std::vector<std::size_t>* order) {
  if (count == 0) return;
  const std::size_t wanted = static_cast<std::size_t>(threads <= 0 ? default_thread_count() : threads);
  const std::size_t num_threads = std::min(wanted, count);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::size_t finished = 0;
  std::exception_ptr first_error;

  const auto work = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= count) return;
      const std::size_t i = order != nullptr ? (*order)[k] : k;
      try {
        body(i);
        const std::lock_guard lock(mutex);
        ++finished;
        if (on_done) on_done(finished);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true);
        return;
      }
    }
  };

  if (num_threads == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(num_threads - 1);
    for (std::size_t t = 0; t + 1 < num_threads; ++t) pool.emplace_back(work);
    work();
    for (auto& thread : pool) thread.join();
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace pipeworks::sim
