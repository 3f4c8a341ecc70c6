// Readable repr() for the module's value types that pybind11 would print as "<... object at 0x...>":
// each names its type and its key figures in the units the CLI prints them in.
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/pybind11.h>

#include "python/bindings.h"
#include "sched/generators.h"
#include "sched/timeline.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/plan/planner.h"
#include "sim/plan/sweep.h"
#include "sim/plan/sweep_table.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/units.h"

namespace py = pybind11;

namespace pipeworks::python {

namespace {

using sim::format_bytes;
using sim::format_duration;

// "1.00 ms + 20.00 us/sample", "1.00 ms", or "20.00 us/sample" (and the same for bytes).
template <class Format>
std::string per_sample_text(std::int64_t fixed, std::int64_t per_sample, Format format) {
  if (per_sample == 0) return format(fixed);
  const std::string scaled = format(per_sample) + "/sample";
  return fixed == 0 ? scaled : format(fixed) + " + " + scaled;
}

std::string scaled_text(const sim::ScaledDuration& d) {
  return per_sample_text(d.fixed_ns, d.per_sample_ns, [](std::int64_t ns) { return format_duration(ns); });
}

std::string bytes_text(const sim::ScaledBytes& b) {
  return per_sample_text(b.fixed_bytes, b.per_sample_bytes, [](std::int64_t n) { return format_bytes(n); });
}

std::string capacity_text(sim::Bytes bytes) { return bytes == 0 ? "unlimited" : format_bytes(bytes); }

// Sets `cls.__repr__` to `text` for the class registered under `name`.
template <class T, class Text>
void set_repr(py::module_& m, const char* name, Text text) {
  py::object cls = m.attr(name);
  cls.attr("__repr__") = py::cpp_function([text](const T& value) { return text(value); }, py::is_method(cls));
}

void spec_reprs(py::module_& m) {
  set_repr<sim::LayerSpec>(m, "LayerSpec", [](const sim::LayerSpec& l) {
    return fmt::format("<LayerSpec '{}' forward {}, backward {}{}, stash {}, params {}>", l.name,
                       scaled_text(l.forward), scaled_text(l.backward()),
                       l.backward_split ? fmt::format(" (I {}, W {})", scaled_text(l.backward_input),
                                                      scaled_text(l.backward_weight))
                                        : "",
                       bytes_text(l.stash_bytes), format_bytes(l.param_bytes));
  });
  set_repr<sim::DeviceSpec>(m, "DeviceSpec", [](const sim::DeviceSpec& d) {
    return fmt::format("<DeviceSpec memory {}, relative speed {}{}>", capacity_text(d.memory_bytes), d.relative_speed,
                       d.flops_per_s > 0 ? ", " + sim::format_flop_rate(d.flops_per_s) : "");
  });
  set_repr<sim::LinkSpec>(m, "LinkSpec", [](const sim::LinkSpec& l) {
    return fmt::format("<LinkSpec bandwidth {}, latency {}{}>", sim::format_bandwidth(l.bandwidth_bytes_per_s),
                       format_duration(l.latency_ns),
                       l.send_overhead_ns > 0 ? ", send overhead " + format_duration(l.send_overhead_ns) : "");
  });
  set_repr<sim::Link>(m, "Link", [](const sim::Link& l) {
    return fmt::format("<Link bandwidth {}, latency {}{}>", sim::format_bandwidth(l.bandwidth_bytes_per_s),
                       format_duration(l.latency_ns),
                       l.send_overhead_ns > 0 ? ", send overhead " + format_duration(l.send_overhead_ns) : "");
  });
  set_repr<sim::StageCost>(m, "StageCost", [](const sim::StageCost& c) {
    return fmt::format("<StageCost F {}, B {} (I {}, W {}), R {}, stash {}, params {}>", format_duration(c.forward_ns),
                       format_duration(c.backward_ns), format_duration(c.backward_input_ns),
                       format_duration(c.backward_weight_ns), format_duration(c.recompute_ns),
                       format_bytes(c.stash_bytes), format_bytes(c.param_bytes));
  });
  set_repr<sim::CostModel>(m, "CostModel", [](const sim::CostModel& c) {
    return fmt::format("<CostModel {} stages on {} devices, micro-batch size {}, {} comm, {} links>", c.stages.size(),
                       c.num_devices, c.microbatch_size, sim::comm_mode_name(c.comm_mode), c.links.size());
  });
}

void result_reprs(py::module_& m) {
  set_repr<sim::MemoryReport>(m, "MemoryReport", [](const sim::MemoryReport& r) {
    return fmt::format("<MemoryReport peak {} (activations {}) of {}, {}>", format_bytes(r.peak_bytes),
                       format_bytes(r.peak_activation_bytes), capacity_text(r.capacity_bytes),
                       r.fits ? "fits" : "does not fit");
  });
  set_repr<sim::DeviceResult>(m, "DeviceResult", [](const sim::DeviceResult& d) {
    return fmt::format("<DeviceResult device {} stages {} busy {}, bubble {:.1f}%, peak {}>", d.device,
                       fmt::join(d.stages, ","), format_duration(d.busy_ns), 100 * d.bubble_fraction,
                       format_bytes(d.memory.peak_bytes));
  });
  set_repr<sched::MemorySample>(m, "MemorySample", [](const sched::MemorySample& s) {
    return fmt::format("<MemorySample device {} at {}: {}>", s.device, format_duration(s.time_ns), format_bytes(s.bytes));
  });
  set_repr<sched::Flow>(m, "Flow", [](const sched::Flow& f) {
    return fmt::format("<Flow span {} -> span {}>", f.send_span, f.recv_span);
  });
  set_repr<sched::DeviceStats>(m, "DeviceStats", [](const sched::DeviceStats& d) {
    return fmt::format("<DeviceStats busy {}, idle {}, bubble {:.1f}%, peak {}>", format_duration(d.busy_ns),
                       format_duration(d.idle_ns), 100 * d.bubble_fraction, format_bytes(d.peak_bytes));
  });
  set_repr<sched::TimelineStats>(m, "TimelineStats", [](const sched::TimelineStats& s) {
    return fmt::format("<TimelineStats makespan {}, bubble {:.1f}%, {} devices>", format_duration(s.makespan_ns),
                       100 * s.bubble_fraction, s.devices.size());
  });
}

void sweep_reprs(py::module_& m) {
  set_repr<sim::SweepRow>(m, "SweepRow", [](const sim::SweepRow& r) {
    const sim::SweepConfig& c = r.config;
    const std::string config = fmt::format("{} stages, {} micro-batches of {}, {}, recompute {}", c.num_stages,
                                           c.num_microbatches, c.microbatch_size(), sched::schedule_kind_name(c.schedule),
                                           sim::recompute_name(c.recompute));
    if (!r.simulated) return fmt::format("<SweepRow {}: not simulated: {}>", config, r.note);
    return fmt::format("<SweepRow {}: step {}, {:.1f} samples/s, peak {}, {}>", config, format_duration(r.makespan_ns),
                       r.samples_per_s, format_bytes(r.peak_bytes), r.fits ? "fits" : "does not fit");
  });
  set_repr<sim::SweepResult>(m, "SweepResult", [](const sim::SweepResult& r) {
    std::size_t fitting = 0;
    for (const sim::SweepRow& row : r.rows) fitting += row.simulated && row.fits ? 1 : 0;
    return fmt::format("<SweepResult {} rows, {} fit>", r.rows.size(), fitting);
  });
  set_repr<sim::Plan>(m, "Plan", [](const sim::Plan& p) {
    if (!p.best) return fmt::format("<Plan: nothing fits among {} configurations>", p.sweep.rows.size());
    const sim::SweepRow& b = p.sweep.rows[*p.best];
    return fmt::format("<Plan best: {} stages, {} micro-batches, {}, recompute {}: step {} ({} configurations)>",
                       b.config.num_stages, b.config.num_microbatches, sched::schedule_kind_name(b.config.schedule),
                       sim::recompute_name(b.config.recompute), format_duration(b.makespan_ns), p.sweep.rows.size());
  });
}

}  // namespace

void bind_reprs(py::module_& m) {
  spec_reprs(m);
  result_reprs(m);
  sweep_reprs(m);
}

}  // namespace pipeworks::python
