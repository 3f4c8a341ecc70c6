// The field tables of a simulation's result (see sim_result_fields.h). A new figure is one line here.
#include "sim/engine/sim_result_fields.h"

#include <string>

namespace pipeworks::sim {
namespace {

using U = FieldUnit;

FieldValue comm_mode(const SimResult& r) { return std::string(comm_mode_name(r.comm_mode)); }

constexpr Field<SimResult> kResultFields[] = {
    {.name = "num_microbatches", .unit = U::kCount, .value = figure<&SimResult::num_microbatches>},
    {.name = "microbatch_size", .unit = U::kSamples, .value = figure<&SimResult::microbatch_size>},
    {.name = "comm_mode", .unit = U::kText, .value = comm_mode},
    {.name = "makespan_ns", .unit = U::kNanoseconds, .value = figure<&SimResult::makespan_ns>},
    {.name = "step_ns", .unit = U::kNanoseconds, .value = figure<&SimResult::step_ns>},
    {.name = "bubble_fraction", .unit = U::kFraction, .value = figure<&SimResult::bubble_fraction>},
    {.name = "throughput_samples_per_s", .unit = U::kSamplesPerSecond,
     .value = figure<&SimResult::throughput_samples_per_s>},
    {.name = "fits", .unit = U::kFlag, .value = figure<&SimResult::fits>},
    {.name = "num_actions", .unit = U::kCount, .value = figure<&SimResult::num_actions>},
    {.name = "num_transfers", .unit = U::kCount, .value = figure<&SimResult::num_transfers>},
    {.name = "num_stage_level_actions", .unit = U::kCount, .value = figure<&SimResult::num_stage_level_actions>},
    {.name = "num_composites", .unit = U::kCount, .value = figure<&SimResult::num_composites>},
};

constexpr Field<DeviceResult> kDeviceFields[] = {
    {.name = "device", .unit = U::kIndex, .value = figure<&DeviceResult::device>},
    {.name = "busy_ns", .unit = U::kNanoseconds, .value = figure<&DeviceResult::busy_ns>},
    {.name = "idle_ns", .unit = U::kNanoseconds, .value = figure<&DeviceResult::idle_ns>},
    {.name = "bubble_fraction", .unit = U::kFraction, .value = figure<&DeviceResult::bubble_fraction>},
    {.name = "collective_ns", .unit = U::kNanoseconds, .value = figure<&DeviceResult::collective_ns>},
    {.name = "optimizer_ns", .unit = U::kNanoseconds, .value = figure<&DeviceResult::optimizer_ns>},
};

constexpr Field<MemoryReport> kMemoryFields[] = {
    {.name = "peak_bytes", .unit = U::kBytes, .value = figure<&MemoryReport::peak_bytes>},
    {.name = "peak_activation_bytes", .unit = U::kBytes, .value = figure<&MemoryReport::peak_activation_bytes>},
    {.name = "param_bytes", .unit = U::kBytes, .value = figure<&MemoryReport::param_bytes>},
    {.name = "grad_bytes", .unit = U::kBytes, .value = figure<&MemoryReport::grad_bytes>},
    {.name = "optimizer_bytes", .unit = U::kBytes, .value = figure<&MemoryReport::optimizer_bytes>},
    {.name = "capacity_bytes", .unit = U::kBytes, .value = figure<&MemoryReport::capacity_bytes>},
    {.name = "fits", .unit = U::kFlag, .value = figure<&MemoryReport::fits>},
};

}  // namespace

std::span<const Field<SimResult>> sim_result_fields() { return kResultFields; }
std::span<const Field<DeviceResult>> device_result_fields() { return kDeviceFields; }
std::span<const Field<MemoryReport>> memory_report_fields() { return kMemoryFields; }

}  // namespace pipeworks::sim
