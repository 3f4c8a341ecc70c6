// Worker pinning: each device's worker gets cores of its own while there are enough, none after.
#include <pthread.h>
#include <sched.h>

#include <thread>

#include <catch2/catch.hpp>

#include "hw/threads.h"

namespace pipeworks::hw {
namespace {

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  return CPU_COUNT(&set);
}

TEST_CASE("worker cores: consecutive blocks of the allowed CPUs, empty when they run out") {
  const int cpus = allowed_cpus();
  REQUIRE(cpus >= 1);
  CHECK(worker_cores(0, 1).size() == 1);
  CHECK(worker_cores(cpus - 1, 1).size() == 1);
  CHECK(worker_cores(cpus, 1).empty());
  CHECK(worker_cores(0, cpus).size() == static_cast<std::size_t>(cpus));
  CHECK(worker_cores(1, cpus).empty());
  CHECK(worker_cores(-1, 1).empty());
  CHECK(worker_cores(0, 0).empty());
  if (cpus >= 2) CHECK(worker_cores(0, 1) != worker_cores(1, 1));
}

TEST_CASE("pin_worker: the calling thread runs only on its cores afterwards") {
  const int cpus = allowed_cpus();
  const int device = cpus - 1;
  const std::vector<int> cores = worker_cores(device, 1);
  REQUIRE(cores.size() == 1);
  bool pinned = false;
  int count = 0;
  bool on_core = false;
  std::vector<int> seen_from_pinned;
  std::thread([&] {
    pinned = pin_worker(device, 1);
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
    count = CPU_COUNT(&set);
    on_core = CPU_ISSET(cores.front(), &set);
    seen_from_pinned = worker_cores(0, cpus);  // the process's CPUs, not the pinned thread's one
  }).join();
  CHECK(seen_from_pinned.size() == static_cast<std::size_t>(cpus));
  CHECK(pinned);
  CHECK(count == 1);
  CHECK(on_core);
  bool beyond = true;
  std::thread([&] { beyond = pin_worker(cpus, 1); }).join();
  CHECK_FALSE(beyond);  // no cores left for it: stays unpinned
}

}  // namespace
}  // namespace pipeworks::hw
