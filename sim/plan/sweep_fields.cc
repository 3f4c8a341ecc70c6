// The sweep row's field table (see sweep_fields.h). A new figure of a row is one line here.
#include "sim/plan/sweep_fields.h"

#include <string>

#include "sim/plan/partition_text.h"
#include "sim/plan/sweep_table.h"

namespace pipeworks::sim {
namespace {

using Row = SweepRow;
using U = FieldUnit;

template <auto member>
FieldValue setting(const Row& row) { return row.config.*member; }

FieldValue microbatch_size(const Row& r) { return r.config.microbatch_size(); }
FieldValue zero(const Row& r) { return std::string(zero_stage_name(r.config.zero)); }
FieldValue devices(const Row& r) { return r.config.total_devices(); }
FieldValue schedule(const Row& r) { return std::string(sched::schedule_kind_name(r.config.schedule)); }
FieldValue boundaries(const Row& r) { return r.partition.boundaries; }
std::string recompute_text(const Row& r) { return std::string(recompute_name(r.config.recompute)); }
std::string schedule_human(const Row& r) { return schedule_text(r.config); }  // "interleaved-1f1b v=2"
std::string layers_text(const Row& r) { return layer_counts_text(r.partition, false); }     // "3,2,2,3"
std::string layers_human(const Row& r) { return layer_counts_text(r.partition, true); }     // "3,2*2,3"
std::string fits_text(const Row& r) { return !r.simulated ? "" : r.fits ? "yes" : "no"; }  // "": not simulated

constexpr Field<Row> kFields[] = {
    {.name = "batch", .unit = U::kSamples, .value = setting<&SweepConfig::batch_size>, .heading = "batch"},
    {.name = "stages", .unit = U::kCount, .value = setting<&SweepConfig::num_stages>, .heading = "stages"},
    {.name = "virtual_stages", .unit = U::kCount, .value = setting<&SweepConfig::virtual_stages>},
    {.name = "microbatches", .unit = U::kCount, .value = setting<&SweepConfig::num_microbatches>, .heading = "M"},
    {.name = "microbatch_size", .unit = U::kSamples, .value = microbatch_size, .heading = "mb"},
    {.name = "schedule", .unit = U::kText, .value = schedule, .heading = "schedule", .human = schedule_human},
    {.name = "recompute", .unit = U::kFlag, .value = setting<&SweepConfig::recompute>, .text = recompute_text,
     .heading = "recompute"},
    {.name = "partition", .unit = U::kLayers, .value = boundaries, .text = layers_text, .heading = "partition",
     .human = layers_human},
    {.name = "simulated", .unit = U::kFlag, .value = figure<&SweepRow::simulated>, .csv = false},  // CSV: fits is ""
    {.name = "makespan_ns", .unit = U::kNanoseconds, .value = figure<&SweepRow::makespan_ns>, .heading = "step"},
    {.name = "samples_per_s", .unit = U::kSamplesPerSecond, .value = figure<&SweepRow::samples_per_s>,
     .heading = "samples/s"},
    {.name = "bubble_fraction", .unit = U::kFraction, .value = figure<&SweepRow::bubble_fraction>, .heading = "bubble"},
    {.name = "peak_bytes", .unit = U::kBytes, .value = figure<&SweepRow::peak_bytes>, .heading = "peak"},
    {.name = "peak_device", .unit = U::kIndex, .value = figure<&SweepRow::peak_device>},
    {.name = "capacity_bytes", .unit = U::kBytes, .value = figure<&SweepRow::capacity_bytes>},
    {.name = "fits", .unit = U::kFlag, .value = figure<&SweepRow::fits>, .text = fits_text, .heading = "fits"},
    {.name = "overflow_bytes", .unit = U::kBytes, .value = figure<&SweepRow::overflow_bytes>},
    {.name = "stage_compute_ns", .unit = U::kNanoseconds, .value = figure<&SweepRow::stage_compute_ns>},
    {.name = "note", .unit = U::kText, .value = figure<&SweepRow::note>},
    {.name = "partition_note", .unit = U::kText, .value = figure<&SweepRow::partition_note>},
    // After the columns a sweep CSV always had, so that readers by position keep working.
    {.name = "dp", .unit = U::kCount, .value = setting<&SweepConfig::dp>, .heading = "dp"},
    {.name = "zero", .unit = U::kText, .value = zero, .heading = "zero"},
    {.name = "devices", .unit = U::kCount, .value = devices},
    {.name = "tail_ns", .unit = U::kNanoseconds, .value = figure<&SweepRow::tail_ns>},
    {.name = "tokens_per_s", .unit = U::kTokensPerSecond, .value = figure<&SweepRow::tokens_per_s>},
    {.name = "mfu", .unit = U::kFraction, .value = figure<&SweepRow::mfu>, .heading = "MFU"},
    {.name = "extrapolated_tables", .unit = U::kCount, .value = figure<&SweepRow::extrapolated_tables>},
    {.name = "tp", .unit = U::kCount, .value = setting<&SweepConfig::tp>, .heading = "tp"},
};

}  // namespace

std::span<const Field<SweepRow>> sweep_row_fields() { return kFields; }

}  // namespace pipeworks::sim
