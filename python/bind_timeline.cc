// Python bindings for sched/timeline.h: spans, memory samples, flows, the Timeline itself and its
// summary statistics, with records and numpy columns for pandas / matplotlib.
#include <string>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/bindings.h"
#include "python/columns.h"
#include "python/convert.h"
#include "sched/timeline.h"

namespace py = pybind11;

namespace pipeworks::python {
namespace {

using sched::Lane;
using sched::Span;
using sched::Timeline;

Lane parse_lane(const std::string& name) {
  for (Lane lane : {Lane::kCompute, Lane::kSend, Lane::kRecv, Lane::kCollective}) {
    if (sched::lane_name(lane) == name) return lane;
  }
  throw Error("unknown lane '" + name + "' (expected compute, send or recv)");
}

void bind_spans(py::module_& m) {
  py::class_<Span>(m, "Span", "One action placed on a device lane ('compute', 'send', 'recv') from start_ns to end_ns.")
      .def(py::init([](int device, const std::string& lane, const sched::Action& action, sched::Nanoseconds start_ns,
                       sched::Nanoseconds end_ns) { return Span{device, parse_lane(lane), action, start_ns, end_ns}; }),
           py::arg("device"), py::arg("lane"), py::arg("action"), py::arg("start_ns"), py::arg("end_ns"))
      .def_readwrite("device", &Span::device)
      .def_property("lane", [](const Span& s) { return std::string(sched::lane_name(s.lane)); },
                    [](Span& s, const std::string& name) { s.lane = parse_lane(name); })
      .def_readwrite("action", &Span::action)
      .def_readwrite("start_ns", &Span::start_ns)
      .def_readwrite("end_ns", &Span::end_ns)
      .def_property_readonly("duration_ns", &Span::duration_ns)
      .def("__repr__", [](const Span& s) {
        return "<Span d" + std::to_string(s.device) + " " + std::string(sched::lane_name(s.lane)) + " " +
               sched::to_string(s.action) + " [" + std::to_string(s.start_ns) + ", " + std::to_string(s.end_ns) + ") ns>";
      });

  py::class_<sched::MemorySample>(m, "MemorySample", "Bytes held on a device from time_ns on (a step function).")
      .def(py::init([](int device, sched::Nanoseconds time_ns, sched::Bytes bytes) {
             return sched::MemorySample{device, time_ns, bytes};
           }), py::arg("device"), py::arg("time_ns"), py::arg("bytes"))
      .def_readwrite("device", &sched::MemorySample::device)
      .def_readwrite("time_ns", &sched::MemorySample::time_ns)
      .def_readwrite("bytes", &sched::MemorySample::bytes);

  py::class_<sched::Flow>(m, "Flow", "A transfer: indices into Timeline.spans of a SEND span and its RECV span.")
      .def(py::init([](std::size_t send_span, std::size_t recv_span) { return sched::Flow{send_span, recv_span}; }),
           py::arg("send_span"), py::arg("recv_span"))
      .def_readwrite("send_span", &sched::Flow::send_span)
      .def_readwrite("recv_span", &sched::Flow::recv_span);
}

void bind_stats(py::module_& m) {
  py::class_<sched::DeviceStats>(m, "DeviceStats", "Per-device figures of a Timeline.")
      .def_readonly("busy_ns", &sched::DeviceStats::busy_ns, "union of compute-lane spans")
      .def_readonly("idle_ns", &sched::DeviceStats::idle_ns, "makespan - busy")
      .def_readonly("bubble_fraction", &sched::DeviceStats::bubble_fraction)
      .def_readonly("peak_bytes", &sched::DeviceStats::peak_bytes, "max over memory samples");
  py::class_<sched::TimelineStats>(m, "TimelineStats", "Summary figures every producer and picture agrees on.")
      .def_readonly("start_ns", &sched::TimelineStats::start_ns, "earliest span start")
      .def_readonly("makespan_ns", &sched::TimelineStats::makespan_ns, "latest end - earliest start")
      .def_readonly("bubble_fraction", &sched::TimelineStats::bubble_fraction,
                    "idle compute time over devices x makespan")
      .def_readonly("devices", &sched::TimelineStats::devices);
}

void bind_timeline_class(py::module_& m) {
  py::class_<Timeline>(m, "Timeline",
                       "A schedule with times: spans (device, lane, action, start, end), memory samples and\n"
                       "send->recv flows. List attributes are copied in and out of Python.")
      .def(py::init([](const std::string& name, int num_devices, int num_stages, int num_microbatches) {
             Timeline t;
             t.name = name;
             t.num_devices = num_devices;
             t.num_stages = num_stages;
             t.num_microbatches = num_microbatches;
             return t;
           }), py::arg("name") = "", py::arg("num_devices") = 0, py::arg("num_stages") = 0,
           py::arg("num_microbatches") = 0)
      .def_readwrite("name", &Timeline::name)
      .def_readwrite("num_devices", &Timeline::num_devices)
      .def_readwrite("num_stages", &Timeline::num_stages)
      .def_readwrite("num_microbatches", &Timeline::num_microbatches)
      .def_property("spans", list_getter(&Timeline::spans), list_setter(&Timeline::spans))
      .def_property("memory", list_getter(&Timeline::memory), list_setter(&Timeline::memory))
      .def_property("flows", list_getter(&Timeline::flows), list_setter(&Timeline::flows))
      .def("stats", &sched::compute_stats, "Makespan, bubble fraction and per-device busy/idle/peak figures.")
      .def("records", &span_records,
           "The spans as a list of dicts: device, lane, action, stage, kind, microbatch, start_ns, end_ns,\n"
           "duration_ns.")
      .def("columns", &span_columns,
           "The spans as a dict of equal-length columns (numpy arrays / lists of str); pass it to\n"
           "pandas.DataFrame.")
      .def("memory_columns", &memory_columns, "The memory samples as columns: device, time_ns, bytes.")
      .def("__eq__", [](const Timeline& a, const Timeline& b) { return a == b; })
      .def("__repr__", [](const Timeline& t) {
        return "<Timeline '" + t.name + "' devices=" + std::to_string(t.num_devices) +
               " spans=" + std::to_string(t.spans.size()) + ">";
      });
}

}  // namespace

void bind_timeline(py::module_& m) {
  bind_spans(m);
  bind_stats(m);
  bind_timeline_class(m);
}

}  // namespace pipeworks::python
