// The run report's field tables (see run_report_fields.h). A new figure of a step is one line here.
#include "hw/run/run_report_fields.h"

namespace pipeworks::hw {
namespace {

using U = sim::FieldUnit;
using sim::figure;

constexpr sim::Field<StepStats> kStepFields[] = {
    {.name = "step", .unit = U::kIndex, .value = figure<&StepStats::step>},
    {.name = "step_ns", .unit = U::kNanoseconds, .value = figure<&StepStats::step_ns>},
    {.name = "samples_per_s", .unit = U::kSamplesPerSecond, .value = figure<&StepStats::samples_per_s>},
    {.name = "bubble_fraction", .unit = U::kFraction, .value = figure<&StepStats::bubble_fraction>},
    {.name = "loss", .unit = U::kNumber, .value = figure<&StepStats::loss>},
    {.name = "peak_activation_bytes", .unit = U::kBytes, .value = figure<&StepStats::peak_activation_bytes>},
};

constexpr sim::Field<GradientCheck> kCheckFields[] = {
    {.name = "max_abs_diff", .unit = U::kNumber, .value = figure<&GradientCheck::max_abs_diff>},
    {.name = "max_rel_diff", .unit = U::kNumber, .value = figure<&GradientCheck::max_rel_diff>},
    {.name = "exactly_equal", .unit = U::kFlag, .value = figure<&GradientCheck::exactly_equal>},
    {.name = "passed", .unit = U::kFlag, .value = figure<&GradientCheck::passed>},
};

}  // namespace

std::span<const sim::Field<StepStats>> step_stats_fields() { return kStepFields; }
std::span<const sim::Field<GradientCheck>> gradient_check_fields() { return kCheckFields; }

}  // namespace pipeworks::hw
