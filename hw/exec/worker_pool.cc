// The worker threads and their rounds (see worker_pool.h).
#include "hw/exec/worker_pool.h"

#include <exception>
#include <optional>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "hw/exec/cpu_affinity.h"

namespace pipeworks::hw {
namespace {

// Runs job(worker); what it threw as a message, nothing when it returned.
std::optional<std::string> guarded(const WorkerPool::Job& job, int worker) {
  if (!job) return std::nullopt;
  try {
    job(worker);
  } catch (const std::exception& e) {
    return std::string(e.what());
  } catch (...) {
    return std::string("unknown exception");
  }
  return std::nullopt;
}

}  // namespace

WorkerPool::WorkerPool(int workers)
    : outcomes_(static_cast<std::size_t>(workers), sched::Ok{}), between_phases_(workers) {}

WorkerPool::~WorkerPool() { stop(); }

sched::Result<std::unique_ptr<WorkerPool>> WorkerPool::create(int workers, Job on_start) {
  if (workers < 1) return sched::Error{fmt::format("a worker pool needs at least one worker, not {}", workers)};
  // The pool owns its threads from here on: on a failed start its destructor joins the others.
  auto pool = std::unique_ptr<WorkerPool>(new WorkerPool(workers));
  try {
    pool->threads_.reserve(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w) {
      pool->threads_.emplace_back([p = pool.get(), w, on_start] { p->serve(w, on_start); });
    }
  } catch (const std::system_error& e) {
    return sched::Error{fmt::format("cannot start the worker threads: {}", e.what())};
  }
  return pool;
}

int WorkerPool::size() const { return static_cast<int>(outcomes_.size()); }

sched::Status WorkerPool::pin(int worker, const std::vector<int>& cpus) {
  if (worker < 0 || worker >= static_cast<int>(threads_.size())) {
    return sched::Error{fmt::format("no worker {} in a pool of {}", worker, threads_.size())};
  }
  return pin_thread(threads_[static_cast<std::size_t>(worker)], cpus);
}

std::vector<sched::Status> WorkerPool::run(const std::vector<Job>& phases) {
  const std::lock_guard one_round(run_mutex_);
  std::unique_lock lock(mutex_);
  phases_ = &phases;
  finished_ = 0;
  outcomes_.assign(outcomes_.size(), sched::Ok{});
  ++generation_;
  start_cv_.notify_all();
  finished_cv_.wait(lock, [this] { return finished_ == threads_.size(); });
  phases_ = nullptr;
  return outcomes_;
}

// One worker's life: wait for a new round (or the stop), run its phases, report, wait again.
void WorkerPool::serve(int worker, const Job& on_start) {
  const std::optional<std::string> start_error = guarded(on_start, worker);
  std::uint64_t seen = 0;
  while (true) {
    const std::vector<Job>* phases = nullptr;
    {
      std::unique_lock lock(mutex_);
      start_cv_.wait(lock, [&] { return shutdown_ || generation_ != seen; });
      if (shutdown_) return;
      seen = generation_;
      phases = phases_;
    }
    std::optional<std::string> error = start_error;
    for (std::size_t p = 0; p < phases->size(); ++p) {
      if (p > 0) between_phases_.arrive_and_wait();  // every worker, failed or not, meets here
      if (!error) error = guarded((*phases)[p], worker);
    }
    {
      const std::lock_guard lock(mutex_);
      if (error) outcomes_[static_cast<std::size_t>(worker)] = sched::Error{*error};
      ++finished_;
    }
    finished_cv_.notify_one();
  }
}

void WorkerPool::stop() {
  {
    const std::lock_guard lock(mutex_);
    shutdown_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace pipeworks::hw
