// The fields of a sweep row, one line each, in the order every writer uses: the CSV and JSON files
// and the people's table (sweep_table.h) and Python's columns are generated from this table.
#pragma once

#include <span>

#include "sim/plan/sweep.h"
#include "sim/spec/field.h"

namespace pipeworks::sim {

// batch, stages, virtual_stages, microbatches, microbatch_size, schedule, recompute, partition,
// simulated, makespan_ns, samples_per_s, bubble_fraction, peak_bytes, peak_device,
// capacity_bytes, fits, overflow_bytes, stage_compute_ns, note, partition_note.
std::span<const Field<SweepRow>> sweep_row_fields();

}  // namespace pipeworks::sim
