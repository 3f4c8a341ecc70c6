// PartitionMemo: a map under a mutex; the key copies the inputs, so a lookup costs O(L).
#include "sim/plan/partition_memo.h"

namespace pipeworks::sim {

PartitionMemo::Key PartitionMemo::key_of(const PartitionProblem& problem, int num_stages) {
  return {num_stages, problem.layer_time_ns, problem.stage_speed};
}

std::optional<Partition> PartitionMemo::find(const PartitionProblem& problem, int num_stages) const {
  const Key key = key_of(problem, num_stages);
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto found = partitions_.find(key);
  if (found == partitions_.end()) return std::nullopt;
  return found->second;
}

void PartitionMemo::remember(const PartitionProblem& problem, int num_stages, const Partition& partition) {
  Key key = key_of(problem, num_stages);
  const std::lock_guard<std::mutex> lock(mutex_);
  partitions_.emplace(std::move(key), partition);
}

}  // namespace pipeworks::sim
