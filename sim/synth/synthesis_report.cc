// The synthesis report as JSON (synthesis_report.h).
#include "sim/synth/synthesis_report.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sim/synth/device_memory.h"

namespace pipeworks::sim {
namespace {

// Entry `stage` of per-stage limits, null where there is none (R not searched).
nlohmann::json limit_json(const std::vector<int>& limits, int stage) {
  const auto s = static_cast<std::size_t>(stage);
  return s < limits.size() ? nlohmann::json(limits[s]) : nlohmann::json();
}

nlohmann::json devices_json(const SynthesisResult& r) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceResult& d : r.best.simulated.devices) {
    const auto i = static_cast<std::size_t>(d.device);
    const Bytes cap = i < r.caps_bytes.size() ? r.caps_bytes[i] : 0;
    const std::vector<int> stages = stages_on_device(r.best.schedule.placement, d.device);
    // A device of one stage: that stage's limits; one of several: null (the per-stage lists say).
    const int stage = stages.size() == 1 ? stages.front() : -1;
    devices.push_back({{"device", d.device},
                       {"stages", stages},
                       {"peak_bytes", peak_on(r.best, d.device)},
                       {"cap_bytes", cap},
                       {"fits", peak_on(r.best, d.device) <= cap},
                       {"in_flight_limit", limit_json(r.in_flight_limits, stage)},
                       {"in_flight_limit_recompute", limit_json(r.recompute_in_flight_limits, stage)},
                       {"bubble_fraction", d.bubble_fraction}});
  }
  return devices;
}

nlohmann::json families_json(const SynthesisResult& r) {
  nlohmann::json families = nlohmann::json::array();
  for (const HandWritten& h : r.hand_written) {
    families.push_back({{"schedule", std::string(sched::schedule_kind_name(h.kind))},
                        {"recompute", h.recompute},
                        {"step_ns", h.evaluation.step_ns()},
                        {"bubble_fraction", h.evaluation.simulated.bubble_fraction},
                        {"largest_peak_bytes", largest_peak_bytes(h.evaluation)},
                        {"fits", h.evaluation.fits}});
  }
  return families;
}

// Null unless the placement was searched: each candidate's name, placement, step (null where it
// found nothing) and error.
nlohmann::json placements_json(const std::vector<PlacementTrial>& trials) {
  if (trials.empty()) return nlohmann::json();
  nlohmann::json out = nlohmann::json::array();
  for (const PlacementTrial& t : trials) {
    out.push_back({{"name", t.candidate.name},
                   {"placement", t.candidate.placement},
                   {"step_ns", t.error.empty() ? nlohmann::json(t.step_ns) : nlohmann::json()},
                   {"error", t.error.empty() ? nlohmann::json() : nlohmann::json(t.error)}});
  }
  return out;
}

}  // namespace

std::int64_t recomputed_backwards(const sched::Schedule& schedule) {
  std::int64_t count = 0;
  for (const sched::Program& program : schedule.programs) {
    count += std::count_if(program.begin(), program.end(),
                           [](const sched::Action& a) { return a.kind == sched::ActionKind::kRecompute; });
  }
  return count;
}

Bytes largest_peak_bytes(const Evaluation& evaluation) {
  const std::vector<Bytes>& peaks = evaluation.peak_bytes;
  return peaks.empty() ? 0 : *std::max_element(peaks.begin(), peaks.end());
}

std::string synthesis_report_json(const SynthesisResult& r, const SynthesisInputs& in) {
  const HandWritten* best = best_fitting(r.hand_written);
  nlohmann::json j = {
      {"schema", "pipeworks.synthesis_report/1"},
      {"model", in.model},
      {"cluster", in.cluster},
      {"num_stages", r.best.schedule.num_stages},
      {"num_microbatches", r.best.schedule.num_microbatches},
      {"placement", r.best.schedule.placement},
      {"placements_tried", placements_json(in.placements_tried)},
      {"in_flight_limits", r.in_flight_limits},
      {"in_flight_limits_recompute",
       r.recompute_in_flight_limits.empty() ? nlohmann::json() : nlohmann::json(r.recompute_in_flight_limits)},
      {"microbatch_size", in.microbatch_size},
      {"step_ns", r.best.step_ns()},
      {"makespan_ns", r.best.simulated.makespan_ns},
      {"bubble_fraction", r.best.simulated.bubble_fraction},
      {"lower_bound_ns", r.bound.step_ns},
      {"lower_bound_device", r.bound.device},
      {"lower_bound_is_chain", r.bound.chain},
      {"lower_bound_is_drain", r.bound.drain},
      {"gap_to_lower_bound", r.gap()},
      {"devices", devices_json(r)},
      {"hand_written", families_json(r)},
      {"recomputed_backwards", recomputed_backwards(r.best.schedule)},
      {"best_hand_written", best == nullptr ? nlohmann::json() : nlohmann::json(best->label())},
      {"search",
       {{"start", r.origin},
        {"list_schedules", r.list_schedules},
        {"evaluations", r.search.evaluations},
        {"evaluation_budget", r.evaluation_budget},
        {"improvements", r.search.improvements},
        {"stopped_by_clock", r.search.stopped_by_clock},
        {"time_limit_s", in.time_limit_s},
        {"seed", in.seed}}}};
  return j.dump(2) + "\n";
}

}  // namespace pipeworks::sim
