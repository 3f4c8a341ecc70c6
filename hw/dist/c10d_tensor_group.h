// The tensor-parallel group of a multi-process run (hw/model/tensor_parallel_group.h) over c10d:
// a Gloo subgroup of the ranks holding the shards of one pipeline rank of one replica. The split
// layers are built before the ranks connect (so a bad configuration fails before any rendezvous),
// so the group is made first and attached to its Gloo backend once connected. Every all-reduce
// waits at most the run's timeout; a failure throws an error naming the group's ranks.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "hw/dist/c10d_group.h"
#include "hw/model/tensor_parallel_group.h"
#include "sched/result.h"

namespace pipeworks::hw {

class C10dTensorGroup final : public TensorParallelGroup {
 public:
  // `ranks`: the group's world ranks by tensor rank; `rank`: this rank's index in them.
  C10dTensorGroup(std::vector<int> ranks, int rank, std::chrono::milliseconds timeout);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  void all_reduce_sum(at::Tensor& tensor) override;

  // Connects the Gloo subgroup inside `world` (every rank of the group calls it, with the same
  // name); an error names the group.
  sched::Status connect(const C10dGroup& world, const std::string& name);

 private:
  std::vector<int> ranks_;
  int rank_;
  std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<C10dBackend> backend_;
};

}  // namespace pipeworks::hw
