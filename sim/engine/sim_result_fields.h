// The fields of a simulation's result, one line each, in the order every writer uses: the simulate
// JSON report (sim/report/sim_report.h) and Python's SimResult.to_dict() are generated from these
// tables. A device's figures and its memory are records of their own, with tables of their own.
#pragma once

#include <span>

#include "sim/engine/simulator.h"
#include "sim/spec/field.h"

namespace pipeworks::sim {

// num_microbatches, microbatch_size, comm_mode, makespan_ns, bubble_fraction,
// throughput_samples_per_s, fits, num_actions, num_transfers, num_stage_level_actions,
// num_composites. (The timeline and the devices are not fields: they have writers of their own.)
std::span<const Field<SimResult>> sim_result_fields();

// device, busy_ns, idle_ns, bubble_fraction. (Its stages are a list written beside these, its
// memory a record of its own; contention_slowdown is not reported.)
std::span<const Field<DeviceResult>> device_result_fields();

// peak_bytes, peak_activation_bytes, param_bytes, grad_bytes, optimizer_bytes, capacity_bytes, fits.
std::span<const Field<MemoryReport>> memory_report_fields();

}  // namespace pipeworks::sim
