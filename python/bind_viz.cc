// Python bindings for viz/: Chrome trace JSON, the SVG Gantt chart and the terminal grid of one
// or several Timelines (a prediction above its measurement).
#include <map>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "python/convert.h"
#include "python/without_gil.h"
#include "viz/chrome_trace.h"
#include "viz/svg_gantt.h"
#include "viz/terminal_grid.h"

namespace py = pybind11;

namespace pipeworks::python {
namespace {

using Timelines = std::vector<const sched::Timeline*>;
using Copies = std::vector<sched::Timeline>;

// Plain C++ (the GIL is released while it is built); pybind11 turns it into a dict afterwards.
std::map<std::string, std::size_t> counts_map(const viz::ChromeTraceCounts& c) {
  return {{"events", c.events},
          {"clipped_spans", c.clipped_spans},
          {"dropped_spans", c.dropped_spans},
          {"dropped_flows", c.dropped_flows}};
}

viz::SvgOptions svg_options(int width_px, int row_height_px, const std::string& title, bool show_comm, bool show_labels) {
  viz::SvgOptions o;
  o.width_px = width_px;
  o.row_height_px = row_height_px;
  o.title = title;
  o.show_comm = show_comm;
  o.show_labels = show_labels;
  return o;
}

constexpr const char* kSvgDoc =
    "A GPipe-paper style Gantt chart as self-contained SVG: one row per device, actions colored by\n"
    "kind, several timelines stacked on one time scale. width_px: image width; row_height_px: 0\n"
    "picks one from the device count; title: empty gives 'Pipeline schedule: <names>'.";

}  // namespace

void bind_viz(py::module_& m) {
  m.def("chrome_trace_json",
        [](const Timelines& timelines) {
          return without_gil([](const Copies& copies) { return viz::chrome_trace_json(pointers_to(copies)); },
                             timeline_copies(timelines));
        },
        py::arg("timelines"),
        "Chrome trace JSON (chrome://tracing, ui.perfetto.dev) of a list of Timelines, each rebased to 0.");
  m.def("write_chrome_trace",
        [](const std::string& path, const Timelines& timelines) {
          return without_gil([](const std::string& to, const Copies& copies) {
            viz::ChromeTraceCounts counts;
            unwrap_status(viz::write_chrome_trace(to, pointers_to(copies), &counts));
            return counts_map(counts);
          }, path, timeline_copies(timelines));
        },
        py::arg("path"), py::arg("timelines"),
        "Writes the Chrome trace of the Timelines to `path`; returns the event/repair counts as a dict.");
  m.def("svg_gantt",
        [](const Timelines& timelines, int width_px, int row_height_px, const std::string& title, bool show_comm,
           bool show_labels) {
          return without_gil([](const Copies& copies, const viz::SvgOptions& o) { return viz::svg_gantt(pointers_to(copies), o); },
                             timeline_copies(timelines), svg_options(width_px, row_height_px, title, show_comm, show_labels));
        },
        py::arg("timelines"), py::kw_only(), py::arg("width_px") = 1200, py::arg("row_height_px") = 0,
        py::arg("title") = "", py::arg("show_comm") = true, py::arg("show_labels") = true,
        kSvgDoc);
  m.def("write_svg",
        [](const std::string& path, const Timelines& timelines, int width_px, int row_height_px,
           const std::string& title, bool show_comm, bool show_labels) {
          without_gil([](const std::string& to, const Copies& copies, const viz::SvgOptions& o) {
            unwrap_status(viz::write_svg(to, pointers_to(copies), o));
          }, path, timeline_copies(timelines), svg_options(width_px, row_height_px, title, show_comm, show_labels));
        },
        py::arg("path"), py::arg("timelines"), py::kw_only(), py::arg("width_px") = 1200, py::arg("row_height_px") = 0,
        py::arg("title") = "", py::arg("show_comm") = true, py::arg("show_labels") = true,
        "Writes svg_gantt(...) to `path`.");
  m.def("terminal_grid",
        [](const sched::Timeline& timeline, int max_width) {
          return without_gil([](const sched::Timeline& copy, int width) { return viz::terminal_grid(copy, width); },
                             timeline, max_width);
        },
        py::arg("timeline"), py::arg("max_width") = 160,
        "The step x device picture of a Timeline's compute spans, with a footer giving the slot length.");
}

}  // namespace pipeworks::python
