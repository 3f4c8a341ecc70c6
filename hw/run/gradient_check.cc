// Folding comparisons with the reference (see gradient_check.h).
#include "hw/run/gradient_check.h"

#include <algorithm>

namespace pipeworks::hw {

void merge_check(GradientCheck& total, const GradientCheck& part) {
  total.max_abs_diff = std::max(total.max_abs_diff, part.max_abs_diff);
  total.max_rel_diff = std::max(total.max_rel_diff, part.max_rel_diff);
  total.exactly_equal = total.exactly_equal && part.exactly_equal;
  total.passed = total.passed && part.passed;
}

void merge_check(std::optional<GradientCheck>& total, const GradientCheck& part) {
  if (!total) total = part;
  merge_check(*total, part);
}

}  // namespace pipeworks::hw
