// The partition `simulate` uses (see simulate_partition.h).
#include "cli/simulate_partition.h"

#include <fmt/format.h>

#include "sched/generators.h"

namespace pipeworks::cli {

sched::Result<sim::Partition> simulate_partition(const std::string& text, const sim::ModelSpec& model,
                                                 const sim::ClusterSpec& cluster, const sched::Schedule& schedule,
                                                 sim::PartitionContext context, const std::vector<int>& devices,
                                                 bool& usage_error) {
  usage_error = true;
  const int stages = schedule.num_stages;
  auto choice = sim::parse_partition_choice(text);
  if (!choice) return sched::Error{"--" + choice.error().message};
  if (choice->rule == sim::PartitionChoice::Rule::kCounts && static_cast<int>(choice->counts.size()) != stages) {
    return sched::Error{fmt::format("--partition names {} stages but the schedule has {}", choice->counts.size(), stages)};
  }
  usage_error = false;
  for (const int rank : schedule.placement) {
    const sim::DeviceSpec& device = cluster.devices[static_cast<std::size_t>(devices[static_cast<std::size_t>(rank)])];
    context.stage_speed.push_back(device.relative_speed);
    context.capacity_bytes.push_back(device.memory_bytes);
  }
  context.in_flight = sched::peak_in_flight(schedule);
  auto partition = sim::choose_partition(*choice, model, stages, context);
  if (!partition) return sched::Error{choice->balanced() ? partition.error().message : "--" + partition.error().message};
  return partition;
}

}  // namespace pipeworks::cli
