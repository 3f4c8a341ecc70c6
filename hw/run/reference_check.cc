// Pipeline tensors against the reference's (see reference_check.h).
#include "hw/run/reference_check.h"

#include <torch/torch.h>

#include "hw/model/reference.h"

namespace pipeworks::hw {
namespace {

std::vector<torch::Tensor> on_cpu(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : tensors) out.push_back(t.defined() ? t.detach().cpu() : t);
  return out;
}

}  // namespace

void check_tensors(GradientCheck& check, const std::vector<at::Tensor>& pipeline,
                   const std::vector<at::Tensor>& reference) {
  const TensorDiff diff = compare_tensors(on_cpu(pipeline), reference, check.rtol, check.atol);
  merge_check(check, GradientCheck{diff.max_abs_diff, diff.max_rel_diff, diff.exactly_equal,
                                   diff.all_close && diff.same_shapes, check.rtol, check.atol});
}

}  // namespace pipeworks::hw
