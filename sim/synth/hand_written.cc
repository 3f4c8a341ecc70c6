// The hand-written families on the synthesis's costs and cap (hand_written.h).
#include "sim/synth/hand_written.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "sched/passes.h"
#include "sim/engine/timed_orders.h"
#include "sim/synth/synthesis_problem.h"

namespace pipeworks::sim {

std::string HandWritten::label() const {
  const std::string name(sched::schedule_kind_name(kind));
  return recompute ? name + " + recompute" : name;
}

namespace {

using sched::ScheduleKind;

// The kinds generated on `placement`: the four of one stage per device, or where stages share
// devices the kinds with virtual stages (v = K / devices) that generate on it.
std::vector<ScheduleKind> kinds_for(const std::vector<int>& placement) {
  if (!shares_devices(placement)) {
    return {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kZbH1, ScheduleKind::kZbH2};
  }
  return {ScheduleKind::kInterleaved1F1B, ScheduleKind::kLoopedBfs, ScheduleKind::kInterleavedZb, ScheduleKind::kZbV,
          ScheduleKind::kDualPipeV};
}

// The family of `kind` on the shape, or nullopt where `optional` and the kind does not generate
// on the shape's placement (another placement, or M not a multiple of its devices).
sched::Result<std::optional<sched::Schedule>> family(ScheduleKind kind, const sched::ScheduleShape& shape,
                                                     const CostModel& costs, bool optional) {
  const int devices = shape.placement.empty() ? shape.num_stages
                                              : *std::max_element(shape.placement.begin(), shape.placement.end()) + 1;
  const int v = sched::has_virtual_stages(kind) && !sched::is_v_shaped(kind) ? shape.num_stages / devices : 1;
  auto generated = sched::generate(kind, shape, std::max(1, v));
  if (!generated && optional) return std::optional<sched::Schedule>{};
  if (generated) generated = timed_schedule(kind, *generated, costs);
  if (!generated) return generated.error();
  return std::optional<sched::Schedule>{std::move(generated).value()};
}

}  // namespace

sched::Result<std::vector<HandWritten>> hand_written_families(int num_stages, int num_microbatches,
                                                              const CostModel& costs,
                                                              const std::vector<Bytes>& caps_bytes, bool recompute,
                                                              const std::vector<int>& placement) {
  std::vector<HandWritten> families;
  const sched::ScheduleShape shape{num_stages, num_microbatches,
                                   placement.empty() ? sched::identity_placement(num_stages) : placement};
  const std::vector<ScheduleKind> kinds = kinds_for(placement);
  const bool optional = kinds.front() != ScheduleKind::kGPipe;
  for (const bool with_r : {false, true}) {
    if (with_r && !recompute) break;
    for (const ScheduleKind kind : kinds) {
      const HandWritten named{kind, with_r, {}};
      auto generated = family(kind, shape, costs, optional);
      if (!generated) return sched::Error{fmt::format("{}: {}", named.label(), generated.error().message)};
      if (!*generated) continue;
      auto schedule =
          with_r ? sched::add_recompute(**generated) : sched::Result<sched::Schedule>{std::move(**generated)};
      if (!schedule) return sched::Error{fmt::format("{}: {}", named.label(), schedule.error().message)};
      auto judged = evaluate(std::move(schedule).value(), costs, caps_bytes);
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
