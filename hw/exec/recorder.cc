// The step recorder (see recorder.h).
#include "hw/exec/recorder.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "sched/dependencies.h"

namespace pipeworks::hw {

namespace {

std::vector<std::unique_ptr<ActionClock>> host_clocks(int num_devices) {
  std::vector<std::unique_ptr<ActionClock>> clocks;
  for (int d = 0; d < num_devices; ++d) clocks.push_back(std::make_unique<HostClock>());
  return clocks;
}

}  // namespace

Recorder::Recorder(int num_devices) : Recorder(host_clocks(num_devices)) {}

Recorder::Recorder(std::vector<std::unique_ptr<ActionClock>> clocks)
    : origin_(std::chrono::steady_clock::now()),
      clocks_(std::move(clocks)),
      started_(clocks_.size()),
      spans_(clocks_.size()),
      memory_(clocks_.size()) {}

void Recorder::start_step() {
  for (auto& s : spans_) s.clear();
  for (auto& m : memory_) m.clear();
  std::fill(started_.begin(), started_.end(), 0);
  origin_ = std::chrono::steady_clock::now();
}

sched::Nanoseconds Recorder::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
}

void Recorder::start_device(int device) {
  const auto d = static_cast<std::size_t>(device);
  clocks_.at(d)->start_step(origin_);
  started_[d] = 1;
}

void Recorder::record(int device, const sched::Action& action, ClockMark start, ClockMark end) {
  spans_.at(static_cast<std::size_t>(device)).push_back({device, sched::lane_of(action.kind), action, start, end});
}

void Recorder::sample_memory(int device, ClockMark time, sched::Bytes bytes) {
  memory_.at(static_cast<std::size_t>(device)).push_back({device, time, bytes});
}

sched::Status Recorder::finish_step() {
  for (std::size_t d = 0; d < clocks_.size(); ++d) {
    if (!started_[d]) continue;
    const ActionClock& clock = *clocks_[d];
    if (auto status = clocks_[d]->finish_step(); !status) {
      return sched::Error{fmt::format("timing device {}: {}", d, status.error().message)};
    }
    for (sched::Span& span : spans_[d]) {
      span.start_ns = clock.ns(span.start_ns);
      span.end_ns = clock.ns(span.end_ns);
    }
    for (sched::MemorySample& sample : memory_[d]) sample.time_ns = clock.ns(sample.time_ns);
  }
  return sched::Ok{};
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
