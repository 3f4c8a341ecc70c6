// Interleaved zero bubble: the zero-bubble paper's ZB1P (Qi et al. 2024) over v virtual stages per
// device, ordered as torch.distributed.pipelining's ScheduleInterleavedZeroBubble orders it. Device
// r of p holds stages r, r + p, ..., r + (v-1)p (the looped placement of virtual_stages.h).
//
// Micro-batches go in max(1, M / p) rounds of M / rounds each (M must split evenly: torch's rule);
// a device's k-th forward runs chunk (k / round) mod v, its k-th backward the chunks in reverse.
// Device r runs min((v-1) round + p-1-r, vM) warm-up forwards, then F, I pairs; each W runs r
// backwards behind its I (ZB-H1's lag, zero_bubble.h), the rest after the last I. With v = 1 it is
// ZB-H1 wherever torch takes the shape. torch adds idle slots where a forward's input is not there
// yet; the IR has no idle slots, so the device programs are its rows without them.
//
// In unit time (F = I = W = 1 on every stage) the makespan is 3vM + p - 1 once M >= p: each device
// idles p - 1 steps, a bubble of (p-1)/(3vM+p-1), v times less than ZB-H1's on the same model cut
// into p stages. The last chunk's stages hold min(M, p) micro-batches (F run, W not yet), the
// earlier chunks' more (p = 4, v = 2, M = 8: 8 on stages 0-3, 4 on stages 4-7).
//
// p = 2, v = 2 (stages 0, 2 on d0; 1, 3 on d1), M = 4, unit time:
//
//   t:    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17  18  19  20  21  22  23  24
//   d0: 0F0 0F1 2F0 2F1   . 2I0 2W0 0F2 2I1 2W1 0F3 0I0 0W0 2F2 0I1 0W1 2F3 2I2 2W2 2I3 2W3 0I2 0W2 0I3 0W3
//   d1:   . 1F0 1F1 3F0 3I0 3F1 3I1 3W0 1F2 1I0 3W1 1F3 1I1 1W0 3F2 3I2 1W1 3F3 3I3 3W2 1I2 3W3 1I3 1W2 1W3
//
// The picture is asserted in tests/sched/interleaved_zero_bubble_test.cc.
#pragma once

#include "sched/schedule.h"

namespace pipeworks::sched {

// shape.num_stages = v * p stages with v = `virtual_stages`; shape.placement empty or s mod p.
Result<Schedule> interleaved_zero_bubble(const ScheduleShape& shape, int virtual_stages);

}  // namespace pipeworks::sched
