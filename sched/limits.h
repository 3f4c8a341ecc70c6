// The largest schedule any command or pass accepts, in one place: generators, readers, the
// validator, the simulator and the sweeps refuse bigger shapes with the same words, so a
// schedule one command makes is one every other command takes.
#pragma once

#include <cstdint>

#include "sched/result.h"

namespace pipeworks::sched {

inline constexpr int kMaxStages = 1 << 16;
inline constexpr std::int64_t kMaxScheduleCells = std::int64_t{1} << 22;  // stages x micro-batches

// Ok when 1 <= stages <= kMaxStages, 1 <= microbatches and stages x microbatches <=
// kMaxScheduleCells; the error names both numbers and the limit they break.
Status check_schedule_size(std::int64_t stages, std::int64_t microbatches);

}  // namespace pipeworks::sched
