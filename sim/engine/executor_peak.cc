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
  // Per stage and micro-batch, whether an R re-materializes it: its F output (kept as input_bytes
  // by the simulator until its B or W) is the next stage's input, freed when that stage's graph
  // drops it (R makes a new one; Walk::outputs_held_downstream).
  std::vector<std::vector<bool>> rematerialized;
  std::size_t stages() const { return first_backward.size(); }
  bool rematerializes(std::size_t s, int m) const {
    const auto i = static_cast<std::size_t>(m);
    return m >= 0 && i < rematerialized[s].size() && rematerialized[s][i];
  }
};

StageFacts stage_facts(const sched::Timeline& timeline, std::size_t k, int microbatches) {
  const auto m_count = static_cast<std::size_t>(std::max(0, microbatches));
  StageFacts facts{std::vector<const sched::Span*>(k, nullptr), std::vector<const sched::Span*>(k, nullptr),
                   std::vector<std::vector<bool>>(k, std::vector<bool>(m_count))};
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
    const auto m = static_cast<std::size_t>(span.action.microbatch);
    const bool in_range = span.action.microbatch >= 0 && m < m_count;
    if (span.action.kind == sched::ActionKind::kRecompute && in_range) facts.rematerialized[s][m] = true;
  }
  return facts;
}

// Per stage, the backward spans that free each micro-batch's graph (B, or W after I) and the
// passes that make input gradients (B or I), to find when a stage has surely consumed a gradient
// made after a given time.
class BackwardIndex {
 public:
  BackwardIndex(const sched::Timeline& timeline, std::size_t stages, int microbatches)
      : m_(static_cast<std::size_t>(std::max(0, microbatches))),
        frees_(stages * m_, nullptr),
        gradient_end_(stages * m_, -1),
        made_(stages) {
    for (const sched::Span& span : timeline.spans) {
      const auto s = static_cast<std::size_t>(span.action.stage);
      const auto m = static_cast<std::size_t>(span.action.microbatch);
      if (span.lane != sched::Lane::kCompute || span.action.stage < 0 || s >= stages || span.action.microbatch < 0 ||
          m >= m_) {
        continue;
      }
      const sched::ActionKind kind = span.action.kind;
      if (sched::is_input_backward(kind)) {
        gradient_end_[s * m_ + m] = span.end_ns;
        made_[s].push_back(&span);
      }
      if (kind == sched::ActionKind::kBackward || kind == sched::ActionKind::kBackwardWeight) frees_[s * m_ + m] = &span;
      step_end_ = std::max(step_end_, span.end_ns);
    }
    for (auto& list : made_) {
      std::sort(list.begin(), list.end(),
                [](const sched::Span* a, const sched::Span* b) { return a->start_ns < b->start_ns; });
    }
    // consumed_[s + 1][i]: the earliest end of stage s's pass on the gradient of made_[s + 1][i] or later.
    consumed_.resize(stages);
    for (std::size_t s = 0; s + 1 < stages; ++s) {
      std::vector<sched::Nanoseconds>& suffix = consumed_[s + 1];
      suffix.assign(made_[s + 1].size() + 1, step_end_);
      for (std::size_t i = made_[s + 1].size(); i-- > 0;) {
        const auto m = static_cast<std::size_t>(made_[s + 1][i]->action.microbatch);
        const sched::Nanoseconds used = gradient_end_[s * m_ + m];
        suffix[i] = used >= 0 ? std::min(suffix[i + 1], used) : suffix[i + 1];
      }
    }
  }

  std::size_t microbatches() const { return m_; }
  const sched::Span* frees(std::size_t s, std::size_t m) const { return frees_[s * m_ + m]; }

  // The end of stage s's first B or I on a gradient that stage s+1 made in a pass starting at or
  // after `after`; the step's end where there is none.
  sched::Nanoseconds consumed_after(std::size_t s, sched::Nanoseconds after) const {
    const std::vector<const sched::Span*>& made = made_[s + 1];
    const auto it = std::lower_bound(made.begin(), made.end(), after,
                                     [](const sched::Span* span, sched::Nanoseconds t) { return span->start_ns < t; });
    return consumed_[s + 1][static_cast<std::size_t>(it - made.begin())];
  }

 private:
  std::size_t m_;
  std::vector<const sched::Span*> frees_;        // [s * M + m]
  std::vector<sched::Nanoseconds> gradient_end_;  // [s * M + m]: end of B(s,m) or I(s,m), -1 if none
  std::vector<std::vector<const sched::Span*>> made_;  // per stage, its B and I by start
  std::vector<std::vector<sched::Nanoseconds>> consumed_;
  sched::Nanoseconds step_end_ = 0;
};

class Walk {
 public:
  Walk(const sched::Schedule& schedule, const CostModel& costs, StageFacts facts, Events& events)
      : schedule_(schedule), costs_(costs), facts_(std::move(facts)), events_(events) {}

  // The parameter gradients appear at the end of the stage's first B or W, whichever comes first;
  // W drops what I kept for it (the gradients of the stage's layer outputs). W computes the weight
  // half of a backward and is probed with a whole backward's temporaries, a bound (the first W,
  // which makes the gradients, with the first backward's). On the first stage W runs the whole
  // backward from the output's gradient (its I computes nothing) and consumes the one stage 1 made.
  void weight(const sched::Span& span, std::size_t s) {
    const bool makes_grads = facts_.first_grads[s] == &span;
    add(s, Event{span.start_ns, true, 0, 0, 0, makes_grads ? extra_bytes(s).first : extra_bytes(s).later});
    if (s == 0) consume_next_input_gradient(span, s);
    if (makes_grads) add(s, Event{span.end_ns, false, 0, bytes(s, &StageCost::grad_bytes), 0, 0});
    add(s, Event{span.end_ns, false, -extra_bytes(s).split_held, 0, 0, 0});
  }

  // A forward's peak sits above the level its end leaves (its stash, or its output alone).
  void forward(const sched::Span& span, std::size_t s) {
    const bool no_graph =
        span.action.kind == sched::ActionKind::kForward && facts_.rematerializes(s, span.action.microbatch);
    const StageExtraBytes bytes = extra_bytes(s);
    add(s, Event{span.end_ns, true, 0, 0, 0, no_graph ? bytes.forward_no_grad : bytes.forward});
  }

  void backward(const sched::Span& span, std::size_t s) {
    const bool is_first = facts_.first_backward[s] == &span;
    const bool input_pass = span.action.kind == sched::ActionKind::kBackwardInput;
    // The first stage's I computes nothing: it keeps the output's gradient for W (weight()).
    if (s > 0 || !input_pass) {
      add(s, Event{span.start_ns, true, 0, 0, 0, is_first ? extra_bytes(s).first : extra_bytes(s).later});
      consume_next_input_gradient(span, s);
    }
    if (facts_.first_grads[s] == &span) add(s, Event{span.end_ns, false, 0, bytes(s, &StageCost::grad_bytes), 0, 0});
    if (input_pass) add(s, Event{span.end_ns, false, extra_bytes(s).split_held, 0, 0, 0});
    // B(s,m) makes the gradient of s's input (held on s's device: the in-process hand-off passes
    // the tensor itself, so it stays counted where it was made).
    if (s > 0) add(s, Event{span.end_ns, false, 0, 0, bytes(s - 1, &StageCost::output_bytes), 0});
  }

  // Stage s's output is stage s+1's input, one tensor on s's device, and s+1's graph keeps it for
  // its weight gradients until B(s+1,m) or W(s+1,m) ends. With a split backward on s+1 on another
  // device nothing orders W(s+1,m) before s's later actions but a gradient made after it, so the
  // walk holds the output on s's device until s consumes the first gradient s+1 made after
  // W(s+1,m) ended (or to the step's end), whatever the run's real timing:
  //   d1:  ... I(1,m) ... W(1,m) I(1,m')              d0:  ... W(0,m) F(0,n) ... I(0,m')
  //   output(0,m) on d0: from F(0,m) (in the stash) to I(0,m')'s end, past W(0,m) freeing the stash
  // Under re-materialization the F output is not in the stash R rebuilds (the simulator keeps it,
  // as input_bytes, from F(s,m) to B(s,m) or W(s,m)); it goes when s+1 drops it, earlier or later:
  //   F(s,m) end: +kept (simulated) ... s+1 drops it: -kept (here) ... B(s,m) end: -kept (simulated, undone)
  void outputs_held_downstream(const sched::Timeline& timeline) {
    const BackwardIndex index(timeline, facts_.stages(), schedule_.num_microbatches);
    for (std::size_t s = 0; s + 1 < facts_.stages(); ++s) {
      for (std::size_t m = 0; m < index.microbatches(); ++m) {
        const sched::Span* own = index.frees(s, m);
        const sched::Span* next = index.frees(s + 1, m);
        if (own == nullptr || next == nullptr) continue;
        const bool rematerialized = facts_.rematerializes(s, static_cast<int>(m));
        const bool unordered = next->action.kind == sched::ActionKind::kBackwardWeight &&
                               schedule_.device_of(static_cast<int>(s)) != schedule_.device_of(static_cast<int>(s + 1));
        const sched::Nanoseconds dropped = unordered ? index.consumed_after(s, next->end_ns) : next->end_ns;
        if (!rematerialized && dropped <= own->end_ns) continue;
        const sched::Bytes kept = bytes(s, rematerialized ? &StageCost::input_bytes : &StageCost::output_bytes);
        add(s, Event{own->end_ns, false, kept, 0, 0, 0});
        add(s, Event{dropped, false, -kept, 0, 0, 0});
      }
    }
  }

 private:
  // The pass that runs from the gradient of (s, m)'s output frees it, on the device of s+1.
  void consume_next_input_gradient(const sched::Span& span, std::size_t s) {
    if (s + 1 < facts_.stages()) {
      add(s + 1, Event{span.end_ns, false, 0, 0, -bytes(s, &StageCost::output_bytes), 0});
    }
  }
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
  Walk walk(schedule, costs, stage_facts(timeline, k, schedule.num_microbatches), events);
  for (const sched::Span& span : timeline.spans) {
    const auto s = static_cast<std::size_t>(span.action.stage);
    if (span.lane != sched::Lane::kCompute || span.action.stage < 0 || s >= k) continue;
    const sched::ActionKind kind = span.action.kind;
    if (kind == sched::ActionKind::kForward || kind == sched::ActionKind::kRecompute) walk.forward(span, s);
    if (sched::is_input_backward(kind)) walk.backward(span, s);
    if (kind == sched::ActionKind::kBackwardWeight) walk.weight(span, s);
  }
  walk.outputs_held_downstream(timeline);
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
