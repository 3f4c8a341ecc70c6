// A fixed set of long-lived worker threads that run one round of work at a time: the executor's
// one thread per device, kept from step to step (so each keeps its cores, intra-op threads and
// caches) and woken once per step. LibTorch-free.
//
//   run({p0, p1}):  main ──wake──► w0: p0(0) ─┐ meet ┌─ p1(0) ─┐
//                                  w1: p0(1) ─┤      ├─ p1(1) ─┤──► main: one Status per worker
//                                  w2: p0(2) ─┘      └─ p1(2) ─┘
//   ~WorkerPool: wake every worker to stop, join each.
//
// A phase that throws becomes its worker's error for the round: that worker skips its later
// phases but still meets the others between phases, so a round always ends and the pool serves
// the next one. Nothing here blocks forever except a phase that itself never returns.
#pragma once

#include <barrier>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sched/result.h"

namespace pipeworks::hw {

class WorkerPool {
 public:
  // Work for one worker, called on that worker's thread with its index (0 .. size() - 1).
  using Job = std::function<void(int worker)>;

  // Starts `workers` (>= 1) threads. `on_start`, when given, runs once on each new thread before
  // it serves any round (thread-local settings); if it throws, every round reports that worker's
  // error. An error when a thread cannot be started (the started ones are joined).
  static sched::Result<std::unique_ptr<WorkerPool>> create(int workers, Job on_start = {});
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const;

  // Restricts `worker`'s thread to `cpus` (cpu_affinity.h's pin_thread); before its first round,
  // so that threads it starts (an OpenMP team) inherit them.
  sched::Status pin(int worker, const std::vector<int>& cpus);

  // One round: every worker runs phases[0], then, once every worker finished it, phases[1], and
  // so on; returns when every worker finished, per worker Ok or the error of its phase that threw
  // (std::exception's what(), else "unknown exception"). One round at a time: concurrent calls
  // wait for each other. The phases must outlive the call only.
  std::vector<sched::Status> run(const std::vector<Job>& phases);

 private:
  explicit WorkerPool(int workers);
  void serve(int worker, const Job& on_start);
  void stop();

  std::mutex run_mutex_;  // one round at a time
  std::mutex mutex_;      // guards the fields below up to threads_
  std::condition_variable start_cv_, finished_cv_;
  std::uint64_t generation_ = 0;  // counts rounds; a worker serves each new value once
  bool shutdown_ = false;
  const std::vector<Job>* phases_ = nullptr;  // the round's phases, while it runs
  std::size_t finished_ = 0;                  // workers done with the round
  std::vector<sched::Status> outcomes_;       // per worker, the round's outcome
  std::barrier<> between_phases_;
  std::vector<std::thread> threads_;
};

}  // namespace pipeworks::hw
