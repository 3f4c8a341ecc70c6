// Torch's composite action (ScheduleDualPipeV): `(0F3;3B1)OVERLAP_F_B`, one stage's forward
// overlapped with another stage's backward on the same device. The IR keeps a composite as its
// two sub-actions, adjacent in their device's program and in their order, plus a Composite mark
// (Schedule::composites) that only the text forms read (sched/cells.h): whatever runs a schedule
// (unit timing, the simulator, the executor) runs the two sub-actions back to back in that order.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <string>
#include <string_view>

#include "sched/action.h"

namespace pipeworks::sched {

struct Composite {
  int device = 0;
  int position = 0;  // its sub-actions are programs[device][position] and programs[device][position + 1]

  friend auto operator<=>(const Composite&, const Composite&) = default;
  friend bool operator==(const Composite&, const Composite&) = default;
};

// The two sub-actions of a composite token, and where each one's text starts in it (0-based).
struct CompositeToken {
  std::array<Action, 2> actions{};
  std::array<std::size_t, 2> columns{};
};

// Whether `token` is written as a composite (it starts with '(').
constexpr bool is_composite_token(std::string_view token) { return !token.empty() && token.front() == '('; }

// `(A;B)OVERLAP_F_B`, A and B each an action in parse_action's grammar, strictly: no blanks, two
// sub-actions, the kind OVERLAP_F_B. Errors carry the column (0-based, inside `token`). Which
// kinds may overlap is validation's question (kBadComposite), not the grammar's.
Result<CompositeToken> parse_composite(std::string_view token);

// "(0F3;3B1)OVERLAP_F_B".
std::string composite_text(const Action& first, const Action& second);

}  // namespace pipeworks::sched
