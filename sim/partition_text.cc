// `--partition` text (see partition_text.h).
#include "sim/partition_text.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace pipeworks::sim {

sched::Result<std::vector<int>> parse_layer_counts(std::string_view text) {
  std::vector<int> counts;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    int count = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), count);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || count < 1) {
      return sched::Error{fmt::format("partition '{}': '{}' is not a positive layer count (expected uniform, "
                                      "balanced or per-stage layer counts such as 7,6,6,7)",
                                      text, item),
                          at};
    }
    counts.push_back(count);
    at = comma + 1;
  }
  return counts;
}

sched::Result<Partition> parse_partition(std::string_view text, int num_layers, int num_stages) {
  if (text == "uniform") return uniform_partition(num_layers, num_stages);
  auto counts = parse_layer_counts(text);
  if (!counts) return counts.error();
  if (static_cast<int>(counts->size()) != num_stages) {
    return sched::Error{fmt::format("partition '{}' names {} stages, the run has {}", text, counts->size(), num_stages)};
  }
  std::vector<int> boundaries{0};
  std::int64_t total = 0;  // stops at the first count past num_layers, so it cannot overflow
  for (const int count : *counts) {
    total += count;
    if (total > num_layers) {
      return sched::Error{fmt::format("partition '{}': the layer counts add up to more than {} (the model has {} layers)",
                                      text, num_layers, num_layers)};
    }
    boundaries.push_back(static_cast<int>(total));
  }
  auto partition = explicit_partition(std::move(boundaries), num_layers);
  if (!partition) {
    return sched::Error{fmt::format("partition '{}': {} (the model has {} layers)", text, partition.error().message,
                                    num_layers)};
  }
  return partition;
}

sched::Result<Partition> choose_partition(std::string_view text, const ModelSpec& model, int num_stages,
                                          const PartitionContext& context) {
  if (text != "balanced") return parse_partition(text, model.num_layers(), num_stages);
  BalanceOptions options;
  options.microbatch_size = context.microbatch_size;
  options.optimizer = context.optimizer;
  options.recompute = context.recompute;
  options.stage_speed = context.stage_speed;
  options.capacity_bytes = context.capacity_bytes;
  options.in_flight = context.in_flight.empty()
                          ? sched::in_flight_microbatches(context.schedule, num_stages, context.num_microbatches)
                          : context.in_flight;
  return balanced_partition(model, num_stages, options);
}

}  // namespace pipeworks::sim
