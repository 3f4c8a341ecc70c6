// `--partition` text (see partition_text.h).
#include "sim/plan/partition_text.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/limits.h"

namespace pipeworks::sim {

namespace {

// A whole number >= 1 filling all of `text`.
std::optional<int> positive_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

}  // namespace

sched::Result<std::vector<int>> parse_layer_counts(std::string_view text) {
  std::vector<int> counts;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    const std::size_t star = item.find('*');
    const auto count = positive_int(item.substr(0, star));
    const auto repeat = star == std::string_view::npos ? std::optional<int>(1) : positive_int(item.substr(star + 1));
    if (!count || !repeat) {
      return sched::Error{fmt::format("partition '{}': '{}' is not a positive layer count N or a run N*R (expected "
                                      "uniform, balanced or per-stage layer counts such as 7,6,6,7 or 7,6*2,7)",
                                      text, item),
                          at};
    }
    if (static_cast<std::int64_t>(counts.size()) + *repeat > sched::kMaxStages) {
      return sched::Error{fmt::format("partition '{}' names more than {} stages", text, sched::kMaxStages), at};
    }
    counts.insert(counts.end(), static_cast<std::size_t>(*repeat), *count);
    at = comma + 1;
  }
  return counts;
}

std::string layer_counts_text(const Partition& partition, bool compact) {
  std::string text;
  const int stages = partition.num_stages();
  for (int s = 0; s < stages;) {
    const int layers = partition.end(s) - partition.begin(s);
    int run = 1;
    while (compact && s + run < stages && partition.end(s + run) - partition.begin(s + run) == layers) ++run;
    if (!text.empty()) text += ',';
    text += run > 1 ? fmt::format("{}*{}", layers, run) : fmt::to_string(layers);
    s += run;
  }
  return text;
}

sched::Result<PartitionChoice> parse_partition_choice(std::string_view text) {
  PartitionChoice choice;
  choice.text = std::string(text);
  if (text == "uniform") return choice;
  if (text == "balanced") {
    choice.rule = PartitionChoice::Rule::kBalanced;
    return choice;
  }
  auto counts = parse_layer_counts(text);
  if (!counts) return counts.error();
  choice.rule = PartitionChoice::Rule::kCounts;
  choice.counts = std::move(counts).value();
  return choice;
}

PartitionChoice counts_choice(const std::vector<int>& counts) {
  PartitionChoice choice;
  choice.rule = PartitionChoice::Rule::kCounts;
  choice.counts = counts;
  choice.text = fmt::format("{}", fmt::join(counts, ","));
  return choice;
}

sched::Result<Partition> fixed_partition(const PartitionChoice& choice, int num_layers, int num_stages) {
  using Rule = PartitionChoice::Rule;
  if (choice.rule == Rule::kUniform) return uniform_partition(num_layers, num_stages);
  if (choice.rule == Rule::kBalanced) {
    return sched::Error{"partition 'balanced' needs the layers' costs (a model spec) to balance them"};
  }
  const std::string& text = choice.text;
  if (static_cast<int>(choice.counts.size()) != num_stages) {
    return sched::Error{
        fmt::format("partition '{}' names {} stages, the run has {}", text, choice.counts.size(), num_stages)};
  }
  std::vector<int> boundaries{0};
  std::int64_t total = 0;  // stops at the first count past num_layers, so it cannot overflow
  for (const int count : choice.counts) {
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

sched::Result<Partition> parse_partition(std::string_view text, int num_layers, int num_stages) {
  auto choice = parse_partition_choice(text);
  if (!choice) return choice.error();
  return fixed_partition(*choice, num_layers, num_stages);
}

sched::Result<Partition> choose_partition(const PartitionChoice& choice, const ModelSpec& model, int num_stages,
                                          const PartitionContext& context) {
  if (!choice.balanced()) return fixed_partition(choice, model.num_layers(), num_stages);
  BalanceOptions options;
  options.microbatch_size = context.microbatch_size;
  options.optimizer = context.optimizer;
  options.recompute = context.recompute;
  options.stage_speed = context.stage_speed;
  options.capacity_bytes = context.capacity_bytes;
  options.zero = context.zero;
  options.dp = context.dp;
  options.in_flight = context.in_flight.empty()
                          ? sched::in_flight_microbatches(context.schedule, num_stages, context.num_microbatches)
                          : context.in_flight;
  return balanced_partition(model, num_stages, options);
}

}  // namespace pipeworks::sim
