// The conjugate operators f and g (see tensor_parallel_ops.h).
#include "hw/model/tensor_parallel_ops.h"

#include <torch/autograd.h>
#include <torch/torch.h>

namespace pipeworks::hw {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

TensorParallelGroup* group_of(AutogradContext* ctx) {
  return reinterpret_cast<TensorParallelGroup*>(ctx->saved_data["group"].toInt());
}

// The group travels as its address: the layers that apply f and g own it (a shared_ptr) for
// longer than any graph they build.
class CopyToTensorParallel : public torch::autograd::Function<CopyToTensorParallel> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, std::int64_t group) {
    ctx->saved_data["group"] = group;
    return x.view_as(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::Tensor summed = grads[0].contiguous().clone();
    group_of(ctx)->all_reduce_sum(summed);
    return {summed, torch::Tensor()};
  }
};

class ReduceFromTensorParallel : public torch::autograd::Function<ReduceFromTensorParallel> {
 public:
  static torch::Tensor forward(AutogradContext* /*ctx*/, const torch::Tensor& x, std::int64_t group) {
    torch::Tensor summed = x.contiguous().clone();
    reinterpret_cast<TensorParallelGroup*>(group)->all_reduce_sum(summed);
    return summed;
  }
  static variable_list backward(AutogradContext* /*ctx*/, variable_list grads) { return {grads[0], torch::Tensor()}; }
};

std::int64_t address(TensorParallelGroup& group) { return reinterpret_cast<std::int64_t>(&group); }

}  // namespace

at::Tensor copy_to_tensor_parallel(const at::Tensor& x, TensorParallelGroup& group) {
  return CopyToTensorParallel::apply(x, address(group));
}

at::Tensor reduce_from_tensor_parallel(const at::Tensor& x, TensorParallelGroup& group) {
  return ReduceFromTensorParallel::apply(x, address(group));
}

}  // namespace pipeworks::hw
