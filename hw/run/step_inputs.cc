// A step's seed, batch, split and placement (see step_inputs.h).
#include "hw/run/step_inputs.h"

#include <fmt/format.h>

namespace pipeworks::hw {

sched::Result<StepInputs> step_inputs(const RunConfig& config, const ComputeDevices& where,
                                      const sched::Schedule& schedule, int step, int replica) {
  StepInputs in;
  in.seed = step_seed(config.model, step);
  const int m = config.num_microbatches;
  auto split = split_batch(make_batch(config.model, config.batch_size, in.seed), m * config.data_parallel);
  if (!split) return split.error();
  in.microbatches = std::move(split).value();
  if (replica < 0 || replica >= config.data_parallel) {
    return sched::Error{fmt::format("replica {} of {}", replica, config.data_parallel)};
  }
  const auto first = static_cast<std::ptrdiff_t>(replica) * m;
  MicroBatches mine;
  mine.inputs.assign(in.microbatches.inputs.begin() + first, in.microbatches.inputs.begin() + first + m);
  mine.targets.assign(in.microbatches.targets.begin() + first, in.microbatches.targets.begin() + first + m);
  in.placed = place_batch(where, mine, schedule);
  return in;
}

}  // namespace pipeworks::hw
