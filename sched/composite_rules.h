// What validation asks of the composite marks (composite.h): each names two adjacent actions of
// one program, the marks come in (device, position) order without sharing an action, and each
// overlaps what torch's OVERLAP_F_B overlaps: a forward F, then a backward B or I that does not
// depend on it. Each sub-action is also checked as any action is (range, placement, order,
// dependencies), by the rest of validate; its device is the composite's by construction.
#pragma once

#include <vector>

#include "sched/action_index.h"
#include "sched/diagnostic.h"
#include "sched/schedule.h"

namespace pipeworks::sched {

// Appends a kBadComposite diagnostic per mark that breaks a rule above, in the marks' order.
void check_composites(const Schedule& schedule, const ActionIndex& index, std::vector<Diagnostic>& out);

}  // namespace pipeworks::sched
