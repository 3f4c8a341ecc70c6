// The step recorder (see recorder.h).
#include "hw/recorder.h"

#include <map>

#include "sched/dependencies.h"

namespace pipeworks::hw {

sched::Lane lane_of(sched::ActionKind kind) {
  if (sched::is_send(kind)) return sched::Lane::kSend;
  if (sched::is_recv(kind)) return sched::Lane::kRecv;
  return sched::Lane::kCompute;
}

Recorder::Recorder(int num_devices)
    : origin_(std::chrono::steady_clock::now()),
      spans_(static_cast<std::size_t>(num_devices)),
      memory_(static_cast<std::size_t>(num_devices)) {}

void Recorder::start_step() {
  for (auto& s : spans_) s.clear();
  for (auto& m : memory_) m.clear();
  origin_ = std::chrono::steady_clock::now();
}

sched::Nanoseconds Recorder::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
}

void Recorder::record(int device, const sched::Action& action, sched::Nanoseconds start_ns,
                      sched::Nanoseconds end_ns) {
  spans_.at(static_cast<std::size_t>(device)).push_back({device, lane_of(action.kind), action, start_ns, end_ns});
}

void Recorder::sample_memory(int device, sched::Nanoseconds time_ns, sched::Bytes bytes) {
  memory_.at(static_cast<std::size_t>(device)).push_back({device, time_ns, bytes});
}

sched::Timeline Recorder::timeline(const sched::Schedule& schedule, const std::string& name) const {
  sched::Timeline t;
  t.name = name;
  t.num_devices = static_cast<int>(spans_.size());
  t.num_stages = schedule.num_stages;
  t.num_microbatches = schedule.num_microbatches;
  std::map<sched::Action, std::size_t> recv_span;
  for (const auto& device_spans : spans_) {
    for (const sched::Span& span : device_spans) {
      if (sched::is_recv(span.action.kind)) recv_span.emplace(span.action, t.spans.size());
      t.spans.push_back(span);
    }
  }
  for (std::size_t i = 0; i < t.spans.size(); ++i) {
    if (!sched::is_send(t.spans[i].action.kind)) continue;
    const auto peer = sched::comm_peer(t.spans[i].action, schedule.num_stages);
    if (!peer) continue;
    if (auto it = recv_span.find(*peer); it != recv_span.end()) t.flows.push_back({i, it->second});
  }
  for (const auto& samples : memory_) t.memory.insert(t.memory.end(), samples.begin(), samples.end());
  return t;
}

}  // namespace pipeworks::hw
