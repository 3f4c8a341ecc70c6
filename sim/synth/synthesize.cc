// The search: cap -> limits, list rule over its settings and the hand-written families, local
// search, validation (synthesize.h).
#include "sim/synth/synthesize.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sched/passes.h"
#include "sched/validate.h"
#include "sim/synth/in_flight_limits.h"
#include "sim/synth/policies.h"

namespace pipeworks::sim {
namespace {

// "8,7,6", or the first 16 entries and ",..." for deeper pipelines.
std::string per_stage_text(const std::vector<int>& values) {
  constexpr std::size_t kShown = 16;
  if (values.size() <= kShown) return fmt::format("{}", fmt::join(values, ","));
  return fmt::format("{},...", fmt::join(values.begin(), values.begin() + kShown, ","));
}

// "list rule: in flight 8,7,...; W deferred at most 0,0,...".
std::string policy_text(const ListPolicy& p) {
  return fmt::format("list rule: in flight {}; W deferred at most {}", per_stage_text(p.in_flight_limit),
                     per_stage_text(p.max_deferred_weights));
}

// A schedule the local search starts from, and where it came from.
struct Start {
  Evaluation evaluation;
  std::string origin;
};

// The best hand-written family that fits, if any. A family that pairs actions into composites
// (dualpipe-v's overlapped F and B, sched/composite.h) starts the search without them, its pairs
// run back to back (the moves shift actions, which a composite's positions would not follow),
// re-evaluated, and only where it still fits.
std::optional<Start> best_family(const SynthesisProblem& problem, const SynthesisResult& out) {
  const HandWritten* best = best_fitting(out.hand_written);
  if (best == nullptr) return std::nullopt;
  Start start{best->evaluation, std::string(sched::schedule_kind_name(best->kind))};
  if (start.evaluation.schedule.composites.empty()) return start;
  sched::Schedule plain = start.evaluation.schedule;
  plain.composites.clear();
  auto judged = evaluate(std::move(plain), problem.costs, out.caps_bytes);
  if (!judged || !judged->fits) return std::nullopt;
  start.evaluation = std::move(judged).value();
  return start;
}

// What the list rule admits forwards against: nothing beyond the in-flight limits with stage s on
// device s, else the placement and each device's cap shared by its stages (device_memory.h).
DeviceMemory list_memory(const SynthesisProblem& problem, const std::vector<Bytes>& caps_bytes, bool recompute) {
  const std::vector<int> placement = problem_placement(problem);
  if (placement == sched::identity_placement(problem.num_stages)) return DeviceMemory{};
  return device_memory(problem.costs, caps_bytes, placement, recompute);
}

// The best list-rule schedule that fits over every setting of policies.h (on the plain limits
// where some micro-batch fits, then with an R before every backward on the re-materializing
// limits where those are searched); once the deadline has passed no further setting is tried
// (past the first that fits).
std::optional<Start> best_list_schedule(const std::vector<SynthStageTimes>& times, const SynthesisProblem& problem,
                                        std::chrono::steady_clock::time_point deadline, SynthesisResult& out) {
  std::optional<Start> best;
  for (const bool recompute : {false, true}) {
    const std::vector<int>& limits = recompute ? out.recompute_in_flight_limits : out.in_flight_limits;
    if (limits.empty()) continue;
    const DeviceMemory memory = list_memory(problem, out.caps_bytes, recompute);
    for (const ListPolicy& policy : list_policies(limits, problem.num_microbatches)) {
      if (best && std::chrono::steady_clock::now() >= deadline) {
        out.search.stopped_by_clock = true;
        return best;
      }
      auto schedule = list_schedule(times, problem.num_microbatches, policy, memory);
      if (schedule && recompute) schedule = sched::add_recompute(*schedule);
      if (!schedule) continue;
      auto judged = evaluate(std::move(schedule).value(), problem.costs, out.caps_bytes);
      ++out.list_schedules;
      if (!judged || !judged->fits || (best && !better(*judged, best->evaluation))) continue;
      best = Start{std::move(judged).value(), policy_text(policy) + (recompute ? "; re-materialized" : "")};
    }
  }
  return best;
}

// The starts of the local search, the better first: the best list-rule schedule and the best
// family that fits (a family with whole backwards B gives moves no W to place, so the list rule's
// split schedule is searched from as well, even where it is slower).
sched::Result<std::vector<Start>> starts(const std::vector<SynthStageTimes>& times, const SynthesisProblem& problem,
                                         std::chrono::steady_clock::time_point deadline, SynthesisResult& out) {
  std::vector<Start> found;
  for (auto start : {best_list_schedule(times, problem, deadline, out), best_family(problem, out)}) {
    if (start) found.push_back(std::move(*start));
  }
  if (found.empty()) {
    return sched::Error{"no list-rule setting and no hand-written family gave a schedule that fits the cap"};
  }
  if (found.size() == 2 && better(found[1].evaluation, found[0].evaluation)) std::swap(found[0], found[1]);
  if (found.size() == 2 && found[1].evaluation.schedule == found[0].evaluation.schedule) found.pop_back();
  return found;
}

// The local search's evaluations: what the time limit buys at kEvaluatedActionsPerSecond for
// schedules of this many lowered actions, less the evaluations already spent.
std::int64_t evaluation_budget(double time_limit_s, std::int64_t lowered_actions, std::int64_t spent) {
  const double per_evaluation = static_cast<double>(std::max<std::int64_t>(1, lowered_actions));
  const double total = std::floor(time_limit_s * kEvaluatedActionsPerSecond / per_evaluation);
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::min(total, 1e15)) - spent);
}

// Ok when the schedule, lowered as simulate lowers a file, passes sched::validate.
sched::Status check_valid(const sched::Schedule& schedule) {
  auto lowered = sched::lower_comm(schedule);
  if (!lowered) return lowered.error();
  const auto diagnostics = sched::validate(*lowered);
  if (diagnostics.empty()) return sched::Ok{};
  return sched::Error{fmt::format("the synthesized schedule is not valid: {}", diagnostics.front().message)};
}

// The local search from each start with an even share of the evaluations (the first start takes
// what does not divide), one generator throughout; the best result, the earlier start on ties.
Evaluation search_from(std::vector<Start> from, const SynthesisProblem& problem,
                       std::chrono::steady_clock::time_point deadline, std::uint64_t seed, SynthesisResult& out) {
  SearchRng rng(seed);
  const auto n = static_cast<std::int64_t>(from.size());
  std::optional<Evaluation> best;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t share = out.evaluation_budget / n + (i == 0 ? out.evaluation_budget % n : 0);
    LocalSearchStats stats;
    Evaluation found = local_search(std::move(from[static_cast<std::size_t>(i)].evaluation), problem.costs,
                                    out.caps_bytes, out.bound.step_ns, rng, SearchBudget{share, deadline},
                                    !out.recompute_in_flight_limits.empty(), stats);
    out.search.evaluations += stats.evaluations;
    out.search.improvements += stats.improvements;
    out.search.stopped_by_clock = out.search.stopped_by_clock || stats.stopped_by_clock;
    if (!best || better(found, *best)) {
      best = std::move(found);
      out.origin = from[static_cast<std::size_t>(i)].origin;
    }
  }
  return std::move(best).value();
}

// The in-flight limits of the result: the plain ones, and the re-materializing ones where they are
// searched: the options allow it and the cap holds fewer than M micro-batches on some stage. (A
// cap that holds no micro-batch plainly holds none re-materialized either: R keeps the stash from
// R to W beside the stage input.)
sched::Status set_limits(const SynthesisProblem& problem, const SearchOptions& options, SynthesisResult& out) {
  const int m = problem.num_microbatches;
  const std::vector<int> placement = problem_placement(problem);
  auto plain = in_flight_limits(problem.costs, out.caps_bytes, m, placement, false);
  if (!plain) return plain.error();
  out.in_flight_limits = std::move(plain).value();
  const auto& limits = out.in_flight_limits;
  if (!options.recompute || std::all_of(limits.begin(), limits.end(), [m](int limit) { return limit >= m; })) {
    return sched::Ok{};
  }
  auto with_r = in_flight_limits(problem.costs, out.caps_bytes, m, placement, true);
  if (with_r) out.recompute_in_flight_limits = std::move(with_r).value();
  return sched::Ok{};
}

}  // namespace

sched::Result<SynthesisResult> synthesize(const SynthesisProblem& problem, const SearchOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  if (auto ok = check_problem(problem, options); !ok) return ok.error();
  SynthesisResult out;
  out.caps_bytes = device_caps_bytes(problem);
  const std::vector<int> placement = problem_placement(problem);
  auto times = synth_stage_times(problem.costs, placement);
  if (!times) return times.error();
  if (auto limits = set_limits(problem, options, out); !limits) return limits.error();
  out.bound = step_lower_bound(*times, problem.num_microbatches, placement);
  auto families = hand_written_families(problem.num_stages, problem.num_microbatches, problem.costs, out.caps_bytes,
                                        !out.recompute_in_flight_limits.empty(), placement);
  if (!families) return families.error();
  out.hand_written = std::move(families).value();
  const auto deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                       std::chrono::duration<double>(options.time_limit_s));
  auto from = starts(*times, problem, deadline, out);
  if (!from) return from.error();
  const std::int64_t spent = out.list_schedules + static_cast<std::int64_t>(out.hand_written.size());
  out.evaluation_budget = options.max_evaluations >= 0
                              ? options.max_evaluations
                              : evaluation_budget(options.time_limit_s, from->front().evaluation.simulated.num_actions, spent);
  out.best = search_from(std::move(from).value(), problem, deadline, options.seed, out);
  if (auto valid = check_valid(out.best.schedule); !valid) return valid.error();
  return out;
}

}  // namespace pipeworks::sim
