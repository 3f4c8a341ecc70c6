// The largest schedule any command or pass accepts, in one place: generators, readers, the
// validator, the simulator and the sweeps refuse bigger shapes with the same words, so a
// schedule one command makes is one every other command takes.
#pragma once

#include <cstdint>

#include "sched/result.h"

namespace pipeworks::sched {

inline constexpr int kMaxStages = 1 << 16;
inline constexpr std::int64_t kMaxScheduleCells = std::int64_t{1} << 22;  // stages x micro-batches

// What the writers put out for one stage and micro-batch at most: F, R, I, W and the four
// SEND/RECV of a lowered, re-materialized zero-bubble schedule; each written as at most
// 5 stage digits, a 6-letter kind ("RECV_F"), 7 micro-batch digits and 3 separators ('"', '"', ',').
inline constexpr std::int64_t kMaxActionsPerCell = 8;
inline constexpr std::int64_t kMaxActionTextBytes = 5 + 6 + 7 + 3;
// The largest schedule file read (CSV or JSON): every schedule within the limits above, as
// the writers write it, with room for the header and the placement, so that what one command
// writes another reads.
inline constexpr std::int64_t kMaxScheduleFileBytes = std::int64_t{1} << 30;
static_assert(kMaxScheduleCells * kMaxActionsPerCell * kMaxActionTextBytes + 16 * kMaxStages <
              kMaxScheduleFileBytes);

// Ok when 1 <= stages <= kMaxStages, 1 <= microbatches and stages x microbatches <=
// kMaxScheduleCells; the error names both numbers and the limit they break.
Status check_schedule_size(std::int64_t stages, std::int64_t microbatches);

}  // namespace pipeworks::sched
