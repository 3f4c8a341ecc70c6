// Whether a spec is read outside the micro-batch sizes it was measured at. A profiled spec's
// tables (size_table.h) hold measured values; beyond the smallest and the largest size a value
// is the nearest one carried along a slope, not a measurement, and a prediction made there
// must say so (simulate, sweep, plan and run --predict print it and their JSON carries it).
//
//   profiled 2, 4, 8:   |--x----x--------x--------------?   micro-batch 32: 4x the largest,
//                       1  2    4        8             32   every table extrapolated
#pragma once

#include <optional>
#include <string>

#include "sim/spec/model_spec.h"

namespace pipeworks::sim {

struct SizeExtrapolation {
  int microbatch_size = 1;
  int smallest = 1;  // the profiled sizes the extrapolated tables span
  int largest = 1;
  int tables = 0;    // tables read outside their own measured sizes
};

// None when every table of `spec` (its layers' times and bytes, its input, its stage
// temporaries) measured `microbatch_size` or sizes on both sides of it, or the spec has no
// table (costs from formulas or written by hand are lines, valid at every size).
std::optional<SizeExtrapolation> size_extrapolation(const ModelSpec& spec, int microbatch_size);

// One line: "micro-batch size 32 is outside the profiled sizes 2..8 (4x the largest): 45 tables
// extrapolated".
std::string describe(const SizeExtrapolation& e);

}  // namespace pipeworks::sim
