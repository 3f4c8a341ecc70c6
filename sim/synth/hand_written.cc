// The hand-written families on the synthesis's costs and cap (hand_written.h).
#include "sim/synth/hand_written.h"

#include <fmt/format.h>

#include "sched/passes.h"
#include "sim/engine/timed_orders.h"

namespace pipeworks::sim {

std::string HandWritten::label() const {
  const std::string name(sched::schedule_kind_name(kind));
  return recompute ? name + " + recompute" : name;
}

sched::Result<std::vector<HandWritten>> hand_written_families(int num_stages, int num_microbatches,
                                                              const CostModel& costs,
                                                              const std::vector<Bytes>& caps_bytes, bool recompute) {
  using sched::ScheduleKind;
  std::vector<HandWritten> families;
  const sched::ScheduleShape shape{num_stages, num_microbatches, sched::identity_placement(num_stages)};
  for (const bool with_r : {false, true}) {
    if (with_r && !recompute) break;
    for (const ScheduleKind kind :
         {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kZbH1, ScheduleKind::kZbH2}) {
      const HandWritten named{kind, with_r, {}};
      auto generated = sched::generate(kind, shape);
      if (generated) generated = timed_schedule(kind, *generated, costs);
      if (generated && with_r) generated = sched::add_recompute(*generated);
      if (!generated) return sched::Error{fmt::format("{}: {}", named.label(), generated.error().message)};
      auto judged = evaluate(std::move(generated).value(), costs, caps_bytes);
      if (!judged) return sched::Error{fmt::format("{}: {}", named.label(), judged.error().message)};
      families.push_back(HandWritten{kind, with_r, std::move(judged).value()});
    }
  }
  return families;
}

const HandWritten* best_fitting(const std::vector<HandWritten>& families) {
  const HandWritten* best = nullptr;
  for (const HandWritten& f : families) {
    if (f.evaluation.fits && (best == nullptr || f.evaluation.step_ns() < best->evaluation.step_ns())) best = &f;
  }
  return best;
}

}  // namespace pipeworks::sim
