// Runs an index loop on a pool of std::threads. Each index is handed to exactly one thread, so a
// body that writes only its own pre-sized slot gives the same results for any thread count.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace pipeworks::sim {

// Threads used when a caller asks for 0: std::thread::hardware_concurrency(), at least 1.
int default_thread_count();

// Calls body(i) for every i in [0, count), each exactly once, on min(threads, count) threads
// (threads <= 0 means default_thread_count()). Indices are taken in the order of `order` when
// it is given (a permutation of [0, count), e.g. most expensive first), else ascending.
// After each body returns, on_done(number finished so far) is called under a lock, so calls
// are serialized and their argument rises 1, 2, ..., count. If a body throws, the remaining
// indices are abandoned and the first exception is rethrown on the calling thread.
void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t)>& body,
                  const std::function<void(std::size_t)>& on_done = {},
                  const std::vector<std::size_t>* order = nullptr);

}  // namespace pipeworks::sim
