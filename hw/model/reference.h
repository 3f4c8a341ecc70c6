// The non-pipelined reference a pipelined run is checked against: the same model (a deep
// copy) and data on the calling thread, either the same micro-batches in the same order
// (gradients accumulate exactly as in the pipeline: bit-identical on CPU with one intra-op
// thread) or one full-batch pass (equal up to rounding: rtol 1e-5 / atol 4e-5).
#pragma once

#include <memory>
#include <vector>

#include "hw/model/model_zoo.h"
#include "hw/model/training.h"

namespace pipeworks::hw {

// kMicrobatchMagnitudes: as kMicrobatches (bit-identical gradients), also summing each
// micro-batch's gradient magnitudes elementwise (magnitudes()): the scale of the rounding a
// different summation order of the same micro-batch gradients can make (reference_check.h).
enum class ReferenceMode : std::uint8_t { kMicrobatches, kFullBatch, kMicrobatchMagnitudes };

class Reference {
 public:
  // Deep-copies `model`.
  Reference(const Model& model, const OptimizerConfig& optimizer);

  // Drops grads, runs forward/backward (loss scaled by 1/M per micro-batch, or the full batch
  // at once), steps the optimizer; returns the mean loss. `seed` drives dropout as in the
  // executor (kFullBatch draws different masks: compare it with dropout 0).
  sched::Result<double> step(const MicroBatches& batch, std::uint64_t seed, ReferenceMode mode);
  // step() in two halves, for a caller that compares or replaces the gradients in between.
  sched::Result<double> accumulate(const MicroBatches& batch, std::uint64_t seed, ReferenceMode mode);
  sched::Status apply_step();
  // Replaces the gradients (one a parameter, in parameters() order; an undefined one is kept).
  void set_gradients(const std::vector<torch::Tensor>& gradients);

  // In the model's layer order: the same order as cell_parameters() of its cells.
  std::vector<torch::Tensor> parameters() const;
  std::vector<torch::Tensor> gradients() const;
  // After a kMicrobatchMagnitudes step: per parameter, sum over micro-batches of |gradient|.
  const std::vector<torch::Tensor>& magnitudes() const { return magnitudes_; }

 private:
  torch::Tensor forward(const torch::Tensor& input);
  void accumulate_with_magnitudes(const MicroBatches& batch, std::uint64_t seed, double& loss_sum);
  Model model_;
  std::vector<torch::Tensor> magnitudes_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

// Largest differences over two equally shaped lists of tensors.
struct TensorDiff {
  double max_abs_diff = 0;
  double max_rel_diff = 0;  // |a - b| / |b| where |b| > 0
  bool exactly_equal = true;  // every element equal (==)
  bool same_shapes = true;
  // |a - b| <= atol + rtol * |b| everywhere (torch.allclose).
  bool all_close = true;
};
TensorDiff compare_tensors(const std::vector<torch::Tensor>& actual, const std::vector<torch::Tensor>& expected,
                           double rtol = 1e-5, double atol = 4e-5);

}  // namespace pipeworks::hw
