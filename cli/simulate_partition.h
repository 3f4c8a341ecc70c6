// The partition `pipeworks simulate` uses: --partition's "uniform", "balanced" (over the speeds
// and memory of the devices the schedule's stages run on, with its micro-batches in flight) or
// layer counts "7,6,6,7".
#pragma once

#include <string>
#include <vector>

#include "sched/result.h"
#include "sched/schedule.h"
#include "sim/plan/partition.h"
#include "sim/plan/partition_text.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::cli {

// `devices[r]` is the cluster device of the schedule's device r. A malformed text or a stage
// count other than the schedule's sets `usage_error` (exit 2); a balanced partition that does not
// exist does not (exit 1).
sched::Result<sim::Partition> simulate_partition(const std::string& text, const sim::ModelSpec& model,
                                                 const sim::ClusterSpec& cluster, const sched::Schedule& schedule,
                                                 sim::PartitionContext context, const std::vector<int>& devices,
                                                 bool& usage_error);

}  // namespace pipeworks::cli
