// How a pipelined run's tensors compare with the non-pipelined reference's, and the one way
// partial comparisons -- a list of tensors, a step, a rank of a multi-process run -- fold into a
// total. LibTorch-free (run.h and rank_report.h carry it); reference_check.h compares tensors.
#pragma once

#include <optional>

namespace pipeworks::hw {

// Pipeline vs reference: maxima of the differences over everything compared so far.
struct GradientCheck {
  double max_abs_diff = 0;
  double max_rel_diff = 0;
  bool exactly_equal = true;
  bool passed = true;  // within rtol / atol everywhere
  double rtol = 1e-5;
  double atol = 4e-5;
};

// Folds `part` into `total`: maxima of the differences, conjunction of the verdicts (the
// tolerances stay total's).
void merge_check(GradientCheck& total, const GradientCheck& part);

// The same; an empty `total` becomes `part`.
void merge_check(std::optional<GradientCheck>& total, const GradientCheck& part);

}  // namespace pipeworks::hw
