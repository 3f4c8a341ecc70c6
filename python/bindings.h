// The pieces of the `_pipeworks` extension, one per project folder; module.cc calls them in
// order (sched first: sim and viz signatures use its types).
#pragma once

#include <pybind11/pybind11.h>

namespace pipeworks::python {

void bind_errors(pybind11::module_& m);
void bind_sched(pybind11::module_& m);
void bind_timeline(pybind11::module_& m);
void bind_specs(pybind11::module_& m);  // calls bind_spec_classes first
void bind_spec_classes(pybind11::module_& m);
void bind_sim(pybind11::module_& m);
void bind_sweep(pybind11::module_& m);
void bind_synth(pybind11::module_& m);
void bind_viz(pybind11::module_& m);
void bind_reprs(pybind11::module_& m);  // after every class is bound

}  // namespace pipeworks::python
