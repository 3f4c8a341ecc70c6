// What `pipeworks profile` and `pipeworks run --predict` print about a profile (see profile_report.h).
#include "cli/profile_report.h"

#include <fmt/format.h>

#include "hw/exec/device_kind.h"
#include "sim/spec/units.h"

namespace pipeworks::cli {

namespace {

// Per layer and size the timings with their spread; I and W are the backward split as
// zero-bubble schedules run it (profiler.h).
std::string layer_table(const hw::Profile& profile) {
  std::string out = fmt::format("{:<12}{:>6}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}\n", "layer", "size",
                                "forward", "fwd spread", "no graph", "backward", "bwd spread", "bwd I", "bwd W", "stash");
  for (const hw::LayerProfile& l : profile.layers) {
    for (const hw::LayerSample& s : l.samples) {
      out += fmt::format("{:<12}{:>6}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}\n", l.name, s.microbatch_size,
                         sim::format_duration(s.forward.median_ns),
                         sim::format_duration(s.forward.max_ns - s.forward.min_ns),
                         sim::format_duration(s.forward_no_grad.median_ns), sim::format_duration(s.backward.median_ns),
                         sim::format_duration(s.backward.max_ns - s.backward.min_ns),
                         sim::format_duration(s.backward_input.median_ns),
                         sim::format_duration(s.backward_weight.median_ns), sim::format_bytes(s.stash_bytes));
    }
  }
  return out;
}

// The hand-off, dispatch and contention figures of a measured machine.
std::string machine_summary(const hw::MachineProfile& m) {
  std::string out = fmt::format("hand-off ({}): latency {}, bandwidth {}\n",
                                m.device == hw::DeviceKind::kCpu
                                    ? std::string("in-process transport")
                                    : fmt::format("{} copy streams", hw::device_kind_name(m.device)),
                                sim::format_duration(m.handoff_latency_ns),
                                sim::format_bandwidth(m.handoff_bandwidth_bytes_per_s));
  for (const hw::HandoffSample& h : m.handoff) {
    out += fmt::format("  {:>10}: median {} [{} .. {}]\n", sim::format_bytes(h.bytes),
                       sim::format_duration(h.latency.median_ns), sim::format_duration(h.latency.min_ns),
                       sim::format_duration(h.latency.max_ns));
  }
  // Each step's overhead is its makespan less the profiled layer costs, per action: a step whose
  // layers ran faster than profiled comes out below zero, which the range shows as measured.
  out += fmt::format("executor dispatch overhead: {} per compute action (median step; steps ranged {} to {})\n",
                     sim::format_duration(m.dispatch_overhead_ns), sim::format_duration(m.dispatch_samples.min_ns),
                     sim::format_duration(m.dispatch_samples.max_ns));
  if (m.workers > 1) {
    out += fmt::format("contention: {} workers at once take {:.3f}x the time alone ({} vs {} for F+B of the model's "
                       "stages, one per worker)\n",
                       m.workers, m.contention_factor, sim::format_duration(m.contention_concurrent.median_ns),
                       sim::format_duration(m.contention_alone.median_ns));
  }
  if (m.device == hw::DeviceKind::kCpu) {
    out += fmt::format("idle slowdown: F+B after {} ms asleep takes {:.3f}x its time back to back ({} vs {}, the "
                       "first stage's)\n",
                       hw::kIdleSlowdownAfter.count(), m.idle_slowdown, sim::format_duration(m.idle_after.median_ns),
                       sim::format_duration(m.idle_hot.median_ns));
  }
  return out;
}

}  // namespace

std::string profile_summary(const hw::Profile& profile) {
  std::string out = layer_table(profile);
  out += profile.options.measure_machine
             ? machine_summary(profile.machine)
             : "machine: not measured (--no-machine): no hand-off, dispatch or contention figures\n";
  for (const std::string& note : profile.notes) out += "note: " + note + "\n";
  return out;
}

}  // namespace pipeworks::cli
