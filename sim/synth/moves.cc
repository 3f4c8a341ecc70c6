// Random moves on one device's program (moves.h).
#include "sim/synth/moves.h"

#include <algorithm>

namespace pipeworks::sim {
namespace {

using sched::Action;
using sched::ActionKind;

// The farthest a W moves in one step.
constexpr std::int64_t kMaxShift = 8;

// Moves a random W of `program` up to kMaxShift places, never before its own I.
bool shift_weight(sched::Program& program, SearchRng& rng) {
  std::vector<std::int64_t> weights;
  for (std::size_t p = 0; p < program.size(); ++p) {
    if (program[p].kind == ActionKind::kBackwardWeight) weights.push_back(static_cast<std::int64_t>(p));
  }
  if (weights.empty()) return false;
  const auto pick = uniform_index(rng, 0, static_cast<std::int64_t>(weights.size()) - 1);
  const std::int64_t from = weights[static_cast<std::size_t>(pick)];
  const Action w = program[static_cast<std::size_t>(from)];
  const Action i{w.stage, ActionKind::kBackwardInput, w.microbatch};
  const auto at = std::find(program.begin(), program.end(), i);
  const std::int64_t earliest = at == program.end() ? 0 : (at - program.begin()) + 1;
  std::int64_t shift = uniform_index(rng, 1, kMaxShift);
  if (uniform_index(rng, 0, 1) == 0) shift = -shift;
  const std::int64_t last = static_cast<std::int64_t>(program.size()) - 1;
  const std::int64_t to = std::clamp(from + shift, earliest, last);
  if (to == from) return false;
  program.erase(program.begin() + static_cast<std::ptrdiff_t>(from));
  program.insert(program.begin() + static_cast<std::ptrdiff_t>(to), w);
  return true;
}

// True for two forwards, two W's, or two backwards on the chain (I or B): passes a stage runs in
// micro-batch order.
bool same_pass(ActionKind a, ActionKind b) {
  const auto chain = [](ActionKind k) { return k == ActionKind::kBackwardInput || k == ActionKind::kBackward; };
  return a == b || (chain(a) && chain(b));
}

// Swaps a random adjacent pair unless both are of one micro-batch (on one stage the second needs
// the first; where a device holds several stages, as in a V, one micro-batch's actions on them
// mostly need each other too: its F on stage 3 before its F on stage 4, their backwards the other
// way) or both are the same pass on one stage (each stage keeps its micro-batches in order).
bool swap_adjacent(sched::Program& program, SearchRng& rng) {
  if (program.size() < 2) return false;
  const auto p = static_cast<std::size_t>(uniform_index(rng, 0, static_cast<std::int64_t>(program.size()) - 2));
  const Action& a = program[p];
  const Action& b = program[p + 1];
  if (a.microbatch == b.microbatch || (a.stage == b.stage && same_pass(a.kind, b.kind))) return false;
  std::swap(program[p], program[p + 1]);
  return true;
}

// Merges a random I with its W into one B (one action, one overhead less, but no W left to fill a
// gap), or splits a random B into its I and, right after, its W.
bool merge_or_split(sched::Program& program, SearchRng& rng) {
  if (program.empty()) return false;
  const auto p = static_cast<std::size_t>(uniform_index(rng, 0, static_cast<std::int64_t>(program.size()) - 1));
  const Action a = program[p];
  if (a.kind == ActionKind::kBackward) {
    program[p].kind = ActionKind::kBackwardInput;
    const Action w{a.stage, ActionKind::kBackwardWeight, a.microbatch};
    program.insert(program.begin() + static_cast<std::ptrdiff_t>(p) + 1, w);
    return true;
  }
  if (a.kind != ActionKind::kBackwardInput) return false;
  const auto w = std::find(program.begin(), program.end(), Action{a.stage, ActionKind::kBackwardWeight, a.microbatch});
  if (w == program.end()) return false;
  const bool before = w < program.begin() + static_cast<std::ptrdiff_t>(p);
  program.erase(w);
  program[before ? p - 1 : p].kind = ActionKind::kBackward;
  return true;
}

// Puts an R before a random backward (I or B) that has none, right before it, or takes a
// random backward's R away: that micro-batch keeps its stage input instead of its stash until
// the R, and pays a forward again.
bool toggle_recompute(sched::Program& program, SearchRng& rng) {
  std::vector<std::size_t> backwards;
  for (std::size_t p = 0; p < program.size(); ++p) {
    const ActionKind k = program[p].kind;
    if (k == ActionKind::kBackwardInput || k == ActionKind::kBackward) backwards.push_back(p);
  }
  if (backwards.empty()) return false;
  const auto pick = uniform_index(rng, 0, static_cast<std::int64_t>(backwards.size()) - 1);
  const std::size_t at = backwards[static_cast<std::size_t>(pick)];
  const Action r{program[at].stage, ActionKind::kRecompute, program[at].microbatch};
  const auto existing = std::find(program.begin(), program.end(), r);
  if (existing != program.end()) {
    program.erase(existing);
  } else {
    program.insert(program.begin() + static_cast<std::ptrdiff_t>(at), r);
  }
  return true;
}

}  // namespace

std::int64_t uniform_index(SearchRng& rng, std::int64_t low, std::int64_t high) {
  const auto span = static_cast<std::uint64_t>(high - low) + 1;
  return low + static_cast<std::int64_t>(rng() % span);
}

bool random_move(sched::Schedule& schedule, SearchRng& rng, bool recompute) {
  if (schedule.programs.empty()) return false;
  const auto d = static_cast<std::size_t>(uniform_index(rng, 0, static_cast<std::int64_t>(schedule.programs.size()) - 1));
  sched::Program& program = schedule.programs[d];
  // W shifts 8 times in 10: on gpt x dgx-h100, K = 8, M = 64 under 5 and 6 GiB they found
  // shorter steps than an even mix with swaps for the same evaluations (docs/schedules.md).
  const std::int64_t kind = uniform_index(rng, 0, recompute ? 10 : 9);
  if (kind < 8) return shift_weight(program, rng);
  if (kind == 10) return toggle_recompute(program, rng);
  return kind == 8 ? swap_adjacent(program, rng) : merge_or_split(program, rng);
}

}  // namespace pipeworks::sim
