// Megatron's conjugate operators (Shoeybi et al. 2019, sec. 3 and fig. 3) as autograd functions
// over a tensor-parallel group: f before a column-parallel GEMM (identity forward, all-reduce of
// the input gradient backward: every rank's partial input gradient summed), g after a
// row-parallel GEMM (all-reduce of the partial outputs forward, identity backward).
#pragma once

#include <ATen/core/Tensor.h>

#include "hw/model/tensor_parallel_group.h"

namespace pipeworks::hw {

// f: x forward; the sum over the group of the gradient backward.
at::Tensor copy_to_tensor_parallel(const at::Tensor& x, TensorParallelGroup& group);

// g: the sum over the group of x forward; the gradient unchanged backward.
at::Tensor reduce_from_tensor_parallel(const at::Tensor& x, TensorParallelGroup& group);

}  // namespace pipeworks::hw
