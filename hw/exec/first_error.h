// How a step's workers fail: an action's error as a message, and the step's first failure, which
// every other worker sees and stops at (used by the executor, hw/exec/executor.cc).
#pragma once

#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

#include "hw/model/torch_errors.h"
#include "sched/result.h"

namespace pipeworks::hw {

// A failure inside an action: the message gets the action's context added by the worker.
struct ActionError {
  std::string message;
};

// Runs `work`; what it threw as a message, nothing when it returned.
template <class Work>
std::optional<std::string> guarded(Work&& work) {
  try {
    work();
  } catch (const ActionError& e) {
    return e.message;
  } catch (const std::exception& e) {
    return torch_error_message(e);
  } catch (...) {
    return std::string("unknown exception");
  }
  return std::nullopt;
}

// The step's first failure, set by whichever worker fails first; the others see failed() and
// stop.
class FirstError {
 public:
  void reset() {
    failed_.store(false);
    error_.reset();
  }
  void set(const std::string& message) {
    {
      const std::lock_guard lock(mutex_);
      if (!error_) error_ = sched::Error{message};
    }
    failed_.store(true);
  }
  bool failed() const { return failed_.load(); }
  // After the step's workers finished.
  const sched::Error& error() const { return *error_; }

 private:
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::optional<sched::Error> error_;
};

}  // namespace pipeworks::hw
