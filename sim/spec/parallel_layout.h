// How a training job uses its devices, as one value: `tp` tensor-parallel ranks, `pp` pipeline
// ranks each holding `virtual_stages` stages (K = pp x v stages), `dp` data-parallel replicas
// of that pipeline, and the ZeRO sharding of each stage's training state over its DP group.
// Ranks are numbered as Megatron-LM numbers them (megatron/core/parallel_state.py, order
// "tp-cp-ep-dp-pp": tensor-parallel ranks adjacent, pipeline ranks farthest apart), or with
// pipeline ranks inside data-parallel ones (its --use-tp-pp-dp-mapping, order "tp-pp-dp"):
//
//   tp 2, pp 4, dp 2 (16 devices, order tp-dp-pp), Megatron's own example:
//     rank = tp_rank + tp (dp_rank + dp pp_rank)
//     data-parallel groups  [0,2] [1,3] [4,6] [5,7] [8,10] [9,11] [12,14] [13,15]
//     pipeline groups       [0,4,8,12] [1,5,9,13] [2,6,10,14] [3,7,11,15]
//
// Device d of a cluster is rank d, so a node of g devices holds ranks [n g, (n+1) g).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/result.h"
#include "sim/spec/zero_sharding.h"

namespace pipeworks::sim {

enum class RankOrder : std::uint8_t {
  kTpDpPp,  // Megatron-LM's default: dp varies faster than pp
  kTpPpDp,  // pp varies faster than dp (Megatron's --use-tp-pp-dp-mapping)
};
std::string_view rank_order_name(RankOrder order);  // "tp-dp-pp", "tp-pp-dp"
sched::Result<RankOrder> parse_rank_order(std::string_view text);

struct ParallelLayout {
  int tp = 1;
  int pp = 1;
  int virtual_stages = 1;
  int dp = 1;
  ZeroStage zero = ZeroStage::kNone;
  RankOrder order = RankOrder::kTpDpPp;

  int devices() const { return tp * pp * dp; }
  int stages() const { return pp * virtual_stages; }
  friend bool operator==(const ParallelLayout&, const ParallelLayout&) = default;
};

// `layout` with a schedule's devices as its pipeline ranks and its stages a device as virtual
// stages (at least 1): the layout a schedule of `num_stages` on `num_devices` runs.
ParallelLayout with_pipeline(ParallelLayout layout, int num_devices, int num_stages);

// Every count >= 1 and the product within `max_devices`; with a cluster (num_devices > 0), the
// layout uses at most its devices and a tensor-parallel group stays inside one node.
sched::Status check_layout(const ParallelLayout& layout, int num_devices = 0, int devices_per_node = 1);

// A sharding asked for by name (`--zero`) needs replicas to shard over: an error with dp 1.
// (Searches that try dp 1 among others leave a sharding out there instead.)
sched::Status check_zero_has_replicas(ZeroStage zero, int dp);

// A rank's place in each group.
struct RankCoord {
  int tp = 0;
  int dp = 0;
  int pp = 0;
  friend bool operator==(const RankCoord&, const RankCoord&) = default;
};
int rank_of(const ParallelLayout& layout, RankCoord coord);
RankCoord coord_of(const ParallelLayout& layout, int rank);

// The ranks of one data-parallel group (the replicas of pipeline rank `pp`, tensor rank `tp`), by
// dp rank; of one pipeline (replica `dp`, tensor rank `tp`), by pp rank.
std::vector<int> dp_group(const ParallelLayout& layout, int pp, int tp = 0);
std::vector<int> pp_group(const ParallelLayout& layout, int dp, int tp = 0);

// How a group of ranks (device ids) lies on nodes of `devices_per_node`: the nodes it touches and
// how many of its ranks each holds, when every node holds the same number (`even`); otherwise
// ranks_per_node is the largest count.
struct GroupSpan {
  int ranks_per_node = 1;
  int nodes = 1;
  bool even = true;
  friend bool operator==(const GroupSpan&, const GroupSpan&) = default;
};
GroupSpan group_span(const std::vector<int>& ranks, int devices_per_node);

// "pp 4 x dp 8 (32 devices, 8 stages: 2 a pipeline rank; ZeRO-1; ranks tp-dp-pp)", the words every
// report headline uses; tp, v, ZeRO and a non-default order only when they are not 1 / none.
std::string layout_text(const ParallelLayout& layout);

}  // namespace pipeworks::sim
