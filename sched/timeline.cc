// Lane names and the summary statistics of a Timeline (makespan, busy time, bubble, peak memory).
#include "sched/timeline.h"

#include <algorithm>
#include <limits>

namespace pipeworks::sched {

std::string_view lane_name(Lane lane) {
  switch (lane) {
    case Lane::kCompute: return "compute";
    case Lane::kSend: return "send";
    case Lane::kRecv: return "recv";
    case Lane::kCollective: return "collective";
  }
  return "?";
}

Lane lane_of(ActionKind kind) {
  if (is_send(kind)) return Lane::kSend;
  if (is_recv(kind)) return Lane::kRecv;
  if (is_stage_level(kind)) return Lane::kCollective;
  return Lane::kCompute;
}

TimelineStats compute_stats(const Timeline& timeline) {
  TimelineStats stats;
  const auto num_devices = static_cast<std::size_t>(std::max(timeline.num_devices, 0));
  stats.devices.resize(num_devices);
  if (timeline.spans.empty()) return stats;

  Nanoseconds first = std::numeric_limits<Nanoseconds>::max();
  Nanoseconds last = std::numeric_limits<Nanoseconds>::min();
  for (const Span& s : timeline.spans) {
    first = std::min(first, s.start_ns);
    last = std::max(last, s.end_ns);
  }
  stats.start_ns = first;
  stats.makespan_ns = last - first;

  // Busy time is the union of compute intervals per device (spans may touch but not overlap
  // in a valid timeline; the union keeps the figure right even if they do).
  std::vector<std::vector<std::pair<Nanoseconds, Nanoseconds>>> intervals(num_devices);
  for (const Span& s : timeline.spans) {
    if (s.lane != Lane::kCompute || s.device < 0 || static_cast<std::size_t>(s.device) >= num_devices) continue;
    intervals[static_cast<std::size_t>(s.device)].emplace_back(s.start_ns, s.end_ns);
  }
  Nanoseconds total_idle = 0;
  for (std::size_t d = 0; d < num_devices; ++d) {
    auto& iv = intervals[d];
    std::sort(iv.begin(), iv.end());
    Nanoseconds busy = 0;
    Nanoseconds cur_start = 0, cur_end = std::numeric_limits<Nanoseconds>::min();
    for (const auto& [a, b] : iv) {
      if (a > cur_end) {
        if (cur_end != std::numeric_limits<Nanoseconds>::min()) busy += cur_end - cur_start;
        cur_start = a;
        cur_end = b;
      } else {
        cur_end = std::max(cur_end, b);
      }
    }
    if (cur_end != std::numeric_limits<Nanoseconds>::min()) busy += cur_end - cur_start;
    DeviceStats& ds = stats.devices[d];
    ds.busy_ns = busy;
    ds.idle_ns = stats.makespan_ns - busy;
    ds.bubble_fraction =
        stats.makespan_ns > 0 ? static_cast<double>(ds.idle_ns) / static_cast<double>(stats.makespan_ns) : 0.0;
    total_idle += ds.idle_ns;
  }
  for (const MemorySample& m : timeline.memory) {
    if (m.device < 0 || static_cast<std::size_t>(m.device) >= num_devices) continue;
    auto& peak = stats.devices[static_cast<std::size_t>(m.device)].peak_bytes;
    peak = std::max(peak, m.bytes);
  }
  if (stats.makespan_ns > 0 && num_devices > 0) {
    stats.bubble_fraction = static_cast<double>(total_idle) /
                            (static_cast<double>(stats.makespan_ns) * static_cast<double>(num_devices));
  }
  return stats;
}

}  // namespace pipeworks::sched
