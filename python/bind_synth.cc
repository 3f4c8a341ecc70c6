// Python bindings for schedule synthesis: synthesize(model, cluster, stages=, microbatches=,
// memory_cap_bytes=) -> SynthesisResult, the question `pipeworks synthesize` asks (built by
// sim/synth/problem_from_specs.h) with the same answer, report and error messages.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "python/convert.h"
#include "python/without_gil.h"
#include "sim/spec/units.h"
#include "sim/synth/placement_search.h"
#include "sim/synth/problem_from_specs.h"
#include "sim/synth/synthesize.h"

namespace py = pybind11;

namespace pipeworks::python {
namespace {

// What synthesize() returns: the search's result and the inputs its report names.
struct Synthesized {
  sim::SynthesisResult result;
  sim::SynthesisInputs inputs;
};

std::vector<sim::Bytes> peaks_bytes(const Synthesized& s) { return s.result.best.peak_bytes; }

py::list placements_tried(const Synthesized& s) {
  py::list out;
  for (const sim::PlacementTrial& t : s.inputs.placements_tried) {
    const bool found = t.error.empty();
    out.append(py::dict(py::arg("name") = t.candidate.name, py::arg("placement") = t.candidate.placement,
                        py::arg("step_ns") = found ? py::object(py::int_(t.step_ns)) : py::object(py::none()),
                        py::arg("error") = found ? py::object(py::none()) : py::object(py::str(t.error))));
  }
  return out;
}

py::list hand_written_list(const Synthesized& s) {
  py::list out;
  for (const sim::HandWritten& h : s.result.hand_written) {
    out.append(py::dict(py::arg("schedule") = std::string(sched::schedule_kind_name(h.kind)),
                        py::arg("recompute") = h.recompute, py::arg("label") = h.label(), py::arg("step_ns") = h.evaluation.step_ns(),
                        py::arg("bubble_fraction") = h.evaluation.simulated.bubble_fraction,
                        py::arg("largest_peak_bytes") = sim::largest_peak_bytes(h.evaluation),
                        py::arg("fits") = h.evaluation.fits));
  }
  return out;
}

py::object best_hand_written(const Synthesized& s) {
  const sim::HandWritten* best = sim::best_fitting(s.result.hand_written);
  if (best == nullptr) return py::none();
  return py::str(best->label());
}

// On the setup's placement, or with `search_devices` > 0 over the placements of its stages on
// that many devices (sim/synth/placement_search.h).
Synthesized run_synthesis(const sim::ModelSpec& model, const sim::ClusterSpec& cluster, const sim::SynthesisSetup& setup,
                          const sim::SearchOptions& options, int search_devices) {
  if (search_devices > 0) {
    sim::PlacementSearch found = unwrap(sim::synthesize_placements(model, cluster, setup, options, search_devices));
    return Synthesized{std::move(found.result), std::move(found.chosen.inputs)};
  }
  sim::SpecSynthesis built = unwrap(sim::problem_from_specs(model, cluster, setup, options));
  return Synthesized{unwrap(sim::synthesize(built.problem, options)), built.inputs};
}

void bind_result(py::module_& m) {
  py::class_<Synthesized>(m, "SynthesisResult",
                          "What synthesize() found: the schedule with the shortest simulated step that fits the cap,\n"
                          "its figures against the lower bound, and the hand-written families under the same cap.")
      .def_property_readonly("schedule", [](const Synthesized& s) { return s.result.best.schedule; },
                             "The synthesized Schedule (compute only, as save_schedule writes it).")
      .def_property_readonly("simulated", [](const Synthesized& s) { return s.result.best.simulated; },
                             "Its SimResult (comm-lowered, without a timeline).")
      .def_property_readonly("step_ns", [](const Synthesized& s) { return s.result.best.step_ns(); })
      .def_property_readonly("makespan_ns", [](const Synthesized& s) { return s.result.best.simulated.makespan_ns; })
      .def_property_readonly("bubble_fraction", [](const Synthesized& s) { return s.result.best.simulated.bubble_fraction; })
      .def_property_readonly("lower_bound_ns", [](const Synthesized& s) { return s.result.bound.step_ns; },
                             "No schedule of these stages and micro-batches can have a shorter step.")
      .def_property_readonly("gap_to_lower_bound", [](const Synthesized& s) { return s.result.gap(); },
                             "(step - bound) / bound.")
      .def_property_readonly("peak_bytes", &peaks_bytes, "Per device, what a run of the schedule holds at most: parameters, optimizer state, gradients, "
                             "activations and the executor's temporaries.")
      .def_property_readonly("caps_bytes", [](const Synthesized& s) { return s.result.caps_bytes; },
                             "Per device, the cap it must fit: the memory cap or the device's own smaller memory.")
      .def_property_readonly("in_flight_limits", [](const Synthesized& s) { return s.result.in_flight_limits; },
                             "Per stage, the micro-batches in flight the cap allows.")
      .def_property_readonly("recompute_in_flight_limits",
                             [](const Synthesized& s) { return s.result.recompute_in_flight_limits; },
                             "Per stage, the micro-batches in flight the cap allows re-materializing; empty where R\n"
                             "is not searched.")
      .def_property_readonly("recomputed_backwards",
                             [](const Synthesized& s) { return sim::recomputed_backwards(s.result.best.schedule); },
                             "R actions in the schedule.")
      .def_property_readonly("fits", [](const Synthesized& s) { return s.result.best.fits; })
      .def_property_readonly("hand_written", &hand_written_list,
                             "gpipe, 1f1b, zb-h1 and zb-h2 (or the placement's families: interleaved, zb-v,\n"
                             "dualpipe-v) under the same cap (then each with R where R is searched), one dict each: schedule, recompute, label, step_ns, bubble_fraction,\n"
                             "largest_peak_bytes, fits.")
      .def_property_readonly("best_hand_written", &best_hand_written, "The label of the fastest family that fits ('1f1b', '1f1b + recompute'), or None.")
      .def_property_readonly("origin", [](const Synthesized& s) { return s.result.origin; },
                             "The start the answer was searched from ('list rule: ...' or a family).")
      .def_property_readonly("evaluations", [](const Synthesized& s) { return s.result.search.evaluations; })
      .def_property_readonly("evaluation_budget", [](const Synthesized& s) { return s.result.evaluation_budget; })
      .def_property_readonly("stopped_by_clock", [](const Synthesized& s) { return s.result.search.stopped_by_clock; },
                             "The time limit stopped the search before its evaluations: another run may differ.")
      .def_property_readonly("microbatch_size", [](const Synthesized& s) { return s.inputs.microbatch_size; })
      .def_property_readonly("placements_tried", &placements_tried,
                             "With search_placement: per placement tried, a dict of name, placement, step_ns (None\n"
                             "where nothing fit) and error (None where something did); else empty.")
      .def("to_json", [](const Synthesized& s) { return sim::synthesis_report_json(s.result, s.inputs); },
           "The report as `pipeworks synthesize --json` writes it (schema pipeworks.synthesis_report/1).")
      .def("__repr__", [](const Synthesized& s) {
        return "<SynthesisResult " + std::to_string(s.result.best.schedule.num_stages) + " stages, " +
               std::to_string(s.result.best.schedule.num_microbatches) + " micro-batches: step " +
               sim::format_duration(s.result.best.step_ns()) + ", " + sim::format_percent(s.result.gap()) +
               " above the bound>";
      });
}

}  // namespace

void bind_synth(py::module_& m) {
  bind_result(m);
  m.def("synthesize",
        [](const sim::ModelSpec& model, const sim::ClusterSpec& cluster, int stages, int microbatches,
           sim::Bytes memory_cap_bytes, std::optional<int> batch, const std::string& optimizer, double time_limit,
           std::uint64_t seed, std::int64_t max_evaluations, bool recompute, const std::vector<int>& placement,
           int search_placement) {
          if (search_placement < 0 || (search_placement > 0 && !placement.empty())) {
            throw py::value_error("search_placement: a number of devices > 0, and no placement beside it");
          }
          const sim::SynthesisSetup setup{stages, microbatches, batch, unwrap(sim::parse_optimizer(optimizer)),
                                          memory_cap_bytes, {}, placement};
          return without_gil(&run_synthesis, model, cluster, setup,
                             sim::SearchOptions{time_limit, seed, max_evaluations, recompute}, search_placement);
        },
        py::arg("model"), py::arg("cluster"), py::kw_only(), py::arg("stages"), py::arg("microbatches"),
        py::arg("memory_cap_bytes"), py::arg("batch") = py::none(), py::arg("optimizer") = "adam",
        py::arg("time_limit") = 10.0, py::arg("seed") = 1, py::arg("max_evaluations") = -1, py::arg("recompute") = true,
        py::arg("placement") = std::vector<int>{}, py::arg("search_placement") = 0,
        "The schedule of `stages` stages (stage s on device s, a uniform partition) and `microbatches`\n"
        "micro-batches with the shortest simulated step whose peak fits memory_cap_bytes on every device,\n"
        "as `pipeworks synthesize` searches it (docs/schedules.md). batch: samples per mini-batch, a multiple\n"
        "of microbatches (default 4 per micro-batch); time_limit: seconds the search may take; the same seed\n"
        "gives the same schedule unless the time limit stops the search first (stopped_by_clock).\n"
        "max_evaluations: stop the local search after that many evaluations (-1: what the time limit buys).\n"
        "recompute: search re-materialization (R) too where the cap holds fewer than M micro-batches.\n"
        "placement: the device of each stage, as `synthesize --placement` (e.g. [0, 1, 1, 0], a V: several\n"
        "stages share a device and its cap); empty: stage s on device s. search_placement: a number of\n"
        "devices D; the placements of the stages on D devices (one per device, a V, a loop) are searched\n"
        "as `synthesize --search-placement D`, the fastest that fits kept (placements_tried lists them).");
}

}  // namespace pipeworks::python
