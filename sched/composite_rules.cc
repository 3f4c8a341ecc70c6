// The composite marks' rules (see composite_rules.h).
#include "sched/composite_rules.h"

#include <fmt/format.h>

#include "sched/dependencies.h"

namespace pipeworks::sched {
namespace {

bool names_two_actions(const Schedule& schedule, const Composite& c) {
  return c.device >= 0 && c.device < schedule.num_devices() && c.position >= 0 &&
         static_cast<std::size_t>(c.position) + 1 < schedule.programs[static_cast<std::size_t>(c.device)].size();
}

// What `c`'s two sub-actions break, or "" when they may overlap.
std::string overlap_problem(const Action& first, const Action& second, const ActionIndex& index, int num_stages) {
  const std::string text = composite_text(first, second);
  if (first.kind != ActionKind::kForward || !is_input_backward(second.kind)) {
    return fmt::format("{} must overlap a forward (F) with a backward (B or I), in that order", text);
  }
  for (const Action& dep : data_dependencies(second, index, num_stages)) {
    if (dep == first) return fmt::format("in {}, {} depends on {}, so the two cannot overlap", text, to_string(second), to_string(first));
  }
  return "";
}

}  // namespace

void check_composites(const Schedule& schedule, const ActionIndex& index, std::vector<Diagnostic>& out) {
  const Composite* previous = nullptr;
  for (const Composite& c : schedule.composites) {
    if (!names_two_actions(schedule, c)) {
      const int device = c.device >= 0 && c.device < schedule.num_devices() ? c.device : -1;
      out.push_back(Diagnostic{DiagnosticKind::kBadComposite, device, -1, -1,
                               fmt::format("composite mark (device {}, position {}) does not name two actions of a "
                                           "program",
                                           c.device, c.position),
                               {}});
      continue;
    }
    const Program& program = schedule.programs[static_cast<std::size_t>(c.device)];
    const Action& first = program[static_cast<std::size_t>(c.position)];
    const Action& second = program[static_cast<std::size_t>(c.position) + 1];
    const Location second_at{c.device, c.position + 1};
    if (previous != nullptr && (c.device < previous->device ||
                                (c.device == previous->device && c.position < previous->position + 2))) {
      out.push_back(Diagnostic{DiagnosticKind::kBadComposite, c.device, c.position, first.stage,
                               fmt::format("composite mark (device {}, position {}) comes after (device {}, position "
                                           "{}): marks go in program order and share no action",
                                           c.device, c.position, previous->device, previous->position),
                               {second_at}});
    } else if (const std::string problem = overlap_problem(first, second, index, schedule.num_stages);
               !problem.empty()) {
      out.push_back(Diagnostic{DiagnosticKind::kBadComposite, c.device, c.position, first.stage, problem, {second_at}});
    }
    previous = &c;
  }
}

}  // namespace pipeworks::sched
