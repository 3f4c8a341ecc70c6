// The group of tensor-parallel ranks a sharded layer sums its partial results over, as the model
// room sees it: an all-reduce that returns the sum to every rank or throws. hw/model/ cannot
// reach c10d (hw/dist/ builds on it), so the group is an interface here and a Gloo subgroup
// there (hw/dist/c10d_tensor_group.h); the layers and their conjugate operators
// (tensor_parallel_ops.h) hold it.
#pragma once

#include <algorithm>
#include <cstdint>

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

// Rank 0 of a group of `size` timed alone (the profiler, hw/predict/tensor_parallel_profile.h):
// the "sum" leaves this rank's own part, so a pass costs its compute only, and the calls and their
// largest buffer are counted for the collectives the pass would run.
class AloneTensorGroup final : public TensorParallelGroup {
 public:
  explicit AloneTensorGroup(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  void all_reduce_sum(at::Tensor& tensor) override {
    ++calls_;
    largest_bytes_ = std::max<std::int64_t>(largest_bytes_, static_cast<std::int64_t>(tensor.nbytes()));
  }
  int calls() const { return calls_; }
  std::int64_t largest_bytes() const { return largest_bytes_; }
  void reset_counts() { calls_ = 0, largest_bytes_ = 0; }

 private:
  int size_;
  int calls_ = 0;
  std::int64_t largest_bytes_ = 0;
};

}  // namespace pipeworks::hw
