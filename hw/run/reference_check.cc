// Pipeline tensors against the reference's (see reference_check.h).
#include "hw/run/reference_check.h"

#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "hw/model/reference.h"

namespace pipeworks::hw {
namespace {

std::vector<torch::Tensor> on_cpu(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : tensors) out.push_back(t.defined() ? t.detach().cpu() : t);
  return out;
}

// u = 2^-p for a dtype of p significand bits.
double unit_roundoff(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kDouble:
      return std::ldexp(1.0, -std::numeric_limits<double>::digits);
    case torch::kHalf:
      return std::ldexp(1.0, -11);
    case torch::kBFloat16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -std::numeric_limits<float>::digits);
  }
}

}  // namespace

void check_tensors(GradientCheck& check, const std::vector<at::Tensor>& pipeline,
                   const std::vector<at::Tensor>& reference) {
  const TensorDiff diff = compare_tensors(on_cpu(pipeline), reference, check.rtol, check.atol);
  merge_check(check, GradientCheck{diff.max_abs_diff, diff.max_rel_diff, diff.exactly_equal,
                                   diff.all_close && diff.same_shapes, check.rtol, check.atol});
}

void check_summation_bound(GradientCheck& check, const std::vector<at::Tensor>& pipeline,
                           const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& magnitudes,
                           int bound_terms) {
  const std::vector<torch::Tensor> actual = on_cpu(pipeline);
  const TensorDiff diff = compare_tensors(actual, reference, check.rtol, check.atol);
  bool within = diff.same_shapes && actual.size() == magnitudes.size();
  const torch::NoGradGuard no_grad;
  for (std::size_t i = 0; within && i < actual.size(); ++i) {
    if (!actual[i].defined() || !reference[i].defined() || !magnitudes[i].defined()) {
      within = actual[i].defined() == reference[i].defined();
      continue;
    }
    const torch::Tensor bound = magnitudes[i].to(torch::kDouble) * (bound_terms * unit_roundoff(actual[i]));
    within = ((actual[i].to(torch::kDouble) - reference[i].to(torch::kDouble)).abs() <= bound).all().item<bool>();
  }
  merge_check(check, GradientCheck{diff.max_abs_diff, diff.max_rel_diff, diff.exactly_equal, within, check.rtol,
                                   check.atol});
}

}  // namespace pipeworks::hw
