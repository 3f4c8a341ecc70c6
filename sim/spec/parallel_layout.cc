// Rank numbering, groups and checks of a parallel layout (see parallel_layout.h).
#include "sim/spec/parallel_layout.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "sched/limits.h"

namespace pipeworks::sim {

std::string_view rank_order_name(RankOrder order) {
  return order == RankOrder::kTpPpDp ? "tp-pp-dp" : "tp-dp-pp";
}

sched::Result<RankOrder> parse_rank_order(std::string_view text) {
  for (const RankOrder order : {RankOrder::kTpDpPp, RankOrder::kTpPpDp}) {
    if (rank_order_name(order) == text) return order;
  }
  return sched::Error{fmt::format("unknown rank order '{}' (expected tp-dp-pp or tp-pp-dp)", text)};
}

ParallelLayout with_pipeline(ParallelLayout layout, int num_devices, int num_stages) {
  layout.pp = num_devices;
  layout.virtual_stages = std::max(1, num_stages / std::max(1, num_devices));
  return layout;
}

sched::Status check_layout(const ParallelLayout& l, int num_devices, int devices_per_node) {
  for (const auto& [name, value] : {std::pair{"tp", l.tp}, {"pp", l.pp}, {"virtual stages", l.virtual_stages}, {"dp", l.dp}}) {
    if (value < 1 || value > sched::kMaxStages) {
      return sched::Error{fmt::format("layout: {} is {} (1 to {})", name, value, sched::kMaxStages)};
    }
  }
  const std::int64_t devices = std::int64_t{l.tp} * l.pp * l.dp;
  const std::int64_t stages = std::int64_t{l.pp} * l.virtual_stages;
  if (devices > sched::kMaxStages || stages > sched::kMaxStages) {
    return sched::Error{fmt::format("layout: {} devices and {} stages (at most {} each)", devices, stages,
                                    sched::kMaxStages)};
  }
  if (num_devices > 0 && devices > num_devices) {
    return sched::Error{fmt::format("layout: tp {} x pp {} x dp {} needs {} devices, the cluster has {}", l.tp, l.pp,
                                    l.dp, devices, num_devices)};
  }
  if (num_devices > 0 && l.tp > 1 && devices_per_node % l.tp != 0) {
    return sched::Error{fmt::format("layout: a tensor-parallel group of {} does not fit evenly in nodes of {} devices",
                                    l.tp, devices_per_node)};
  }
  return sched::Ok{};
}

sched::Status check_zero_has_replicas(ZeroStage zero, int dp) {
  if (zero == ZeroStage::kNone || dp > 1) return sched::Ok{};
  return sched::Error{fmt::format("--zero {} shards over data-parallel replicas, but --dp is 1", zero_stage_name(zero))};
}

int rank_of(const ParallelLayout& l, RankCoord c) {
  if (l.order == RankOrder::kTpPpDp) return c.tp + l.tp * (c.pp + l.pp * c.dp);
  return c.tp + l.tp * (c.dp + l.dp * c.pp);
}

RankCoord coord_of(const ParallelLayout& l, int rank) {
  RankCoord c;
  c.tp = rank % l.tp;
  const int rest = rank / l.tp;
  if (l.order == RankOrder::kTpPpDp) {
    c.pp = rest % l.pp;
    c.dp = rest / l.pp;
  } else {
    c.dp = rest % l.dp;
    c.pp = rest / l.dp;
  }
  return c;
}

std::vector<int> dp_group(const ParallelLayout& l, int pp, int tp) {
  std::vector<int> ranks;
  for (int d = 0; d < l.dp; ++d) ranks.push_back(rank_of(l, {tp, d, pp}));
  return ranks;
}

std::vector<int> pp_group(const ParallelLayout& l, int dp, int tp) {
  std::vector<int> ranks;
  for (int p = 0; p < l.pp; ++p) ranks.push_back(rank_of(l, {tp, dp, p}));
  return ranks;
}

GroupSpan group_span(const std::vector<int>& ranks, int devices_per_node) {
  std::map<int, int> per_node;
  for (const int r : ranks) ++per_node[r / std::max(1, devices_per_node)];
  GroupSpan span;
  span.nodes = std::max<int>(1, static_cast<int>(per_node.size()));
  span.ranks_per_node = 0;
  for (const auto& [node, count] : per_node) span.ranks_per_node = std::max(span.ranks_per_node, count);
  span.ranks_per_node = std::max(1, span.ranks_per_node);
  span.even = std::all_of(per_node.begin(), per_node.end(),
                          [&](const auto& entry) { return entry.second == span.ranks_per_node; });
  return span;
}

std::string layout_text(const ParallelLayout& l) {
  std::string text = l.tp > 1 ? fmt::format("tp {} x pp {} x dp {}", l.tp, l.pp, l.dp) : fmt::format("pp {} x dp {}", l.pp, l.dp);
  text += fmt::format(" ({} device{}, {} stage{}", l.devices(), l.devices() == 1 ? "" : "s", l.stages(),
                      l.stages() == 1 ? "" : "s");
  if (l.virtual_stages > 1) text += fmt::format(": {} a pipeline rank", l.virtual_stages);
  if (l.zero != ZeroStage::kNone) text += fmt::format("; ZeRO-{}", zero_stage_name(l.zero));
  if (l.order != RankOrder::kTpDpPp) text += fmt::format("; ranks {}", rank_order_name(l.order));
  return text + ")";
}

}  // namespace pipeworks::sim
