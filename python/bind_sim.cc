// Python bindings for the simulator: simulate(schedule, cost_model) -> SimResult (attributes,
// to_dict(), the predicted Timeline), and the simulate command's JSON report and summary table.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "python/convert.h"
#include "python/field_columns.h"
#include "python/without_gil.h"
#include "sim/engine/closed_form_bubble.h"
#include "sim/engine/sim_result_fields.h"
#include "sim/engine/simulator.h"
#include "sim/report/sim_report.h"
#include "sim/spec/cluster_spec.h"

namespace py = pybind11;

namespace pipeworks::python {
namespace {

using sim::DeviceResult;
using sim::MemoryReport;
using sim::SimResult;

py::dict memory_dict(const MemoryReport& m) { return field_dict(sim::memory_report_fields(), m); }

// The device's fields, its stages, and its memory as a dict of its own.
py::dict device_dict(const DeviceResult& r) {
  py::dict d = field_dict(sim::device_result_fields(), r);
  d["stages"] = r.stages;
  d["memory"] = memory_dict(r.memory);
  return d;
}

// Every field of the result, then its devices; the timeline is left out (it has its own
// records()/columns()).
py::dict result_dict(const SimResult& r) {
  py::dict d = field_dict(sim::sim_result_fields(), r);
  py::list devices;
  for (const DeviceResult& dev : r.devices) devices.append(device_dict(dev));
  d["devices"] = devices;
  return d;
}

void bind_result_classes(py::module_& m) {
  py::class_<MemoryReport>(m, "MemoryReport", "Memory figures of one device after a simulated run.")
      .def_readonly("param_bytes", &MemoryReport::param_bytes)
      .def_readonly("grad_bytes", &MemoryReport::grad_bytes)
      .def_readonly("optimizer_bytes", &MemoryReport::optimizer_bytes)
      .def_readonly("peak_activation_bytes", &MemoryReport::peak_activation_bytes, "activations held at the peak")
      .def_readonly("peak_bytes", &MemoryReport::peak_bytes, "static + peak activations")
      .def_readonly("capacity_bytes", &MemoryReport::capacity_bytes, "0 = unknown / unlimited")
      .def_readonly("fits", &MemoryReport::fits)
      .def("to_dict", &memory_dict)
      .def_static("fields", [] { return field_units(sim::memory_report_fields()); },
                  "The fields of to_dict(), each with its unit: {'peak_bytes': 'bytes', ...}.");
  py::class_<DeviceResult>(m, "DeviceResult", "Per-device figures: stages placed on it, busy/idle time, bubble, memory.")
      .def_readonly("device", &DeviceResult::device)
      .def_readonly("stages", &DeviceResult::stages)
      .def_readonly("busy_ns", &DeviceResult::busy_ns)
      .def_readonly("idle_ns", &DeviceResult::idle_ns)
      .def_readonly("bubble_fraction", &DeviceResult::bubble_fraction)
      .def_readonly("collective_ns", &DeviceResult::collective_ns,
                    "its collectives' own time (UNSHARD, REDUCE_GRAD) on its collective lane")
      .def_readonly("optimizer_ns", &DeviceResult::optimizer_ns,
                    "its optimizer step and parameter all-gather after its program")
      .def_readonly("memory", &DeviceResult::memory)
      .def("to_dict", &device_dict)
      .def_static("fields", [] { return field_units(sim::device_result_fields()); },
                  "The fields of to_dict() besides stages and memory, each with its unit: {'busy_ns': 'ns', ...}.");
  py::class_<SimResult>(m, "SimResult",
                        "What simulate() predicts: the 'predicted' Timeline, makespan, bubble, throughput, and\n"
                        "per-device figures and memory. to_dict() gives every figure as plain Python values.")
      .def_readonly("timeline", &SimResult::timeline)
      .def_readonly("makespan_ns", &SimResult::makespan_ns)
      .def_readonly("step_ns", &SimResult::step_ns,
                    "the training step: the makespan, then each device's optimizer step after its last collective")
      .def_readonly("compute_end_ns", &SimResult::compute_end_ns, "the latest end of a compute action")
      .def_readonly("bubble_fraction", &SimResult::bubble_fraction, "idle compute time over devices x makespan")
      .def_readonly("throughput_samples_per_s", &SimResult::throughput_samples_per_s)
      .def_readonly("devices", &SimResult::devices)
      .def_readonly("fits", &SimResult::fits, "every device's peak within its capacity")
      .def_readonly("num_actions", &SimResult::num_actions)
      .def_readonly("num_transfers", &SimResult::num_transfers)
      .def_readonly("num_stage_level_actions", &SimResult::num_stage_level_actions,
                    "UNSHARD, RESHARD and REDUCE_GRAD actions, simulated as no-ops")
      .def_readonly("num_composites", &SimResult::num_composites,
                    "OVERLAP_F_B composites, simulated as their two sub-actions back to back")
      .def_readonly("num_microbatches", &SimResult::num_microbatches)
      .def_readonly("microbatch_size", &SimResult::microbatch_size)
      .def_property_readonly("comm_mode", [](const SimResult& r) { return std::string(sim::comm_mode_name(r.comm_mode)); })
      .def_property_readonly("peak_bytes", [](const SimResult& r) {
        sim::Bytes peak = 0;
        for (const DeviceResult& d : r.devices) peak = std::max(peak, d.memory.peak_bytes);
        return peak;
      }, "The largest peak over devices.")
      .def("to_dict", &result_dict)
      .def_static("fields", [] { return field_units(sim::sim_result_fields()); },
                  "The fields of to_dict() besides devices, each with its unit: {'makespan_ns': 'ns', ...}.")
      .def("__repr__", [](const SimResult& r) {
        return "<SimResult makespan_ns=" + std::to_string(r.makespan_ns) +
               " bubble_fraction=" + std::to_string(r.bubble_fraction) + ">";
      });
}

sim::ReportInputs report_inputs(const std::string& model, const std::string& cluster, const std::string& schedule,
                                int num_stages, int num_microbatches, int microbatch_size, bool recompute,
                                bool comm_lowered) {
  sim::ReportInputs in;
  in.model = model;
  in.cluster = cluster;
  in.schedule = schedule;
  in.num_stages = num_stages;
  in.num_microbatches = num_microbatches;
  in.microbatch_size = microbatch_size;
  in.recompute = recompute;
  in.comm_lowered = comm_lowered;
  // A name that is no kind (a file's): GPipe's closed form is the reference, as for `simulate`.
  if (auto kind = sched::parse_schedule_kind(schedule); kind.ok()) in.kind = *kind;
  return in;
}

}  // namespace

void bind_sim(py::module_& m) {
  bind_result_classes(m);
  m.def("simulate",
        [](const sched::Schedule& schedule, const sim::CostModel& model, bool build_timeline) {
          return without_gil([](const sched::Schedule& s, const sim::CostModel& c, bool timeline) {
            return unwrap(sim::simulate(s, c, sim::SimOptions{timeline}));
          }, schedule, model, build_timeline);
        },
        py::arg("schedule"), py::arg("cost_model"), py::arg("build_timeline") = true,
        "Discrete-event simulation of the schedule under the cost model (integer ns, deterministic).\n"
        "A schedule without SEND/RECV gets ideal communication; a lowered one pays every transfer.\n"
        "build_timeline=False skips the timeline (same figures, faster). Raises pipeworks.Error when\n"
        "the schedule and the cost model do not match or the schedule cannot progress.");
  m.def("gpipe_closed_form_bubble", &sim::gpipe_closed_form_bubble, py::arg("num_stages"), py::arg("num_microbatches"),
        "(K-1)/(M+K-1): GPipe's bubble with uniform stages and free communication.");
  m.def("closed_form_bubble",
        [](const std::string& schedule, int num_stages, int num_microbatches, int num_devices) -> std::optional<double> {
          const sched::ScheduleKind kind = unwrap(sched::parse_schedule_kind(schedule));
          const auto form = sim::closed_form_bubble(kind, num_stages, num_microbatches, num_devices);
          if (!form) return std::nullopt;
          return form->fraction();
        },
        py::arg("schedule"), py::arg("num_stages"), py::arg("num_microbatches"), py::arg("num_devices"),
        "The bubble a schedule kind has in closed form with uniform stages, free communication and\n"
        "F = I = W where the backward splits (what `simulate` prints beside its own); None where no\n"
        "closed form is known (dualpipe-v; zb-h1 with M < K; zb-h2 with M < 2K; zb-v with M < 2D;\n"
        "interleaved-zb with M < D). Raises pipeworks.Error for a name that is no schedule kind.");
  m.def("simulate_report_json",
        [](const SimResult& r, const std::string& model, const std::string& cluster, const std::string& schedule,
           int num_stages, int num_microbatches, int microbatch_size, bool recompute, bool comm_lowered) {
          return sim::report_json(r, report_inputs(model, cluster, schedule, num_stages, num_microbatches,
                                                   microbatch_size, recompute, comm_lowered));
        },
        py::arg("result"), py::kw_only(), py::arg("model") = "", py::arg("cluster") = "", py::arg("schedule") = "",
        py::arg("num_stages"), py::arg("num_microbatches"), py::arg("microbatch_size") = 1,
        py::arg("recompute") = false, py::arg("comm_lowered") = true,
        "The JSON report of `pipeworks simulate --json` (schema pipeworks.simulate_report/1) for a result;\n"
        "the keyword arguments are the inputs echoed in it.");
  m.def("simulate_summary_table",
        [](const SimResult& r, int num_stages, int num_microbatches, int microbatch_size) {
          return sim::summary_table(r, report_inputs("", "", "", num_stages, num_microbatches, microbatch_size, false, true));
        },
        py::arg("result"), py::kw_only(), py::arg("num_stages"), py::arg("num_microbatches"),
        py::arg("microbatch_size") = 1, "The aligned per-stage table `pipeworks simulate` prints.");
}

}  // namespace pipeworks::python
