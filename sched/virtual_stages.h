// Generators with several stages per device ("virtual stages"): device r of p holds stages r,
// r + p, ..., r + (v-1)p, so K = v * p stages run on p devices and each hands its output to the
// next device. Interleaved 1F1B follows Megatron-LM's order (Narayanan et al. 2021), looped BFS
// torch.distributed.pipelining's ScheduleLoopedBFS. Both need M to be a multiple of p.
//
// Interleaved 1F1B, p = 2, v = 2 (stages 0, 2 on d0; 1, 3 on d1), M = 4, unit time. Device r
// runs min(2(p-1-r) + (v-1)p, vM) warm-up forwards (chunk by chunk in groups of p micro-batches),
// then alternates a forward and a backward, then drains; backwards visit the chunks in reverse.
// With a stage's F and B one unit each the makespan is 2(vM + p - 1): a bubble of 2(p-1) per
// device, v times smaller than 1F1B's on the same model cut into p stages (F = B = v units).
//
//   t:    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15  16  17
//   d0: 0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1   . 2B2   . 2B3 0B2 0B3
//   d1:   . 1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3   .
//
// Looped BFS, p = 2, v = 2, M = 2: every forward of the device's first stage, then of its next
// stage, ...; then the backwards, last stage first and latest micro-batch first.
//
//   t:    0   1   2   3   4   5   6   7   8   9
//   d0: 0F0 0F1 2F0 2F1   .   . 2B1 2B0 0B1 0B0
//   d1:   . 1F0 1F1 3F0 3F1 3B1 3B0 1B1 1B0   .
//
// Both pictures are asserted in tests/sched/virtual_stages_test.cc.
#pragma once

#include "sched/schedule.h"

namespace pipeworks::sched {

// shape.num_stages = v * p stages with v = `virtual_stages`; shape.placement empty or s mod p.
Result<Schedule> interleaved_1f1b(const ScheduleShape& shape, int virtual_stages);
Result<Schedule> looped_bfs(const ScheduleShape& shape, int virtual_stages);

// The devices p = K / v of the looped placement (stage s on device s mod p), once K cuts into v
// stages per device and shape.placement is empty or that placement. Every virtual-stage kind
// (interleaved_zero_bubble.h too) checks its shape here.
Result<int> looped_devices(const ScheduleShape& shape, int virtual_stages);
// An empty schedule of shape's K and M in the looped placement on p devices.
Schedule looped_schedule(const ScheduleShape& shape, int num_devices);

// How a device's v chunks take turns: `round` micro-batches through one chunk, then the next
// (Megatron's interleaving has round = p; torch's flexible rounds, M / max(1, M / p)).
struct ChunkRounds {
  int devices = 1;  // p
  int chunks = 1;   // v
  int round = 1;
};
// Device r's k-th action of `kind` (k counts that kind's actions on the device): forwards visit
// the chunks in order, backwards (B, I, W) in reverse; micro-batches in rounds of `round`.
Action interleaved_action(const ChunkRounds& rounds, int r, int k, ActionKind kind);

}  // namespace pipeworks::sched
