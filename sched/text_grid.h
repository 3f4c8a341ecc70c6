// The step x device picture of a schedule for terminals, from its unit-time execution:
//
//   t:   0  1  2  3  4  5
//   d0: F0 F1  .  . B0 B1
//   d1:  . F0 F1 B0 B1  .
//
// Compute actions take one step. A device that hosts one stage shows `F0`; one hosting several
// shows the full action (`2F0`). Idle steps are `.`. SEND/RECV take no step; in a lowered
// schedule a row under each device shows them, a send in the step of the compute it follows
// (`>F0`: F0's activation sent on), a receive in the step of the compute it precedes (`<B0`:
// B0's gradient received), several in one step in program order separated by commas:
//
//   t:    0   1   2   3   4   5
//   d0:  F0  F1   .   .  B0  B1
//       >F0 >F1         <B0 <B1
//   d1:   .  F0  F1  B0  B1   .
//           <F0 <F1 >B0 >B1
//   (under each device: >F0 sent after that step, <B0 received before it)
//
// Stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) take no step and are not drawn; a
// composite's two sub-actions take a step each, one after the other.
#pragma once

#include <cstdint>
#include <string>

#include "sched/schedule.h"

namespace pipeworks::sched {

// The largest grid drawn, in cells (rows x steps; a lowered schedule has two rows per device).
// A grid is K x steps while the schedule is K x M, so a deep pipeline's grid outgrows its
// schedule by far (K = 16,384, M = 2: 537 million cells); CSV and JSON stay proportional.
inline constexpr std::int64_t kMaxGridCells = std::int64_t{1} << 22;

// Ok when the grid of `schedule` has at most kMaxGridCells cells; else an error naming its rows,
// steps and cells, the limit and the formats without one. Fails as render_grid does when the
// schedule cannot be executed.
Status check_grid_size(const Schedule& schedule);

// Fails when the schedule cannot be executed (see unit_timing) or its grid is beyond
// kMaxGridCells (check_grid_size).
Result<std::string> render_grid(const Schedule& schedule);

}  // namespace pipeworks::sched
