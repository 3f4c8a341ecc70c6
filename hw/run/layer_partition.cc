// `--partition balanced` for a run (see layer_partition.h).
#include "hw/run/layer_partition.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hw/model/model_config.h"
#include "sim/plan/partition_text.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::hw {

sched::Result<sim::Partition> run_partition(const sim::PartitionChoice& choice, int num_layers,
                                            const sim::ModelSpec* spec, const RunBalance& balance) {
  if (balance.schedule == nullptr) return sched::Error{"partition: no schedule given"};
  const int k = balance.schedule->num_stages;
  if (!choice.balanced()) return sim::fixed_partition(choice, num_layers, k);
  if (spec == nullptr) {
    return sched::Error{"partition 'balanced' needs a model spec with the layers' costs: pass --model-spec FILE "
                        "(written by `pipeworks profile`)"};
  }
  if (spec->num_layers() != num_layers) {
    return sched::Error{fmt::format("partition 'balanced': the model spec '{}' has {} layers, the model {}",
                                    spec->name, spec->num_layers(), num_layers)};
  }
  sim::PartitionContext context;  // stages at equal speed, no memory cap
  context.schedule = balance.kind;
  context.num_microbatches = balance.schedule->num_microbatches;
  context.microbatch_size = balance.microbatch_size;
  context.optimizer = balance.optimizer;
  context.recompute = balance.recompute;
  auto partition = sim::choose_partition(choice, *spec, k, context);
  if (!partition) return sched::Error{"partition 'balanced': " + partition.error().message};
  return partition;
}

sched::Result<sim::PartitionChoice> balanced_layer_counts(const RunConfig& config, const sim::ModelSpec& spec) {
  // A replica's micro-batch: --batch is the whole mini-batch over the data-parallel replicas.
  auto microbatch = sim::microbatch_size(config.batch_size, config.num_microbatches * config.data_parallel);
  if (!microbatch) return microbatch.error();
  if (auto status = check_model_config(config.model); !status) return status.error();
  auto schedule = build_schedule(config);
  if (!schedule) return schedule.error();
  RunBalance balance;
  balance.schedule = &*schedule;
  balance.kind = config.schedule;
  balance.microbatch_size = *microbatch;
  balance.optimizer = config.optimizer.kind;
  balance.recompute = config.recompute;
  sim::PartitionChoice balanced;
  balanced.rule = sim::PartitionChoice::Rule::kBalanced;
  balanced.text = "balanced";
  auto partition = run_partition(balanced, num_model_layers(config.model), &spec, balance);
  if (!partition) return partition.error();
  std::vector<int> counts;
  for (int s = 0; s < partition->num_stages(); ++s) counts.push_back(partition->end(s) - partition->begin(s));
  return sim::counts_choice(counts);
}

}  // namespace pipeworks::hw
