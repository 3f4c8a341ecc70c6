// The local search's neighbourhood: small random changes to one device's program that keep each
// action after what it needs on that device, so most neighbours can run (the evaluation rejects
// the rest). A device may hold several stages (a V or looped placement): a move keeps each
// stage's micro-batch order and one micro-batch's order across the device's stages. Three kinds (8, 1 and 1 in 10), and a fourth where re-materialization is searched
// (then 8, 1, 1 and 1 in 11):
//
//   shift a W        d0: F3 I1 W0 F4 I2   ->   d0: F3 I1 F4 W0 I2     (later or earlier, never before its I)
//   swap two         d1: I0 F2 I1 W0      ->   d1: F2 I0 I1 W0        (adjacent, never one micro-batch's two)
//   merge or split   d2: F2 I1 F3 W1      ->   d2: F2 B1 F3           (an I and its W into one B: one action,
//                                                                      one per-action overhead less), or back
//   toggle an R      d3: F4 I2 W2 F5      ->   d3: F4 R2 I2 W2 F5     (re-materialize before a backward: hold the
//                                                                      stage input, not the stash, until R), or back
#pragma once

#include <cstdint>
#include <random>

#include "sched/schedule.h"

namespace pipeworks::sim {

// The search's random numbers: one generator, seeded, so a seed gives one sequence of moves.
using SearchRng = std::mt19937_64;

// Changes `schedule` in place by one random move (R toggles among them when `recompute`); false
// (schedule unchanged) when the move drawn would break an order on its device or has nothing to
// move.
bool random_move(sched::Schedule& schedule, SearchRng& rng, bool recompute);

// A random integer in [low, high] (low <= high), the same on every platform for one generator
// state (std::uniform_int_distribution's algorithm is the library's own).
std::int64_t uniform_index(SearchRng& rng, std::int64_t low, std::int64_t high);

}  // namespace pipeworks::sim
