// `--partition` parsing (see layer_partition.h).
#include "hw/layer_partition.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace pipeworks::hw {

sched::Result<sim::Partition> parse_partition(std::string_view text, int num_layers, int num_stages) {
  if (text == "uniform") return sim::uniform_partition(num_layers, num_stages);
  std::vector<int> boundaries{0};
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    int count = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), count);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || count < 1) {
      return sched::Error{
          fmt::format("partition '{}': '{}' is not a positive layer count (expected uniform or N,N,...)", text, item),
          at};
    }
    boundaries.push_back(boundaries.back() + count);
    at = comma + 1;
  }
  if (static_cast<int>(boundaries.size()) != num_stages + 1) {
    return sched::Error{fmt::format("partition '{}': {} stages need {} layer counts, got {}", text, num_stages,
                                    num_stages, boundaries.size() - 1)};
  }
  auto partition = sim::explicit_partition(std::move(boundaries), num_layers);
  if (!partition) return sched::Error{fmt::format("partition '{}': {}", text, partition.error().message)};
  return partition;
}

sched::Result<sim::Partition> run_partition(std::string_view text, int num_layers, const sim::ModelSpec* spec,
                                            const RunBalance& balance) {
  if (balance.schedule == nullptr) return sched::Error{"partition: no schedule given"};
  const int k = balance.schedule->num_stages;
  if (text != "balanced") return parse_partition(text, num_layers, k);
  if (spec == nullptr) {
    return sched::Error{"partition 'balanced' needs a model spec with the layers' costs: pass --model-spec FILE "
                        "(written by `pipeworks profile`)"};
  }
  if (spec->num_layers() != num_layers) {
    return sched::Error{fmt::format("partition 'balanced': the model spec '{}' has {} layers, the model {}",
                                    spec->name, spec->num_layers(), num_layers)};
  }
  sim::BalanceOptions options;
  options.microbatch_size = balance.microbatch_size;
  options.optimizer = balance.optimizer;
  options.recompute = balance.recompute;
  const int m = balance.schedule->num_microbatches;
  for (int s = 0; s < k; ++s) options.in_flight.push_back(balance.gpipe ? m : std::min(m, k - s));
  auto partition = sim::balanced_partition(*spec, k, options);
  if (!partition) return sched::Error{"partition 'balanced': " + partition.error().message};
  return partition;
}

}  // namespace pipeworks::hw
