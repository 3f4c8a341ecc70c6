// A Timeline is "a schedule with times": the same actions, each placed on a device and a lane
// with a start and end, plus memory samples and send->receive flows. The simulator predicts
// one, the hardware backend measures one, viz draws either; nobody converts between formats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/action.h"

namespace pipeworks::sched {

using Nanoseconds = std::int64_t;
using Bytes = std::int64_t;

// kCollective: a stage's collectives over its data-parallel group (UNSHARD, REDUCE_GRAD; RESHARD
// frees, in no time), which run beside the device's compute.
enum class Lane : std::uint8_t { kCompute, kSend, kRecv, kCollective };
inline constexpr int kNumLanes = 4;
std::string_view lane_name(Lane lane);  // "compute", "send", "recv", "collective"
// The lane an action's span lies on: SEND_* send, RECV_* recv, stage-level collective, else compute.
Lane lane_of(ActionKind kind);

struct Span {
  int device = 0;
  Lane lane = Lane::kCompute;
  Action action;  // carries stage, kind and micro-batch
  Nanoseconds start_ns = 0;
  Nanoseconds end_ns = 0;
  Nanoseconds duration_ns() const { return end_ns - start_ns; }
  friend bool operator==(const Span&, const Span&) = default;
};

// Bytes held on a device from time_ns on (a step function; the last sample holds to the end).
struct MemorySample {
  int device = 0;
  Nanoseconds time_ns = 0;
  Bytes bytes = 0;
  friend bool operator==(const MemorySample&, const MemorySample&) = default;
};

// A transfer: indices into Timeline::spans of the SEND span and its matching RECV span.
struct Flow {
  std::size_t send_span = 0;
  std::size_t recv_span = 0;
  friend bool operator==(const Flow&, const Flow&) = default;
};

struct Timeline {
  std::string name;  // "predicted", "measured", ...
  int num_devices = 0;
  int num_stages = 0;
  int num_microbatches = 0;
  std::vector<Span> spans;
  std::vector<MemorySample> memory;
  std::vector<Flow> flows;
  friend bool operator==(const Timeline&, const Timeline&) = default;
};

// Summary numbers every producer and every picture agrees on.
struct DeviceStats {
  Nanoseconds busy_ns = 0;  // union of compute-lane spans
  Nanoseconds idle_ns = 0;  // makespan - busy
  double bubble_fraction = 0;
  Bytes peak_bytes = 0;  // max over memory samples (0 without samples)
};

struct TimelineStats {
  Nanoseconds start_ns = 0;     // earliest span start
  Nanoseconds makespan_ns = 0;  // latest span end - earliest span start
  double bubble_fraction = 0;   // idle compute time over devices x makespan
  std::vector<DeviceStats> devices;
};

TimelineStats compute_stats(const Timeline& timeline);

}  // namespace pipeworks::sched
