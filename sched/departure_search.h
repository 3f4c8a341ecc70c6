// The limited-discrepancy beam search that ZB-H2's and ZB-V's timed orders share: a list rule
// re-run with departures from its choices, kept apart so both generators use one copy of it.
// Internal to sched/ (zero_bubble.cc, zb_v_timed.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "sched/schedule.h"

namespace pipeworks::sched::detail {

// Departures from the rule, by decision (the decisions where a stage had more than one choice,
// counted in the order the rule makes them): (decision, index into that decision's choices),
// sorted by decision. Empty: the rule itself.
using Departures = std::vector<std::pair<std::size_t, std::uint8_t>>;

// One run of the list rule: the orders (by stage or device), how many choices each decision had,
// and the wake-ups it handled (the search's measure of work).
struct RuleRun {
  std::vector<Program> orders;
  std::vector<std::uint8_t> choices;
  std::int64_t wake_ups = 0;
  bool complete = false;
};

// Which of a decision's `count` choices a run takes: the first, unless the next of `departures`
// names this decision (the next in `run.choices`, counted only where there is a choice).
std::size_t take_choice(RuleRun& run, std::size_t count, const Departures& departures,
                        Departures::const_iterator& departure);

// How many of the best orders found at one depth the search departs from once more.
inline constexpr std::size_t kSearchBeam = 64;
// How many departures an order may have.
inline constexpr int kSearchDepth = 3;

// An order the search may depart from: the rule's variant it ran, its departures, how many
// choices each of its decisions had, and when it ends.
struct SearchStart {
  bool variant;
  Departures departures;
  std::vector<std::uint8_t> choices;
  std::int64_t end;
};

// What the search works with: `run` runs the rule's variant with departures, `end` times an
// order (as the simulator does), `floor` is a bound no order beats and `budget` the wake-ups it
// may spend.
struct DepartureRule {
  std::function<RuleRun(bool variant, const Departures& departures)> run;
  std::function<std::int64_t(const std::vector<Program>& orders)> end;
  std::int64_t floor;
  std::int64_t budget;
};

// The best order found: `best` (ending at `best_end`) unless beaten. Unless `best_end` is already
// on the floor, runs the rule's `fresh_variants` without departures, adding them to `frontier`
// (orders already run; `work`: the wake-ups they took), then, up to kSearchDepth times, every
// single departure after the last one from each order of the frontier, keeping the kSearchBeam
// that end soonest as the next frontier. Stops on the floor or once the work exceeds the budget;
// ties keep the earlier found.
std::vector<Program> departure_search(const DepartureRule& rule, std::vector<Program> best, std::int64_t best_end,
                                      std::vector<SearchStart> frontier, std::int64_t work,
                                      const std::vector<bool>& fresh_variants);

}  // namespace pipeworks::sched::detail
