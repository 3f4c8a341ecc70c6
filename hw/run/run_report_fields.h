// The fields of a training run's per-step figures and of its gradient check, one line each, in the
// order the run's JSON report writes them (run_report_json.h); the same tables (sim/spec/field.h)
// as the simulator's records, so a figure a run adds is one line here. LibTorch-free.
#pragma once

#include <span>

#include "hw/run/gradient_check.h"
#include "hw/run/run.h"
#include "sim/spec/field.h"

namespace pipeworks::hw {

// step, step_ns, samples_per_s, bubble_fraction, loss, peak_activation_bytes (per device).
std::span<const sim::Field<StepStats>> step_stats_fields();

// max_abs_diff, max_rel_diff, exactly_equal, passed.
std::span<const sim::Field<GradientCheck>> gradient_check_fields();

}  // namespace pipeworks::hw
