// Python bindings for sched/: actions, schedules, the generators and passes, the unit-time grid,
// validation with its diagnostics, and schedule files (CSV / JSON).
#include <optional>
#include <string>
#include <vector>

#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "python/convert.h"
#include "python/without_gil.h"
#include "sched/diagnostic.h"
#include "sched/generators.h"
#include "sched/json_io.h"
#include "sched/passes.h"
#include "sched/stage_level_passes.h"
#include "sched/schedule_file.h"
#include "sched/text_grid.h"
#include "sched/validate.h"

namespace py = pybind11;

namespace pipeworks::python {
namespace {

using sched::Action;
using sched::ActionKind;
using sched::Diagnostic;
using sched::Schedule;

void bind_actions(py::module_& m) {
  py::enum_<ActionKind>(m, "ActionKind", "Kind of a schedule action (torch.distributed.pipelining's names).")
      .value("F", ActionKind::kForward, "forward")
      .value("B", ActionKind::kBackward, "full backward (input and weight gradients)")
      .value("I", ActionKind::kBackwardInput, "backward, input gradient only")
      .value("W", ActionKind::kBackwardWeight, "backward, weight gradient only")
      .value("R", ActionKind::kRecompute, "re-materialization of the forward before its backward")
      .value("SEND_F", ActionKind::kSendF, "send an activation to the next stage")
      .value("RECV_F", ActionKind::kRecvF, "receive this stage's input activation")
      .value("SEND_B", ActionKind::kSendB, "send an input gradient to the previous stage")
      .value("RECV_B", ActionKind::kRecvB, "receive the gradient of this stage's output")
      .value("UNSHARD", ActionKind::kUnshard, "gather the stage's sharded parameters (no micro-batch)")
      .value("RESHARD", ActionKind::kReshard, "free the stage's gathered parameters (no micro-batch)")
      .value("REDUCE_GRAD", ActionKind::kReduceGrad, "reduce the stage's gradients over its data-parallel group (no micro-batch)");

  py::class_<Action>(m, "Action", "One action of one stage on one micro-batch; prints as '2F0', '1SEND_F3'.")
      .def(py::init([](int stage, ActionKind kind, int microbatch) { return Action{stage, kind, microbatch}; }),
           py::arg("stage"), py::arg("kind"), py::arg("microbatch"))
      .def_readwrite("stage", &Action::stage)
      .def_readwrite("kind", &Action::kind)
      .def_readwrite("microbatch", &Action::microbatch)
      .def_property_readonly("kind_name", [](const Action& a) { return std::string(sched::kind_name(a.kind)); },
                             "'F', 'B', 'I', 'W', 'R', 'SEND_F', 'RECV_F', 'SEND_B', 'RECV_B', 'UNSHARD', 'RESHARD' or\n"
                             "'REDUCE_GRAD'.")
      .def("__str__", [](const Action& a) { return sched::to_string(a); })
      .def("__repr__", [](const Action& a) { return "Action('" + sched::to_string(a) + "')"; })
      .def("__hash__", [](const Action& a) { return py::hash(py::str(sched::to_string(a))); })
      .def(py::self == py::self)  // NOLINT(misc-redundant-expression)
      .def(py::self < py::self);  // NOLINT(misc-redundant-expression)
  m.def("parse_action", [](const std::string& token) { return unwrap(sched::parse_action(token)); },
        py::arg("token"), "Parses one action token strictly ('2F0'); raises pipeworks.Error with the column.");
}

void bind_schedule(py::module_& m) {
  py::class_<Schedule>(m, "Schedule",
                       "The schedule IR: K stages, M micro-batches, placement[stage] = device, and one ordered\n"
                       "program (list of Actions) per device. Attributes are copied in and out of Python.")
      .def(py::init<>())
      .def_readwrite("num_stages", &Schedule::num_stages)
      .def_readwrite("num_microbatches", &Schedule::num_microbatches)
      .def_property("placement", list_getter(&Schedule::placement), list_setter(&Schedule::placement), "placement[stage] = device (a copy)")
      .def_property("programs", list_getter(&Schedule::programs), list_setter(&Schedule::programs), "programs[device] = list of Actions (a copy)")
      .def_property_readonly("num_devices", &Schedule::num_devices)
      .def_property_readonly("composites", [](const Schedule& s) {
             std::vector<std::pair<int, int>> out;
             for (const sched::Composite& c : s.composites) out.emplace_back(c.device, c.position);
             return out;
           }, "Composite actions (0F3;3B1)OVERLAP_F_B, as (device, position) of the first of the two\n"
              "sub-actions that programs[device] holds in their place.")
      .def("has_comm", &Schedule::has_comm, "True when SEND/RECV actions are present (lowered).")
      .def("has_recompute", &Schedule::has_recompute, "True when any R action is present.")
      .def("num_actions", &Schedule::num_actions, "Total number of actions over all programs.")
      .def("program_strings", [](const Schedule& s) {
             std::vector<std::vector<std::string>> out;
             for (const auto& program : s.programs) {
               auto& row = out.emplace_back();
               for (const Action& a : program) row.push_back(sched::to_string(a));
             }
             return out;
           }, "The programs as lists of action strings, one list per device.")
      .def("to_json", &sched::to_json, "The schedule as 'pipeworks.schedule' JSON text.")
      .def("to_csv", [](const Schedule& s) { return sched::format_schedule(s, sched::ScheduleFormat::kCsv); },
           "The schedule as CSV in torch.distributed.pipelining's layout.")
      .def("__eq__", [](const Schedule& a, const Schedule& b) { return a == b; })
      .def("__repr__", [](const Schedule& s) {
        return "<Schedule K=" + std::to_string(s.num_stages) + " M=" + std::to_string(s.num_microbatches) +
               " devices=" + std::to_string(s.num_devices()) + " actions=" + std::to_string(s.num_actions()) + ">";
      });
}

// The generators and the unit-time picture.
void bind_generators(py::module_& m) {
  m.def("schedule_kinds", [] {
        std::vector<std::string> out;
        for (auto name : sched::schedule_kind_names()) out.emplace_back(name);
        return out;
      }, "Names of the schedule generators: ['gpipe', '1f1b', 'interleaved-1f1b', 'looped-bfs', 'zb-h1',\n"
         "'zb-h2', 'zb-v', 'dualpipe-v', 'interleaved-zb'].");
  m.def("generate",
        [](const std::string& kind, int num_stages, int num_microbatches, std::optional<std::vector<int>> placement,
           int virtual_stages) {
          const sched::ScheduleKind k = unwrap(sched::parse_schedule_kind(kind));
          const sched::ScheduleShape shape{num_stages, num_microbatches, placement.value_or(std::vector<int>{})};
          return unwrap(sched::generate(k, shape, virtual_stages));
        },
        py::arg("kind"), py::arg("num_stages"), py::arg("num_microbatches"), py::arg("placement") = py::none(),
        py::arg("virtual_stages") = 1, py::call_guard<py::gil_scoped_release>(),
        "Generates a compute-only schedule of a kind in schedule_kinds(). placement[stage] = device\n"
        "(default: stage i on device i; s mod num_stages/virtual_stages for 'interleaved-1f1b',\n"
        "'looped-bfs' and 'interleaved-zb', which take virtual_stages stages per device; the V\n"
        "placement, stage s on device min(s, num_stages-1-s), for 'zb-v' and 'dualpipe-v'). Raises\n"
        "pipeworks.Error on a bad shape or placement.");
  m.def("render_grid",
        [](const Schedule& s) { return without_gil([](const Schedule& c) { return unwrap(sched::render_grid(c)); }, s); },
        py::arg("schedule"),
        "The step x device picture of the schedule's unit-time execution ('t: 0 1 ...' / 'd0: F0 F1 ...').");
}

// The passes over a schedule (sched/passes.h, sched/stage_level_passes.h).
void bind_passes(py::module_& m) {
  m.def("add_recompute",
        [](const Schedule& s) { return without_gil([](const Schedule& c) { return unwrap(sched::add_recompute(c)); }, s); },
        py::arg("schedule"),
        "GPipe re-materialization: inserts R(s,m) before every backward of (s,m). Idempotent.");
  m.def("lower_comm",
        [](const Schedule& s) { return without_gil([](const Schedule& c) { return unwrap(sched::lower_comm(c)); }, s); },
        py::arg("schedule"),
        "Inserts SEND_*/RECV_* between stages on different devices, in a deadlock-free order.");
  m.def("strip_comm", &sched::strip_comm, py::arg("schedule"), "Drops every SEND/RECV action.");
  m.def("add_reduce_grad",
        [](const Schedule& s) { return without_gil([](const Schedule& c) { return unwrap(sched::add_reduce_grad(c)); }, s); },
        py::arg("schedule"),
        "Inserts REDUCE_GRAD(s) after the last B or W of each stage, as torch's _add_reduce_grad does\n"
        "(a compute-only schedule; before lower_comm).");
  m.def("add_unshard_reshard",
        [](const Schedule& s, int max_active) {
          return without_gil([max_active](const Schedule& c) { return unwrap(sched::add_unshard_reshard(c, max_active)); }, s);
        },
        py::arg("schedule"), py::arg("max_active_stages") = sched::kDefaultMaxActiveStages,
        "Inserts UNSHARD/RESHARD keeping the next max_active_stages stages of each device gathered, as\n"
        "torch's _add_unshard_reshard does (a compute-only schedule; before lower_comm).");
}

void bind_validation(py::module_& m) {
  py::class_<Diagnostic>(m, "Diagnostic",
                         "One validation problem: its kind ('wrong-count', 'deadlock', ...), the offending cell\n"
                         "(device, position; -1 when none), the stage concerned, a message and related cells.")
      .def_property_readonly("kind", [](const Diagnostic& d) { return std::string(sched::diagnostic_kind_name(d.kind)); })
      .def_readonly("device", &Diagnostic::device)
      .def_readonly("position", &Diagnostic::position)
      .def_readonly("stage", &Diagnostic::stage)
      .def_readonly("message", &Diagnostic::message)
      .def_property_readonly("related", [](const Diagnostic& d) {
        std::vector<std::pair<int, int>> out;
        for (const auto& at : d.related) out.emplace_back(at.device, at.position);
        return out;
      }, "Other cells involved, as (device, position) pairs.")
      .def("has_cell", &Diagnostic::has_cell)
      .def("__repr__", [](const Diagnostic& d) {
        return "<Diagnostic " + std::string(sched::diagnostic_kind_name(d.kind)) + ": " + d.message + ">";
      });

  m.def("validate",
        [](const Schedule& s, bool placement_inferred) {
          return without_gil([](const Schedule& c, bool inferred) { return sched::validate(c, sched::ValidateOptions{inferred}); },
                             s, placement_inferred);
        },
        py::arg("schedule"), py::arg("placement_inferred") = false,
        "Every problem of the schedule as a list of Diagnostics (empty: valid). Never raises.");
  m.def("render_diagnostic", &sched::render, py::arg("schedule"), py::arg("diagnostic"),
        "The program grid with the diagnostic's cell marked [1B0] and related cells <1F0>.");
}

void bind_files(py::module_& m) {
  m.def("parse_schedule",
        [](const std::string& text, const std::string& source_name) {
          return unwrap(sched::parse_schedule(text, source_name)).schedule;
        },
        py::arg("text"), py::arg("source_name") = "<text>",
        "Parses CSV or JSON schedule text (JSON when it starts with '{'); raises with file:row:col.");
  m.def("load_schedule", [](const std::string& path) { return unwrap(sched::load_schedule(path)).schedule; },
        py::arg("path"), "Loads a .csv or .json schedule file.");
  m.def("save_schedule", [](const Schedule& s, const std::string& path) { unwrap_status(sched::save_schedule(s, path)); },
        py::arg("schedule"), py::arg("path"), "Writes the schedule as CSV or JSON by the path's extension.");
}

}  // namespace

void bind_sched(py::module_& m) {
  bind_actions(m);
  bind_schedule(m);
  bind_generators(m);
  bind_passes(m);
  bind_validation(m);
  bind_files(m);
}

}  // namespace pipeworks::python
