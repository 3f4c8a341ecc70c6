// Measures a step: every action's start and end on a steady clock relative to one origin shared
// by all workers, and memory samples per device, turned into a sched::Timeline ("measured") of
// the simulator's schema -- compute spans on Lane::kCompute, SEND/RECV on kSend/kRecv, a flow
// from each SEND span to its RECV span.
//
//   origin                                              (start_step)
//   |--d0: [F0][SEND_F0][F1][SEND_F1]......[RECV_B0][B0]...
//   |--d1: [RECV_F0 ...][F0][RECV_F1][B0][SEND_B0]...
#pragma once

#include <chrono>
#include <vector>

#include "sched/schedule.h"
#include "sched/timeline.h"

namespace pipeworks::hw {

class Recorder {
 public:
  explicit Recorder(int num_devices);

  // Sets the origin to now and forgets what was recorded.
  void start_step();
  // Nanoseconds since the origin.
  sched::Nanoseconds now_ns() const;

  // Each device's worker records only its own device: no locking needed.
  void record(int device, const sched::Action& action, sched::Nanoseconds start_ns, sched::Nanoseconds end_ns);
  void sample_memory(int device, sched::Nanoseconds time_ns, sched::Bytes bytes);

  // Spans in (device, start) order; flows pair each SEND with its RECV when both were recorded.
  sched::Timeline timeline(const sched::Schedule& schedule, const std::string& name = "measured") const;

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<std::vector<sched::Span>> spans_;
  std::vector<std::vector<sched::MemorySample>> memory_;
};

// The lane an action is drawn on: kSend for SEND_*, kRecv for RECV_*, kCompute otherwise.
sched::Lane lane_of(sched::ActionKind kind);

}  // namespace pipeworks::hw
