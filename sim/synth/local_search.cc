// Seeded local search over one-device moves (local_search.h).
#include "sim/synth/local_search.h"

namespace pipeworks::sim {

Evaluation local_search(Evaluation start, const CostModel& costs, const std::vector<Bytes>& caps_bytes,
                        Nanoseconds bound_ns, SearchRng& rng, const SearchBudget& budget, bool recompute,
                        LocalSearchStats& stats) {
  Evaluation best = std::move(start);
  while (stats.evaluations < budget.max_evaluations && best.step_ns() > bound_ns) {
    if (std::chrono::steady_clock::now() >= budget.deadline) {
      stats.stopped_by_clock = true;
      break;
    }
    ++stats.evaluations;
    sched::Schedule candidate = best.schedule;
    const auto moves = uniform_index(rng, 1, 2);
    bool moved = false;
    for (std::int64_t i = 0; i < moves; ++i) moved = random_move(candidate, rng, recompute) || moved;
    if (!moved) continue;
    auto judged = evaluate(std::move(candidate), costs, caps_bytes);
    if (!judged || !judged->fits || judged->step_ns() > best.step_ns()) continue;
    if (judged->step_ns() < best.step_ns()) ++stats.improvements;
    best = std::move(judged).value();
  }
  return best;
}

}  // namespace pipeworks::sim
