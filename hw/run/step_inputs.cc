// A step's seed, batch, split and placement (see step_inputs.h).
#include "hw/run/step_inputs.h"

namespace pipeworks::hw {

sched::Result<StepInputs> step_inputs(const RunConfig& config, const ComputeDevices& where,
                                      const sched::Schedule& schedule, int step) {
  StepInputs in;
  in.seed = step_seed(config.model, step);
  auto split = split_batch(make_batch(config.model, config.batch_size, in.seed), config.num_microbatches);
  if (!split) return split.error();
  in.microbatches = std::move(split).value();
  in.placed = place_batch(where, in.microbatches, schedule);
  return in;
}

}  // namespace pipeworks::hw
