// Freed host memory stays with the process after stabilize_malloc: a worker thread's arena keeps
// the second heap its live set grew into (glibc unmaps a wholly free heap unless the top pad
// covers one), and the main heap is not trimmed.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <thread>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "hw/exec/malloc_tuning.h"

namespace pipeworks::hw {
namespace {

#if defined(__GLIBC__)
// The heap bytes of every arena after allocating `blocks` x `block_bytes` and after freeing them
// newest first (the heap's top comes free last), allocated and freed by one thread.
std::pair<std::size_t, std::size_t> grown_then_freed(int blocks, std::size_t block_bytes) {
  std::vector<void*> held;
  for (int i = 0; i < blocks; ++i) held.push_back(std::malloc(block_bytes));
  const std::size_t grown = mallinfo2().arena;
  for (auto it = held.rbegin(); it != held.rend(); ++it) std::free(*it);
  return {grown, mallinfo2().arena};
}
#endif

TEST_CASE("freed host memory stays with the process") {
#if defined(__GLIBC__)
  REQUIRE(stabilize_malloc());
  // 96 MiB in 1 MiB blocks on a thread of its own: past one 64 MiB heap of its arena.
  std::pair<std::size_t, std::size_t> worker;
  std::thread([&] { worker = grown_then_freed(96, 1 << 20); }).join();
  CHECK(worker.second == worker.first);
  const auto main_heap = grown_then_freed(512, 48 << 10);
  CHECK(main_heap.second == main_heap.first);
#else
  CHECK_FALSE(stabilize_malloc());
#endif
}

}  // namespace
}  // namespace pipeworks::hw
