// The text `pipeworks synthesize` prints (synthesis_printing.h).
#include "cli/synthesis_printing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/spec/units.h"
#include "sim/synth/device_memory.h"

namespace pipeworks::cli {
namespace {

// Stage i's in-flight limits, "8" or "2 (7 with R)" where re-materialization is searched.
std::string stage_in_flight_text(const sim::SynthesisResult& r, std::size_t i) {
  if (r.recompute_in_flight_limits.empty()) return std::to_string(r.in_flight_limits.at(i));
  return fmt::format("{} ({} with R)", r.in_flight_limits.at(i), r.recompute_in_flight_limits.at(i));
}

// Device d's: its stage's, or "s0: 8, s7: 1" for the stages it shares.
std::string in_flight_text(const sim::SynthesisResult& r, int device) {
  const std::vector<int> stages = sim::stages_on_device(r.best.schedule.placement, device);
  if (stages.size() == 1) return stage_in_flight_text(r, static_cast<std::size_t>(stages.front()));
  std::string out;
  for (const int s : stages) {
    out += fmt::format("{}s{}: {}", out.empty() ? "" : ", ", s, stage_in_flight_text(r, static_cast<std::size_t>(s)));
  }
  return out;
}

// "K=8 stages (one per device)", or "K=8 stages on 4 devices (placement 0,1,2,3,3,2,1,0)".
std::string stages_text(const sched::Schedule& schedule) {
  if (!sim::shares_devices(schedule.placement)) return fmt::format("K={} stages (one per device)", schedule.num_stages);
  return fmt::format("K={} stages on {} devices (placement {})", schedule.num_stages, schedule.num_devices(),
                     fmt::join(schedule.placement, ","));
}

std::string devices_text(const sim::SynthesisResult& r) {
  std::string out = fmt::format("  {:>6}  {:>12}  {:>12}  {:>14}  {}\n", "device", "peak", "cap", "in flight", "fits");
  for (const sim::DeviceResult& d : r.best.simulated.devices) {
    const auto i = static_cast<std::size_t>(d.device);
    const sim::Bytes peak = sim::peak_on(r.best, d.device);
    out += fmt::format("  {:>6}  {:>12}  {:>12}  {:>14}  {}\n", d.device, sim::format_bytes(peak),
                       sim::format_bytes(r.caps_bytes.at(i)), in_flight_text(r, d.device),
                       peak <= r.caps_bytes.at(i) ? "yes" : "NO");
  }
  return out;
}

std::string families_text(const sim::SynthesisResult& r) {
  const sim::HandWritten* best = sim::best_fitting(r.hand_written);
  std::string out = fmt::format("  {:<28}  {:>12}  {:>7}  {:>12}  {}\n", "schedule", "step", "bubble", "largest peak",
                                "fits the cap");
  for (const sim::HandWritten& h : r.hand_written) {
    out += fmt::format("  {:<28}  {:>12}  {:>7}  {:>12}  {}{}\n", h.label(),
                       sim::format_duration(h.evaluation.step_ns()),
                       sim::format_percent(h.evaluation.simulated.bubble_fraction),
                       sim::format_bytes(sim::largest_peak_bytes(h.evaluation)), h.evaluation.fits ? "yes" : "no",
                       &h == best ? "  <- best under the cap" : "");
  }
  if (best == nullptr) return out + "best hand-written under the cap: none fits\n";
  const double faster = 1.0 - static_cast<double>(r.best.step_ns()) / static_cast<double>(best->evaluation.step_ns());
  return out + fmt::format("best hand-written under the cap: {}, {} (synthesized: {} shorter)\n",
                           best->label(), sim::format_duration(best->evaluation.step_ns()),
                           sim::format_percent(faster));
}

std::string search_text(const sim::SynthesisResult& r, const sim::SynthesisInputs& in) {
  return fmt::format("search          start: {}\n"
                     "                {} list-rule settings, then {} of {} local-search evaluations, {} improvements "
                     "(seed {}, time limit {} s){}\n",
                     r.origin, r.list_schedules, r.search.evaluations, r.evaluation_budget, r.search.improvements,
                     in.seed, in.time_limit_s,
                     r.search.stopped_by_clock ? "; stopped by the time limit: another run may differ" : "");
}

}  // namespace

std::string synthesis_summary(const sim::SynthesisResult& r, const sim::SynthesisInputs& in) {
  const sim::SimResult& s = r.best.simulated;
  std::string out = fmt::format("{} on {}: synthesized schedule, {}, M={} micro-batches of {}\n\n", in.model,
                                in.cluster, stages_text(r.best.schedule), r.best.schedule.num_microbatches,
                                in.microbatch_size);
  out += fmt::format("step            {}\n", sim::format_duration(s.step_ns));
  out += fmt::format("bubble          {}\n", sim::format_percent(s.bubble_fraction));
  if (const std::int64_t r_count = sim::recomputed_backwards(r.best.schedule); r_count > 0) {
    out += fmt::format("re-materialized {} of {} backwards (an R before each)\n", r_count,
                       static_cast<std::int64_t>(r.best.schedule.num_stages) * r.best.schedule.num_microbatches);
  }
  out += fmt::format("lower bound     {} ({})\n", sim::format_duration(r.bound.step_ns),
                     r.bound.chain   ? std::string("the last micro-batch's way down every stage and back, then device 0's W")
                     : r.bound.drain ? fmt::format("device {}: earliest start + its forwards and backwards, then the last "
                                                   "one's way back to device 0", r.bound.device)
                                     : fmt::format("device {}: earliest start + its work + its optimizer step", r.bound.device));
  out += fmt::format("gap to bound    {}\n\n", sim::format_percent(r.gap()));
  out += "memory against the cap\n" + devices_text(r) + "\n";
  out += sim::shares_devices(r.best.schedule.placement) ? "hand-written families on this placement, same costs and cap\n"
                                                        : "hand-written families, one stage per device, same costs and cap\n";
  out += families_text(r) + "\n";
  return out + search_text(r, in);
}

std::string placement_trials_text(const std::vector<sim::PlacementTrial>& trials) {
  std::string out;
  for (const sim::PlacementTrial& t : trials) {
    out += fmt::format("placement {} ({}): {}\n", t.candidate.name, fmt::join(t.candidate.placement, ","),
                       t.error.empty() ? "step " + sim::format_duration(t.step_ns) : t.error);
  }
  return out;
}

}  // namespace pipeworks::cli
