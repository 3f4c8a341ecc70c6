// Balanced partitions without memory caps, remembered by what they depend on (the layers'
// times, the stages' speeds, the stage count), for searches that partition one model many
// times: a sweep's configurations share a handful of such problems (sim/plan/partition.h says why
// the uncapped answer decides most capped ones). Safe to share between threads.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "sim/plan/partition.h"

namespace pipeworks::sim {

class PartitionMemo {
 public:
  std::optional<Partition> find(const PartitionProblem& problem, int num_stages) const;
  void remember(const PartitionProblem& problem, int num_stages, const Partition& partition);

 private:
  using Key = std::tuple<int, std::vector<Nanoseconds>, std::vector<double>>;
  static Key key_of(const PartitionProblem& problem, int num_stages);

  mutable std::mutex mutex_;
  std::map<Key, Partition> partitions_;
};

}  // namespace pipeworks::sim
