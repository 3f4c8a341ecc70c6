// Resolves `run --partition balanced` to layer counts (see run_partition.h).
#include "cli/run_partition.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hw/layer_partition.h"
#include "hw/model_config.h"
#include "sim/model_spec.h"

namespace pipeworks::cli {

sched::Result<std::string> resolve_run_partition(hw::RunConfig& config, const std::string& model_spec_path) {
  if (config.partition != "balanced") return config.partition;
  if (model_spec_path.empty()) {
    return sched::Error{"--partition balanced needs a model spec with the layers' costs: pass --model-spec FILE "
                        "(write one with `pipeworks profile`)"};
  }
  if (config.num_microbatches < 1 || config.batch_size % config.num_microbatches != 0) {
    return sched::Error{fmt::format("batch size {} must be a positive multiple of the {} micro-batches",
                                    config.batch_size, config.num_microbatches)};
  }
  if (auto status = hw::check_model_config(config.model); !status) return status.error();
  auto spec = sim::load_model_spec(model_spec_path);
  if (!spec) return spec.error();
  auto schedule = hw::build_schedule(config);
  if (!schedule) return schedule.error();
  hw::RunBalance balance;
  balance.schedule = &*schedule;
  balance.gpipe = config.schedule == sched::ScheduleKind::kGPipe;
  balance.microbatch_size = config.batch_size / config.num_microbatches;
  balance.optimizer = config.optimizer.kind;
  balance.recompute = config.recompute;
  auto partition = hw::run_partition("balanced", hw::num_model_layers(config.model), &*spec, balance);
  if (!partition) return partition.error();
  std::vector<int> counts;
  for (int s = 0; s < partition->num_stages(); ++s) counts.push_back(partition->end(s) - partition->begin(s));
  config.partition = fmt::format("{}", fmt::join(counts, ","));
  return config.partition;
}

}  // namespace pipeworks::cli
