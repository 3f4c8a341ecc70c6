// Measures a step: every action's start and end on its device's ActionClock (action_clock.h;
// the host steady clock unless the executor is given another) relative to one origin shared by
// all workers, and memory samples per device, turned into a sched::Timeline ("measured") of the
// simulator's schema -- compute spans on Lane::kCompute, SEND/RECV on kSend/kRecv, a flow from
// each SEND span to its RECV span.
//
//   origin                                              (start_step)
//   |--d0: [F0][SEND_F0][F1][SEND_F1]......[RECV_B0][B0]...
//   |--d1: [RECV_F0 ...][F0][RECV_F1][B0][SEND_B0]...
//
// Spans and samples hold clock marks while the step runs; finish_step() turns them into
// nanoseconds since the origin.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "hw/exec/action_clock.h"
#include "sched/result.h"
#include "sched/schedule.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

class Recorder {
 public:
  // Host clocks for every device.
  explicit Recorder(int num_devices);
  // clocks[d] times device d; null for a device this recorder never times (another process's).
  explicit Recorder(std::vector<std::unique_ptr<ActionClock>> clocks);

  // Main thread, before the workers start: sets the origin to now and forgets what was recorded.
  void start_step();
  // Host nanoseconds since the origin.
  sched::Nanoseconds now_ns() const;

  // Each device's worker touches only its own device: no locking needed. start_device() comes
  // first in every step; record() and sample_memory() take marks of the same device's clock.
  void start_device(int device);
  ClockMark mark(int device) { return clocks_[static_cast<std::size_t>(device)]->mark(); }
  // The host time `when` as a mark of device's clock, where that clock can tell (action_clock.h).
  std::optional<ClockMark> mark_at(int device, std::chrono::steady_clock::time_point when) const {
    return clocks_[static_cast<std::size_t>(device)]->mark_at(when);
  }
  void record(int device, const sched::Action& action, ClockMark start, ClockMark end);
  void sample_memory(int device, ClockMark time, sched::Bytes bytes);

  // After every worker of the step finished: resolves the marks of the devices that started
  // into nanoseconds since the origin. An error names the device whose clock failed.
  sched::Status finish_step();

  // Spans in (device, start) order; flows pair each SEND with its RECV when both were recorded.
  sched::Timeline timeline(const sched::Schedule& schedule, const std::string& name = "measured") const;

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<std::unique_ptr<ActionClock>> clocks_;
  std::vector<char> started_;  // per device, this step
  std::vector<std::vector<sched::Span>> spans_;
  std::vector<std::vector<sched::MemorySample>> memory_;
};

}  // namespace pipeworks::hw
