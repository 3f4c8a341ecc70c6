// The second half of the search: from the best list-rule schedule, random moves (moves.h), each
// re-lowered and re-simulated (evaluation.h), kept when the step is no longer and the cap still
// holds (equal steps are kept too, so the search can cross plateaus). Deterministic for a seed:
// it stops after a fixed number of evaluations, at the lower bound, or (only then may two runs
// differ) when the wall clock passes the deadline, which it reports.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "sim/synth/evaluation.h"
#include "sim/synth/moves.h"

namespace pipeworks::sim {

struct SearchBudget {
  std::int64_t max_evaluations = 0;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct LocalSearchStats {
  std::int64_t evaluations = 0;   // moves tried (drawn moves that break an order count too)
  std::int64_t improvements = 0;  // moves that shortened the step
  bool stopped_by_clock = false;  // the deadline came before the evaluations were spent
};

// `start` must fit; the result fits and its step is at most start's. `recompute`: R toggles are
// among the moves (moves.h).
Evaluation local_search(Evaluation start, const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                        Nanoseconds bound_ns, SearchRng& rng, const SearchBudget& budget, bool recompute,
                        LocalSearchStats& stats);

}  // namespace pipeworks::sim
