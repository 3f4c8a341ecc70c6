// How the executor times actions (LibTorch-free): one clock per device, marked by that device's
// worker before and after every action and resolved once the step's workers are done into
// nanoseconds since the step's host origin. The default, HostClock, reads the host's steady
// clock (a mark already is that time, nothing to resolve); on GPUs the host only sees kernel
// launches, so hw/cuda/ has a clock whose marks are CUDA events, resolved after one synchronize.
//
//   main:      origin = now --wake--> ........................ wait(all done) --> finish_step, ns(mark)
//   worker d:          start_step(origin) mark [action] mark  mark [action] mark ... |barrier| ...
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "sched/result.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

// A point in one device's work: nanoseconds since the origin (HostClock) or an opaque token
// (e.g. an event index) that ns() turns into them after finish_step().
using ClockMark = std::int64_t;

// One device's clock. start_step() and mark() run on that device's worker only (no locking);
// finish_step() and ns() run after the worker finished its step, on any thread.
class ActionClock {
 public:
  ActionClock() = default;
  virtual ~ActionClock() = default;
  ActionClock(const ActionClock&) = delete;
  ActionClock& operator=(const ActionClock&) = delete;

  // Before the device's first action of a step; `origin` is the step's host origin, shared by
  // every device. Forgets the previous step's marks.
  virtual void start_step(std::chrono::steady_clock::time_point origin) = 0;
  // This point in the device's work. Never throws: a clock that cannot mark remembers why and
  // reports it from finish_step().
  virtual ClockMark mark() = 0;
  // Makes ns() valid for every mark of the step; may block (a GPU clock waits for its events).
  virtual sched::Status finish_step() = 0;
  // Nanoseconds from the step's origin to `mark` (after a successful finish_step()).
  virtual sched::Nanoseconds ns(ClockMark mark) const = 0;
  // The host time `when` of this step as a mark, where the clock can tell (a host clock); a clock
  // that cannot (a GPU's events) answers nothing. Callable from any thread.
  virtual std::optional<ClockMark> mark_at(std::chrono::steady_clock::time_point when) const {
    (void)when;
    return std::nullopt;
  }
};

// Makes the clock of one device (ExecutorOptions::clock); called once per device the executor
// runs, when it is created.
using ActionClockFactory = std::function<std::unique_ptr<ActionClock>(int device)>;

// One clock per device in `local_devices` (the factory's, or a HostClock without one); none for
// the other devices of `num_devices`. A factory that throws or returns nothing is an error naming
// the device.
sched::Result<std::vector<std::unique_ptr<ActionClock>>> make_action_clocks(const ActionClockFactory& factory,
                                                                            int num_devices,
                                                                            const std::vector<int>& local_devices);

// The host's steady clock: what the executor uses unless told otherwise; one clock read per mark.
class HostClock final : public ActionClock {
 public:
  void start_step(std::chrono::steady_clock::time_point origin) override { origin_ = origin; }
  ClockMark mark() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
  }
  sched::Status finish_step() override { return sched::Ok{}; }
  sched::Nanoseconds ns(ClockMark mark) const override { return mark; }
  std::optional<ClockMark> mark_at(std::chrono::steady_clock::time_point when) const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(when - origin_).count();
  }

 private:
  std::chrono::steady_clock::time_point origin_{};
};

}  // namespace pipeworks::hw
