// Each candidate placement synthesized, the fastest that fits kept (placement_search.h).
#include "sim/synth/placement_search.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "sched/schedule.h"
#include "sched/virtual_stages.h"
#include "sched/zero_bubble.h"

namespace pipeworks::sim {
namespace {

std::string tried_text(const std::vector<PlacementTrial>& trials) {
  std::string out;
  for (const PlacementTrial& t : trials) out += fmt::format("; {}: {}", t.candidate.name, t.error);
  return out;
}

}  // namespace

std::vector<PlacementCandidate> candidate_placements(int num_stages, int num_devices) {
  std::vector<PlacementCandidate> out;
  if (num_devices < 1 || num_stages < num_devices || num_stages % num_devices != 0) return out;
  const int v = num_stages / num_devices;
  if (v == 1) out.push_back({"one per device", sched::identity_placement(num_stages)});
  if (v == 2) out.push_back({"V", sched::v_placement(num_stages)});
  if (v >= 2) {
    out.push_back({fmt::format("loop of {}", v), sched::looped_schedule({num_stages, 1, {}}, num_devices).placement});
  }
  return out;
}

sched::Result<PlacementSearch> synthesize_placements(const ModelSpec& model, const ClusterSpec& cluster,
                                                     SynthesisSetup setup, const SearchOptions& options,
                                                     int num_devices) {
  const std::vector<PlacementCandidate> candidates = candidate_placements(setup.num_stages, num_devices);
  if (candidates.empty()) {
    return sched::Error{fmt::format(
        "no placement of {} stages on {} devices to search: K must be D (one stage per device), 2D (a V) or a "
        "multiple of D (a loop)",
        setup.num_stages, num_devices)};
  }
  SearchOptions share = options;
  share.time_limit_s = options.time_limit_s / static_cast<double>(candidates.size());
  std::optional<PlacementSearch> best;
  std::vector<PlacementTrial> trials;
  for (const PlacementCandidate& candidate : candidates) {
    setup.placement = candidate.placement;
    PlacementTrial trial{candidate, 0, ""};
    auto built = problem_from_specs(model, cluster, setup, share);
    auto found = built ? synthesize(built->problem, share) : sched::Result<SynthesisResult>{built.error()};
    if (!found) {
      trial.error = found.error().message;
    } else {  // synthesize returns a schedule that fits or an error
      trial.step_ns = found->best.step_ns();
      if (!best || better(found->best, best->result.best)) best = PlacementSearch{*built, std::move(found).value()};
    }
    trials.push_back(std::move(trial));
  }
  if (!best) return sched::Error{"no placement gave a schedule that fits" + tried_text(trials)};
  best->chosen.inputs.placements_tried = std::move(trials);
  return std::move(best).value();
}

}  // namespace pipeworks::sim
