// Walks a simulated timeline into executor peaks (see peak_memory_walk.h).
#include "hw/peak_memory_walk.h"

#include <algorithm>

namespace pipeworks::hw {
namespace {

// One change or probe on a device. Changes at one time stamp all apply before anything at that
// time is evaluated; probes (a backward starting) read the state after them.
struct Event {
  sched::Nanoseconds time_ns = 0;
  bool probe = false;
  sched::Bytes level = 0;  // change of the simulated activation bytes
  sched::Bytes grads = 0;  // change of the parameter gradients held
  sched::Bytes held = 0;   // change of the input gradients held
  sched::Bytes extra = 0;  // probe: temporaries of the backward starting
};

}  // namespace

std::vector<sched::Bytes> walk_peak_memory(const sched::Timeline& timeline, const sched::Schedule& schedule,
                                           const sim::CostModel& costs, const std::vector<StageExtraBytes>& extra) {
  const auto devices = static_cast<std::size_t>(schedule.num_devices());
  const auto k = static_cast<std::size_t>(schedule.num_stages);
  std::vector<std::vector<Event>> events(devices);
  std::vector<sched::Bytes> previous(devices, 0);
  std::vector<bool> seen(devices, false);
  for (const sched::MemorySample& m : timeline.memory) {
    const auto d = static_cast<std::size_t>(m.device);
    if (m.device < 0 || d >= devices) continue;
    // The first sample is the static memory: the baseline, not a change.
    if (seen[d]) events[d].push_back(Event{m.time_ns, false, m.bytes - previous[d], 0, 0, 0});
    seen[d] = true;
    previous[d] = m.bytes;
  }
  const auto stage_bytes = [&](std::size_t s, sched::Bytes sim::StageCost::*field) {
    return s < costs.stages.size() ? costs.stages[s].*field : 0;
  };
  // The first backward of each stage, by start time.
  std::vector<const sched::Span*> first(k, nullptr);
  for (const sched::Span& span : timeline.spans) {
    if (span.lane != sched::Lane::kCompute || span.action.kind != sched::ActionKind::kBackward) continue;
    const auto s = static_cast<std::size_t>(span.action.stage);
    if (s < k && (first[s] == nullptr || span.start_ns < first[s]->start_ns)) first[s] = &span;
  }
  // Stages that re-materialize: their F output (kept as input_bytes by the simulator until their
  // B) is the next stage's input, freed when B(s+1,m) drops it (R makes a new one).
  std::vector<bool> rematerializes(k, false);
  for (const sched::Span& span : timeline.spans) {
    const auto s = static_cast<std::size_t>(span.action.stage);
    if (span.lane == sched::Lane::kCompute && span.action.kind == sched::ActionKind::kRecompute && s < k) {
      rematerializes[s] = true;
    }
  }
  for (const sched::Span& span : timeline.spans) {
    if (span.lane != sched::Lane::kCompute) continue;
    const int stage = span.action.stage;
    const auto s = static_cast<std::size_t>(stage);
    if (stage < 0 || s >= k) continue;
    const auto d = static_cast<std::size_t>(schedule.device_of(stage));
    const StageExtraBytes bytes = s < extra.size() ? extra[s] : StageExtraBytes{};
    // A forward's peak sits above the level its end leaves (its stash, or its output alone).
    if (span.action.kind == sched::ActionKind::kForward || span.action.kind == sched::ActionKind::kRecompute) {
      const bool no_graph = span.action.kind == sched::ActionKind::kForward && rematerializes[s];
      events[d].push_back(Event{span.end_ns, true, 0, 0, 0, no_graph ? bytes.forward_no_grad : bytes.forward});
      continue;
    }
    if (span.action.kind != sched::ActionKind::kBackward) continue;
    const bool is_first = first[s] == &span;
    events[d].push_back(Event{span.start_ns, true, 0, 0, 0, is_first ? bytes.first : bytes.later});
    if (is_first) events[d].push_back(Event{span.end_ns, false, 0, stage_bytes(s, &sim::StageCost::grad_bytes), 0, 0});
    // B(s,m) makes the gradient of s's input (held on s's device); it consumes the one of s+1.
    if (stage > 0) {
      events[d].push_back(Event{span.end_ns, false, 0, 0, stage_bytes(s - 1, &sim::StageCost::output_bytes), 0});
    }
    if (s + 1 < k) {
      const auto next = static_cast<std::size_t>(schedule.device_of(stage + 1));
      events[next].push_back(Event{span.end_ns, false, 0, 0, -stage_bytes(s, &sim::StageCost::output_bytes), 0});
    }
    //   F(s,m) end: +kept (simulated) ... B(s+1,m) end: -kept (here) ... B(s,m) end: -kept (simulated, undone)
    if (s + 1 < k && rematerializes[s]) {
      events[d].push_back(Event{span.end_ns, false, stage_bytes(s, &sim::StageCost::input_bytes), 0, 0, 0});
    }
    if (stage > 0 && rematerializes[s - 1]) {
      const auto previous_device = static_cast<std::size_t>(schedule.device_of(stage - 1));
      events[previous_device].push_back(
          Event{span.end_ns, false, -stage_bytes(s - 1, &sim::StageCost::input_bytes), 0, 0, 0});
    }
  }
  std::vector<sched::Bytes> peaks(devices, 0);
  for (std::size_t d = 0; d < devices; ++d) {
    std::vector<Event>& list = events[d];
    std::stable_sort(list.begin(), list.end(), [](const Event& a, const Event& b) {
      return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : (!a.probe && b.probe);
    });
    sched::Bytes level = 0, grads = 0, held = 0, peak = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Event& e = list[i];
      level += e.level;
      grads += e.grads;
      held += e.held;
      const sched::Bytes now = level + grads + held;
      if (e.probe) {
        peak = std::max(peak, now + e.extra);
      } else if (i + 1 == list.size() || list[i + 1].time_ns != e.time_ns || list[i + 1].probe) {
        peak = std::max(peak, now);  // after every change at this time stamp
      }
    }
    peaks[d] = peak;
  }
  return peaks;
}

}  // namespace pipeworks::hw
