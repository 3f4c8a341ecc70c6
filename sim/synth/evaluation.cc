// Lower, simulate, hold against the cap (evaluation.h).
#include "sim/synth/evaluation.h"

#include "sched/passes.h"
#include "sim/engine/executor_peak.h"

namespace pipeworks::sim {

sched::Result<Evaluation> evaluate(sched::Schedule compute_only, const CostModel& costs,
                                   const std::vector<Bytes>& caps_bytes) {
  auto lowered = sched::lower_comm(compute_only);
  if (!lowered) return lowered.error();
  auto result = simulate(*lowered, costs, SimOptions{true});
  if (!result) return result.error();
  std::vector<Bytes> peaks = executor_peak_bytes(result->timeline, *lowered, costs);
  result->timeline = sched::Timeline{};  // the peaks were all the search needed of it
  Evaluation e{std::move(compute_only), std::move(result).value(), std::move(peaks), true};
  for (std::size_t d = 0; d < e.peak_bytes.size() && d < caps_bytes.size(); ++d) {
    if (e.peak_bytes[d] > caps_bytes[d]) e.fits = false;
  }
  return e;
}

Bytes peak_on(const Evaluation& evaluation, int device) {
  const auto d = static_cast<std::size_t>(device);
  return device >= 0 && d < evaluation.peak_bytes.size() ? evaluation.peak_bytes[d] : 0;
}

bool better(const Evaluation& a, const Evaluation& b) {
  if (a.fits != b.fits) return a.fits;
  return a.step_ns() < b.step_ns();
}

}  // namespace pipeworks::sim
