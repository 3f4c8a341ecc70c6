// A rank's place in a replicated pipeline (see rank_layout.h).
#include "hw/dist/rank_layout.h"

#include <fmt/format.h>

namespace pipeworks::hw {

sched::Result<RankPlace> rank_place(const RunConfig& config, const sched::Schedule& schedule, int rank,
                                    int world_size) {
  RankPlace place;
  place.layout = run_layout(config, schedule);
  const int ranks = place.layout.devices();
  if (world_size != ranks) {
    if (place.layout.tp > 1) {
      return sched::Error{fmt::format("the layout is tp {} x pp {} x dp {} = {} ranks but WORLD_SIZE is {} (one "
                                      "process per tensor-parallel rank of each device of each replica)",
                                      place.layout.tp, schedule.num_devices(), place.layout.dp, ranks, world_size)};
    }
    if (place.layout.dp == 1) {
      return sched::Error{fmt::format("the schedule has {} devices but WORLD_SIZE is {} (one process per device)",
                                      schedule.num_devices(), world_size)};
    }
    return sched::Error{fmt::format("the schedule has {} devices x {} replicas = {} ranks but WORLD_SIZE is {} (one "
                                    "process per device of each replica)",
                                    schedule.num_devices(), place.layout.dp, ranks, world_size)};
  }
  if (rank < 0 || rank >= ranks) return sched::Error{fmt::format("rank {} of {}", rank, ranks)};
  const sim::RankCoord coord = sim::coord_of(place.layout, rank);
  place.rank = rank;
  place.device = coord.pp;
  place.replica = coord.dp;
  place.tensor_rank = coord.tp;
  for (const int device : schedule.placement) {
    place.stage_ranks.push_back(sim::rank_of(place.layout, {coord.tp, coord.dp, device}));
  }
  place.replica_group = sim::dp_group(place.layout, coord.pp, coord.tp);
  for (int t = 0; t < place.layout.tp; ++t) {
    place.tensor_group.push_back(sim::rank_of(place.layout, {t, coord.dp, coord.pp}));
  }
  return place;
}

}  // namespace pipeworks::hw
