// The departure search of ZB-H2's and ZB-V's timed orders (see departure_search.h).
#include "sched/departure_search.h"

#include <algorithm>

namespace pipeworks::sched::detail {

std::size_t take_choice(RuleRun& run, std::size_t count, const Departures& departures,
                        Departures::const_iterator& departure) {
  if (count < 2) return 0;
  const std::size_t decision = run.choices.size();
  run.choices.push_back(static_cast<std::uint8_t>(count));
  if (departure == departures.end() || departure->first != decision) return 0;
  return std::min<std::size_t>((departure++)->second, count - 1);
}

std::vector<Program> departure_search(const DepartureRule& rule, std::vector<Program> best, std::int64_t best_end,
                                      std::vector<SearchStart> frontier, std::int64_t work,
                                      const std::vector<bool>& fresh_variants) {
  // Runs one order; true once the search should stop (on the floor or out of work).
  const auto try_order = [&](bool variant, Departures departures, std::vector<SearchStart>* starts) {
    RuleRun run = rule.run(variant, departures);
    work += run.wake_ups;
    if (run.complete) {
      const std::int64_t end = rule.end(run.orders);
      if (end < best_end) best_end = end, best = std::move(run.orders);
      if (starts != nullptr) starts->push_back({variant, std::move(departures), std::move(run.choices), end});
    }
    return best_end <= rule.floor || work > rule.budget;
  };
  if (best_end <= rule.floor) return best;
  for (const bool variant : fresh_variants) {
    if (try_order(variant, {}, &frontier)) return best;
  }
  for (int depth = 0; depth < kSearchDepth; ++depth) {
    std::vector<SearchStart> next;
    for (const SearchStart& start : frontier) {
      const std::size_t after = start.departures.empty() ? 0 : start.departures.back().first + 1;
      for (std::size_t d = after; d < start.choices.size(); ++d) {
        for (std::uint8_t c = 1; c < start.choices[d]; ++c) {
          Departures more = start.departures;
          more.emplace_back(d, c);
          if (try_order(start.variant, std::move(more), &next)) return best;
        }
      }
    }
    std::stable_sort(next.begin(), next.end(),
                     [](const SearchStart& x, const SearchStart& y) { return x.end < y.end; });
    next.resize(std::min(next.size(), kSearchBeam));
    frontier = std::move(next);
  }
  return best;
}

}  // namespace pipeworks::sched::detail
