// The checks on a synthesis problem, its placement and the cap each device gets (synthesis_problem.h).
#include "sim/synth/synthesis_problem.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/limits.h"
#include "sched/placement.h"

namespace pipeworks::sim {
namespace {

// Ok when the cost model has the problem's stages on the devices its placement names: K devices
// where no placement is given (stage s on device s), else the placement's rule (sched/placement.h).
sched::Status check_placement(const SynthesisProblem& problem) {
  const CostModel& costs = problem.costs;
  if (problem.placement.empty()) {
    if (static_cast<int>(costs.stages.size()) == problem.num_stages && costs.num_devices == problem.num_stages) {
      return sched::Ok{};
    }
    return sched::Error{fmt::format("synthesis places one stage on each device: {} stages, but the cost model has {} "
                                    "stages on {} devices",
                                    problem.num_stages, costs.stages.size(), costs.num_devices)};
  }
  if (static_cast<int>(costs.stages.size()) != problem.num_stages) {
    return sched::Error{fmt::format("synthesis of {} stages, but the cost model has {} stages", problem.num_stages,
                                    costs.stages.size())};
  }
  const auto problems = sched::placement_problems(problem.placement, problem.num_stages, costs.num_devices);
  if (problems.empty()) return sched::Ok{};
  return sched::Error{fmt::format("placement {} on the cost model's {} devices: {}",
                                  fmt::join(problem.placement, ","), costs.num_devices, problems.front().message)};
}

}  // namespace

sched::Status check_search_options(const SearchOptions& options) {
  if (!std::isfinite(options.time_limit_s) || options.time_limit_s <= 0 || options.time_limit_s > kMaxTimeLimitS) {
    return sched::Error{fmt::format("the time limit must be above 0 and at most {} s, got {}", kMaxTimeLimitS,
                                    options.time_limit_s)};
  }
  if (options.max_evaluations < -1) {
    return sched::Error{fmt::format("the evaluations must be at least 0, got {}", options.max_evaluations)};
  }
  return sched::Ok{};
}

std::vector<int> problem_placement(const SynthesisProblem& problem) {
  return problem.placement.empty() ? sched::identity_placement(problem.num_stages) : problem.placement;
}

bool shares_devices(const std::vector<int>& placement) {
  std::vector<int> sorted = placement;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

sched::Status check_problem(const SynthesisProblem& problem, const SearchOptions& options) {
  if (auto size = sched::check_schedule_size(problem.num_stages, problem.num_microbatches); !size) return size;
  const CostModel& costs = problem.costs;
  if (auto placed = check_placement(problem); !placed) return placed;
  if (auto valid = check_cost_model(costs); !valid) return valid;
  if (problem.memory_cap_bytes <= 0) {
    return sched::Error{fmt::format("the memory cap must be positive, got {} bytes", problem.memory_cap_bytes)};
  }
  if (auto search = check_search_options(options); !search) return search;
  const double first_s = 5.0 * static_cast<double>(lowered_actions_estimate(problem.num_stages, problem.num_microbatches)) /
                         kEvaluatedActionsPerSecond;
  if (first_s > options.time_limit_s) {
    return sched::Error{fmt::format("{} stages x {} micro-batches: the first evaluations alone take about {:.1f} s, more "
                                    "than the time limit of {} s",
                                    problem.num_stages, problem.num_microbatches, first_s, options.time_limit_s)};
  }
  return sched::Ok{};
}

std::int64_t lowered_actions_estimate(int num_stages, int num_microbatches) {
  return (3 * std::int64_t{num_stages} + 4 * std::int64_t{std::max(0, num_stages - 1)}) * num_microbatches;
}

std::vector<Bytes> device_caps_bytes(const SynthesisProblem& problem) {
  std::vector<Bytes> caps(static_cast<std::size_t>(problem.costs.num_devices), problem.memory_cap_bytes);
  for (std::size_t d = 0; d < caps.size() && d < problem.costs.device_memory_bytes.size(); ++d) {
    const Bytes own = problem.costs.device_memory_bytes[d];
    if (own > 0) caps[d] = std::min(caps[d], own);
  }
  return caps;
}

}  // namespace pipeworks::sim
