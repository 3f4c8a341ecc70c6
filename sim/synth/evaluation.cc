// Lower, simulate, hold against the cap (evaluation.h).
#include "sim/synth/evaluation.h"

#include "sched/passes.h"

namespace pipeworks::sim {

sched::Result<Evaluation> evaluate(sched::Schedule compute_only, const CostModel& costs,
                                   const std::vector<Bytes>& caps_bytes) {
  auto lowered = sched::lower_comm(compute_only);
  if (!lowered) return lowered.error();
  auto result = simulate(*lowered, costs, SimOptions{false});
  if (!result) return result.error();
  Evaluation e{std::move(compute_only), std::move(result).value(), true};
  for (const DeviceResult& d : e.simulated.devices) {
    const auto device = static_cast<std::size_t>(d.device);
    if (device < caps_bytes.size() && d.memory.peak_bytes > caps_bytes[device]) e.fits = false;
  }
  return e;
}

bool better(const Evaluation& a, const Evaluation& b) {
  if (a.fits != b.fits) return a.fits;
  return a.step_ns() < b.step_ns();
}

}  // namespace pipeworks::sim
