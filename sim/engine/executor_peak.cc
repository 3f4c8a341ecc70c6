// Walks a simulated timeline into executor peaks (see executor_peak.h).
#include "sim/engine/executor_peak.h"

#include <algorithm>
#include <utility>

namespace pipeworks::sim {
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

using Events = std::vector<std::vector<Event>>;  // per device

// The simulated activation level's changes (the first sample per device is its static memory: the
// baseline, not a change).
Events level_events(const sched::Timeline& timeline, std::size_t devices) {
  Events events(devices);
  std::vector<sched::Bytes> previous(devices, 0);
  std::vector<bool> seen(devices, false);
  for (const sched::MemorySample& m : timeline.memory) {
    const auto d = static_cast<std::size_t>(m.device);
    if (m.device < 0 || d >= devices) continue;
    if (seen[d]) events[d].push_back(Event{m.time_ns, false, m.bytes - previous[d], 0, 0, 0});
    seen[d] = true;
    previous[d] = m.bytes;
  }
  return events;
}

// What the walk needs to know of the schedule's compute spans beside their own bytes.
struct StageFacts {
  std::vector<const sched::Span*> first_backward;  // per stage, by start time: its first B or I
  std::vector<const sched::Span*> first_grads;     // per stage, by start time: its first B or W
  // Stages that re-materialize: their F output (kept as input_bytes by the simulator until their
  // B) is the next stage's input, freed when B(s+1,m) drops it (R makes a new one).
  std::vector<bool> rematerializes;
};

StageFacts stage_facts(const sched::Timeline& timeline, std::size_t k) {
  StageFacts facts{std::vector<const sched::Span*>(k, nullptr), std::vector<const sched::Span*>(k, nullptr),
                   std::vector<bool>(k, false)};
  const auto keep_first = [](const sched::Span*& first, const sched::Span& span) {
    if (first == nullptr || span.start_ns < first->start_ns) first = &span;
  };
  for (const sched::Span& span : timeline.spans) {
    const auto s = static_cast<std::size_t>(span.action.stage);
    if (span.lane != sched::Lane::kCompute || span.action.stage < 0 || s >= k) continue;
    if (sched::is_input_backward(span.action.kind)) keep_first(facts.first_backward[s], span);
    if (span.action.kind == sched::ActionKind::kBackward || span.action.kind == sched::ActionKind::kBackwardWeight) {
      keep_first(facts.first_grads[s], span);  // the action that allocates the parameter gradients
    }
    if (span.action.kind == sched::ActionKind::kRecompute) facts.rematerializes[s] = true;
  }
  return facts;
}

class Walk {
 public:
  Walk(const sched::Schedule& schedule, const CostModel& costs, StageFacts facts, Events& events)
      : schedule_(schedule), costs_(costs), facts_(std::move(facts)), events_(events) {}

  // The parameter gradients appear at the end of the stage's first B or W, whichever comes first;
  // W drops what I kept for it (the gradients of the stage's layer outputs).
  void weight(const sched::Span& span, std::size_t s) {
    if (facts_.first_grads[s] == &span) add(s, Event{span.end_ns, false, 0, bytes(s, &StageCost::grad_bytes), 0, 0});
    add(s, Event{span.end_ns, false, -extra_bytes(s).split_held, 0, 0, 0});
  }

  // A forward's peak sits above the level its end leaves (its stash, or its output alone).
  void forward(const sched::Span& span, std::size_t s) {
    const bool no_graph = span.action.kind == sched::ActionKind::kForward && facts_.rematerializes[s];
    const StageExtraBytes bytes = extra_bytes(s);
    add(s, Event{span.end_ns, true, 0, 0, 0, no_graph ? bytes.forward_no_grad : bytes.forward});
  }

  void backward(const sched::Span& span, std::size_t s) {
    const std::size_t k = facts_.rematerializes.size();
    const bool is_first = facts_.first_backward[s] == &span;
    add(s, Event{span.start_ns, true, 0, 0, 0, is_first ? extra_bytes(s).first : extra_bytes(s).later});
    if (facts_.first_grads[s] == &span) add(s, Event{span.end_ns, false, 0, bytes(s, &StageCost::grad_bytes), 0, 0});
    if (span.action.kind == sched::ActionKind::kBackwardInput) add(s, Event{span.end_ns, false, extra_bytes(s).split_held, 0, 0, 0});
    // B(s,m) makes the gradient of s's input (held on s's device); it consumes the one of s+1.
    if (s > 0) add(s, Event{span.end_ns, false, 0, 0, bytes(s - 1, &StageCost::output_bytes), 0});
    if (s + 1 < k) add(s + 1, Event{span.end_ns, false, 0, 0, -bytes(s, &StageCost::output_bytes), 0});
    //   F(s,m) end: +kept (simulated) ... B(s+1,m) end: -kept (here) ... B(s,m) end: -kept (simulated, undone)
    if (s + 1 < k && facts_.rematerializes[s]) {
      add(s, Event{span.end_ns, false, bytes(s, &StageCost::input_bytes), 0, 0, 0});
    }
    if (s > 0 && facts_.rematerializes[s - 1]) {
      add(s - 1, Event{span.end_ns, false, -bytes(s - 1, &StageCost::input_bytes), 0, 0, 0});
    }
  }

 private:
  // On the device of stage `s`.
  void add(std::size_t s, Event event) {
    events_[static_cast<std::size_t>(schedule_.device_of(static_cast<int>(s)))].push_back(event);
  }
  sched::Bytes bytes(std::size_t s, sched::Bytes StageCost::*field) const {
    return s < costs_.stages.size() ? costs_.stages[s].*field : 0;
  }
  StageExtraBytes extra_bytes(std::size_t s) const {
    return s < costs_.stages.size() ? costs_.stages[s].extra : StageExtraBytes{};
  }

  const sched::Schedule& schedule_;
  const CostModel& costs_;
  StageFacts facts_;
  Events& events_;
};

// The highest of every level after all changes of a time stamp, and of every probe.
sched::Bytes peak_of(std::vector<Event>& list) {
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
  return peak;
}

}  // namespace

std::vector<Bytes> walk_peak_memory(const sched::Timeline& timeline, const sched::Schedule& schedule,
                                    const CostModel& costs) {
  const auto devices = static_cast<std::size_t>(schedule.num_devices());
  const auto k = static_cast<std::size_t>(schedule.num_stages);
  Events events = level_events(timeline, devices);
  Walk walk(schedule, costs, stage_facts(timeline, k), events);
  for (const sched::Span& span : timeline.spans) {
    const auto s = static_cast<std::size_t>(span.action.stage);
    if (span.lane != sched::Lane::kCompute || span.action.stage < 0 || s >= k) continue;
    const sched::ActionKind kind = span.action.kind;
    if (kind == sched::ActionKind::kForward || kind == sched::ActionKind::kRecompute) walk.forward(span, s);
    if (sched::is_input_backward(kind)) walk.backward(span, s);
    if (kind == sched::ActionKind::kBackwardWeight) walk.weight(span, s);
  }
  std::vector<sched::Bytes> peaks(devices, 0);
  for (std::size_t d = 0; d < devices; ++d) peaks[d] = peak_of(events[d]);
  return peaks;
}

std::vector<Bytes> executor_peak_bytes(const sched::Timeline& timeline, const sched::Schedule& schedule,
                                       const CostModel& costs) {
  std::vector<Bytes> peaks = walk_peak_memory(timeline, schedule, costs);
  for (std::size_t s = 0; s < schedule.placement.size() && s < costs.stages.size(); ++s) {
    const auto d = static_cast<std::size_t>(schedule.placement[s]);
    if (d < peaks.size()) peaks[d] += costs.stages[s].param_bytes + costs.stages[s].optimizer_bytes;
  }
  return peaks;
}

}  // namespace pipeworks::sim
