// Schedule generators: the one place where GPipe and 1F1B are written down (and, through
// generate(), the virtual-stage schedules of virtual_stages.h, the zero-bubble ones of
// zero_bubble.h and interleaved_zero_bubble.h). Everything else (simulator,
// executor, pictures) interprets the Schedule they return.
//
// GPipe fill-drain, K = 4, M = 4, unit time (F = B = 1): all forwards, then all backwards.
//
//   t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13
//   d0: F0 F1 F2 F3  .  .  .  .  .  . B0 B1 B2 B3
//   d1:  . F0 F1 F2 F3  .  .  .  . B0 B1 B2 B3  .
//   d2:  .  . F0 F1 F2 F3  .  . B0 B1 B2 B3  .  .
//   d3:  .  .  . F0 F1 F2 F3 B0 B1 B2 B3  .  .  .
//
// 1F1B (PipeDream-flush), K = 4, M = 4: stage s runs min(K-1-s, M) warm-up forwards, then
// alternates one forward and one backward, then drains the remaining backwards. Same makespan
// as GPipe, but stage s never holds more than min(M, K-s) micro-batches' activations.
//
//   t:   0  1  2  3  4  5  6  7  8  9 10 11 12 13
//   d0: F0 F1 F2 F3  .  .  . B0  . B1  . B2  . B3
//   d1:  . F0 F1 F2  .  . B0 F3 B1  . B2  . B3  .
//   d2:  .  . F0 F1  . B0 F2 B1 F3 B2  . B3  .  .
//   d3:  .  .  . F0 B0 F1 B1 F2 B2 F3 B3  .  .  .
//
// Both pictures are asserted in tests/sched/generators_test.cc.
#pragma once

#include <string_view>
#include <vector>

#include "sched/schedule.h"

namespace pipeworks::sched {

enum class ScheduleKind { kGPipe, kOneFOneB, kInterleaved1F1B, kLoopedBfs, kZbH1, kZbH2, kZbV, kDualPipeV, kInterleavedZb };

// "gpipe", "1f1b", "interleaved-1f1b", "looped-bfs", "zb-h1", "zb-h2", "zb-v", "dualpipe-v",
// "interleaved-zb"
std::string_view schedule_kind_name(ScheduleKind kind);
Result<ScheduleKind> parse_schedule_kind(std::string_view name);
std::vector<std::string_view> schedule_kind_names();
// True for the kinds that place several stages on a device (virtual_stages.h, zero_bubble.h,
// interleaved_zero_bubble.h).
bool has_virtual_stages(ScheduleKind kind);
// True for zb-v and dualpipe-v: two stages per device in V placement (zero_bubble.h).
bool is_v_shaped(ScheduleKind kind);
// The stages a schedule of `kind` lays on `devices` devices: 2 a device for the V-shaped kinds,
// `virtual_stages` a device for the other kinds with virtual stages, else 1 (what `--pp` means).
int stages_on_devices(ScheduleKind kind, int devices, int virtual_stages);
// True for the kinds whose backward is split into I and W (zero_bubble.h, interleaved_zero_bubble.h).
bool splits_backward(ScheduleKind kind);

// Fill-drain: F0..F(M-1) then B0..B(M-1) on every stage.
Result<Schedule> gpipe(const ScheduleShape& shape);
// One-forward-one-backward with warm-up min(K-1-s, M) on stage s.
Result<Schedule> one_f_one_b(const ScheduleShape& shape);
// Any kind; `virtual_stages` (v) only for the kinds that have them, 1 for the others; the V
// kinds always have two (v = 1, not given, or 2).
Result<Schedule> generate(ScheduleKind kind, const ScheduleShape& shape, int virtual_stages = 1);

// Per stage, the most micro-batches whose activations it holds at once under `kind` (forwards
// run, backwards not yet): GPipe M on every stage, 1F1B min(M, K - s), the others as their
// generated schedule (with one virtual stage) has it (interleaved-zb: zb-h1's, which is its
// one-virtual-stage schedule wherever that shape exists). The memory model, the balanced
// partition and the sweeps all take it from here.
std::vector<int> in_flight_microbatches(ScheduleKind kind, int num_stages, int num_microbatches);

// The per-stage orders a generator decides, merged into one program per device. Stages that
// share a device are interleaved by a unit-time list schedule: at each step a device runs the
// ready action of its stages that comes first in (stage-order position, stage). With one stage
// per device the programs are the stage orders unchanged. Fails if the orders cannot progress.
Result<Schedule> merge_stage_orders(int num_stages, int num_microbatches, const std::vector<int>& placement,
                                    const std::vector<Program>& stage_orders);

}  // namespace pipeworks::sched
