// Comparing a pipelined run's tensors with the non-pipelined reference's (reference.h) into a
// GradientCheck: the in-process run compares every cell's, a rank of a multi-process run the
// cells on its own device. Includes LibTorch (gradient_check.h is the LibTorch-free face).
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "hw/run/gradient_check.h"

namespace pipeworks::hw {

// Compares `pipeline` (copied to the CPU, where the reference is, when elsewhere) with
// `reference` at check's rtol / atol and folds the result into `check`.
void check_tensors(GradientCheck& check, const std::vector<at::Tensor>& pipeline,
                   const std::vector<at::Tensor>& reference);

// Gradients that sum the same micro-batch gradients x_i in another order than the reference
// (data parallelism: M per replica, then the replicas' sums; the reference: all n = M dp in a
// row). Recursive summation of k terms errs by at most gamma_(k-1) sum |x_i|, gamma_k = k u / (1 -
// k u) (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 4.4), so the two
// differ elementwise by at most
//   (gamma_(n-1) + gamma_(M-1) + gamma_(dp-1)) sum |x_i|  <=  bound_terms u sum|x_i|,
// with u the unit roundoff of the tensors' dtype and `bound_terms` = 2 (n + M + dp) (the factor 2
// covers 1 / (1 - k u) and the rounding of each partial sum's scale). `magnitudes`: sum |x_i| per
// element (Reference::magnitudes). Folds the comparison into `check`: passed where every element
// is within its bound; the differences as check_tensors reports them.
void check_summation_bound(GradientCheck& check, const std::vector<at::Tensor>& pipeline,
                           const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& magnitudes,
                           int bound_terms);

}  // namespace pipeworks::hw
