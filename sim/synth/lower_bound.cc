// The step's lower bound: earliest start plus total work, stage by stage and device by device
// (lower_bound.h).
#include "sim/synth/lower_bound.h"

#include <algorithm>
#include <limits>

#include "sim/synth/device_memory.h"

namespace pipeworks::sim {
namespace {

// A re-materialized micro-batch's F (no graph), where the times give one.
Nanoseconds no_grad_forward_ns(const SynthStageTimes& t) {
  return t.forward_no_grad_ns > 0 ? t.forward_no_grad_ns : t.forward_ns;
}

// One micro-batch's F on a stage at the least: the stage's first F of the step, another one, or
// one without the graph (its micro-batch re-materialized): what its neighbour waits for.
Nanoseconds least_forward_ns(const SynthStageTimes& t) {
  return std::min({t.first_forward_ns, t.forward_ns, no_grad_forward_ns(t)});
}

// One micro-batch's forward work on its stage at the least: an F, or an F without the graph and
// its R (both before that micro-batch's backward).
Nanoseconds forward_work_ns(const SynthStageTimes& t) {
  return std::min(t.forward_ns, no_grad_forward_ns(t) + t.recompute_ns);
}

// The last micro-batch's forward on a stage of the chain at the least: an F with the graph, or one
// without it and its R before the backward on the way back.
Nanoseconds path_forward_ns(const SynthStageTimes& t) {
  return std::min(std::min(t.first_forward_ns, t.forward_ns), no_grad_forward_ns(t) + t.recompute_ns);
}

// A stage's M forwards' work at the least (the first F of the step at its own cost or less).
Nanoseconds forwards_ns(const SynthStageTimes& t, int num_microbatches) {
  const Nanoseconds each = forward_work_ns(t);
  return std::min(t.first_forward_ns, each) + (static_cast<Nanoseconds>(num_microbatches) - 1) * each;
}

// One micro-batch's whole B at the least (first or not).
Nanoseconds least_whole_backward_ns(const SynthStageTimes& t) { return std::min(t.first_backward_ns, t.backward_ns); }

// One micro-batch's backward on the chain back to stage 0 at the least: its I, or its whole B
// (any stage may run either; the list rule runs B only where W costs nothing).
Nanoseconds least_backward_ns(const SynthStageTimes& t) { return std::min(t.input_grad_ns, least_whole_backward_ns(t)); }

// One micro-batch's whole backward work at the least: I + W (two actions), or B (one).
Nanoseconds least_backward_work_ns(const SynthStageTimes& t) {
  return std::min(t.input_grad_ns + t.weight_grad_ns, least_whole_backward_ns(t));
}

// One stage's own work for M micro-batches, one action at a time: M F's (one of them the first)
// and M backwards, k of them B's (one the first B) and M-k of them I + W; linear in k but for
// the first B, so least at k = 0, 1 or M.
Nanoseconds stage_work_ns(const SynthStageTimes& t, int num_microbatches) {
  const auto m = static_cast<Nanoseconds>(num_microbatches);
  const Nanoseconds split = t.input_grad_ns + t.weight_grad_ns;
  const Nanoseconds backwards =
      std::min({m * split, t.first_backward_ns + (m - 1) * split, t.first_backward_ns + (m - 1) * t.backward_ns});
  return forwards_ns(t, num_microbatches) + backwards;
}

// The last micro-batch's chain through every stage and back to device 0's W and tail.
Nanoseconds chain_ns(const std::vector<SynthStageTimes>& times, int num_microbatches) {
  const auto m = static_cast<Nanoseconds>(num_microbatches);
  const SynthStageTimes& first = times.front();
  Nanoseconds t = std::min(first.first_forward_ns, no_grad_forward_ns(first)) +
                  (m - 1) * std::min(first.forward_ns, no_grad_forward_ns(first));
  for (std::size_t s = 1; s < times.size(); ++s) t += times[s - 1].handoff_forward_ns + path_forward_ns(times[s]);
  for (std::size_t s = times.size(); s-- > 1;) t += least_backward_ns(times[s]) + times[s - 1].handoff_backward_ns;
  return t + least_backward_work_ns(times.front()) + times.front().tail_ns;
}

// From stage s's backward of a micro-batch to the end of device 0's: the hand-offs and the
// backwards (I or B) of the stages between, then stage 0's I + W (or B) and its tail.
Nanoseconds way_back_ns(const std::vector<SynthStageTimes>& times, std::size_t s) {
  Nanoseconds t = times[s - 1].handoff_backward_ns;
  for (std::size_t j = s - 1; j >= 1; --j) t += least_backward_ns(times[j]) + times[j - 1].handoff_backward_ns;
  return t + least_backward_work_ns(times.front()) + times.front().tail_ns;
}

// Device s >= 1 runs k of its M backwards as a whole B and M - k as I + W, for the k the schedule
// picks. Its last backward on the chain (I or B) follows its M F's, its k B's and M - k I's, and
// that micro-batch's gradient then goes back to device 0 (its W's may wait); and all its work
// ends before its tail. Both hold for the schedule's k, so the bound is the least over k of the
// later of the two; `drain` says whether the way back decides it there.
LowerBound device_bound(const std::vector<SynthStageTimes>& times, std::size_t s, Nanoseconds start, int num_microbatches) {
  const auto m = static_cast<Nanoseconds>(num_microbatches);
  const SynthStageTimes& t = times[s];
  const Nanoseconds forwards = forwards_ns(t, num_microbatches);
  const Nanoseconds back = way_back_ns(times, s);
  LowerBound best{std::numeric_limits<Nanoseconds>::max(), static_cast<int>(s)};
  for (Nanoseconds k = 0; k <= m; ++k) {
    const Nanoseconds chain = k * least_whole_backward_ns(t) + (m - k) * t.input_grad_ns + back;
    const Nanoseconds work = (k > 0 ? t.first_backward_ns + (k - 1) * t.backward_ns : 0) +
                             (m - k) * (t.input_grad_ns + t.weight_grad_ns) + t.tail_ns;
    const Nanoseconds end = start + forwards + std::max(chain, work);
    if (end < best.step_ns) best = LowerBound{end, static_cast<int>(s), false, chain > work};
  }
  return best;
}

// Each stage's earliest start: micro-batch 0's least forwards and hand-offs before it.
std::vector<Nanoseconds> stage_starts(const std::vector<SynthStageTimes>& times) {
  std::vector<Nanoseconds> starts;
  Nanoseconds start = 0;
  for (const SynthStageTimes& t : times) {
    starts.push_back(start);
    start += least_forward_ns(t) + t.handoff_forward_ns;
  }
  return starts;
}

// A device holding `stages` (two or more, in stage order) starts no sooner than its lowest
// stage, then runs every stage's work one action at a time and its tail (their optimizer steps);
// and the last backward (I or B) of its lowest stage a follows every F and every backward on
// the chain of the device's stages (each of a later stage's precedes a's of the same
// micro-batch), then goes back to device 0 (a > 0).
LowerBound shared_device_bound(const std::vector<SynthStageTimes>& times, const std::vector<int>& stages,
                               const std::vector<Nanoseconds>& starts, int num_microbatches, int device) {
  const auto m = static_cast<Nanoseconds>(num_microbatches);
  const auto lowest = static_cast<std::size_t>(stages.front());
  Nanoseconds work = 0, tail = 0, chain = 0;
  for (const int stage : stages) {
    const SynthStageTimes& t = times[static_cast<std::size_t>(stage)];
    work += stage_work_ns(t, num_microbatches);
    tail += t.tail_ns;
    chain += forwards_ns(t, num_microbatches) + m * least_backward_ns(t);
  }
  const Nanoseconds start = starts[lowest];
  const Nanoseconds drain = lowest > 0 ? start + chain + way_back_ns(times, lowest) : 0;
  if (drain > start + work + tail) return LowerBound{drain, device, false, true};
  return LowerBound{start + work + tail, device};
}

}  // namespace

LowerBound step_lower_bound(const std::vector<SynthStageTimes>& times, int num_microbatches,
                            const std::vector<int>& placement) {
  LowerBound bound = step_lower_bound(times, num_microbatches);
  if (times.empty()) return bound;
  bound.device = placement.at(static_cast<std::size_t>(bound.device));
  const std::vector<Nanoseconds> starts = stage_starts(times);
  const int devices = *std::max_element(placement.begin(), placement.end()) + 1;
  for (int d = 0; d < devices; ++d) {
    const std::vector<int> stages = stages_on_device(placement, d);
    if (stages.size() < 2) continue;  // its stage's own terms are the device's
    const LowerBound device = shared_device_bound(times, stages, starts, num_microbatches, d);
    if (device.step_ns > bound.step_ns) bound = device;
  }
  return bound;
}

LowerBound step_lower_bound(const std::vector<SynthStageTimes>& times, int num_microbatches) {
  LowerBound bound;
  Nanoseconds start = 0;
  for (std::size_t s = 0; s < times.size(); ++s) {
    const LowerBound device = s > 0 ? device_bound(times, s, start, num_microbatches)
                                    : LowerBound{start + stage_work_ns(times[s], num_microbatches) + times[s].tail_ns, 0};
    if (device.step_ns > bound.step_ns) bound = device;
    start += least_forward_ns(times[s]) + times[s].handoff_forward_ns;
  }
  if (times.empty()) return bound;
  if (const Nanoseconds chain = chain_ns(times, num_microbatches); chain > bound.step_ns) {
    bound = LowerBound{chain, 0, true};
  }
  return bound;
}

double gap_to_bound(Nanoseconds step_ns, Nanoseconds bound_ns) {
  if (bound_ns <= 0) return 0;
  return static_cast<double>(step_ns - bound_ns) / static_cast<double>(bound_ns);
}

}  // namespace pipeworks::sim
