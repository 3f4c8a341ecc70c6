// The `_pipeworks` extension module: registers the error type and every binding file. The
// public package `pipeworks` (pipeworks/__init__.py) re-exports it with Python helpers.
#include <pybind11/pybind11.h>

#include "python/bindings.h"
#include "python/convert.h"

namespace pipeworks::python {

std::string error_text(const sched::Error& error) {
  if (!error.column) return error.message;
  return error.message + " (column " + std::to_string(*error.column) + ")";
}

void bind_errors(pybind11::module_& m) {
  auto error = pybind11::register_exception<Error>(m, "Error", PyExc_ValueError);
  error.doc() =
      "Raised when a pipeworks call fails: a bad schedule shape, an unparsable spec or action, a\n"
      "schedule the simulator cannot run, an unwritable file. A ValueError; str() is the message.";
}

}  // namespace pipeworks::python

PYBIND11_MODULE(_pipeworks, m) {
  m.doc() =
      "pipeworks: describe, simulate, plan and draw pipeline-parallel training schedules (GPipe, 1F1B,\n"
      "interleaved, zero-bubble and V-shaped), with data and tensor parallelism beside the pipeline.\n\n"
      "Times are integer nanoseconds (*_ns), memory integer bytes (*_bytes). Functions that fail\n"
      "raise pipeworks.Error (a ValueError) with the project's located error message.";
  pipeworks::python::bind_errors(m);
  pipeworks::python::bind_sched(m);
  pipeworks::python::bind_timeline(m);
  pipeworks::python::bind_specs(m);
  pipeworks::python::bind_sim(m);
  pipeworks::python::bind_sweep(m);
  pipeworks::python::bind_synth(m);
  pipeworks::python::bind_viz(m);
  pipeworks::python::bind_reprs(m);
}
