// The group of tensor-parallel ranks a sharded layer sums its partial results over, as the model
// room sees it: an all-reduce that returns the sum to every rank or throws. hw/model/ cannot
// reach c10d (hw/dist/ builds on it), so the group is an interface here and a Gloo subgroup
// there (hw/dist/c10d_tensor_group.h); the layers and their conjugate operators
// (tensor_parallel_ops.h) hold it.
#pragma once

#include <ATen/core/Tensor.h>

namespace pipeworks::hw {

class TensorParallelGroup {
 public:
  virtual ~TensorParallelGroup() = default;
  virtual int rank() const = 0;  // this rank's index in the group: the shard it holds
  virtual int size() const = 0;  // the tensor-parallel ranks, t
  // Sums `tensor` over the group in place (every rank gets the same bytes). Throws
  // std::runtime_error naming the group when the collective fails or misses its deadline.
  virtual void all_reduce_sum(at::Tensor& tensor) = 0;
};

}  // namespace pipeworks::hw
