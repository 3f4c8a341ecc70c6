// The bubble each schedule kind has in closed form, under uniform stages and free communication,
// as the papers give it: the reference `simulate` prints beside its simulated bubble. Split
// kinds take F = I = W; the fractions are idle time over devices x makespan.
//
//   gpipe, 1f1b               (K-1)/(M+K-1)
//   interleaved, looped BFS   (D-1)/(vM+D-1)        D devices, v = K/D stages on each
//   zb-h1, M >= K             (K-1)(F+I-W) idle per device; F = I = W: (K-1)/(3M+K-1)
//   zb-h2, M >= 2K            the forward ramp only: (K-1)/(3M+K-1)
//   zb-v, M >= 2D             half-length stages ramp: (D-1)/(6M+D-1)
//   interleaved-zb, M >= D    (D-1)/(3vM+D-1)       D devices, v = K/D stages on each
//   dualpipe-v, and the zero-bubble kinds with fewer micro-batches: none
//
// Each form is asserted against the simulator in tests/sim/engine/closed_form_bubble_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sched/generators.h"

namespace pipeworks::sim {

struct ClosedFormBubble {
  std::int64_t numerator = 0;    // idle units
  std::int64_t denominator = 1;  // devices x makespan units (per device)
  std::string formula;           // "GPipe closed form (K-1)/(M+K-1)"
  double fraction() const { return static_cast<double>(numerator) / static_cast<double>(denominator); }
};

// The form of `kind` with K stages, M micro-batches on `devices` devices; none where no closed
// form is known. A schedule of no kind (a file) takes GPipe's as its reference.
std::optional<ClosedFormBubble> closed_form_bubble(sched::ScheduleKind kind, int stages, int microbatches,
                                                   int devices);

// "27.3% GPipe closed form (K-1)/(M+K-1) = 3/11", or "no closed form for dualpipe-v at K = 8, M = 8".
std::string closed_form_text(sched::ScheduleKind kind, int stages, int microbatches, int devices);

}  // namespace pipeworks::sim
