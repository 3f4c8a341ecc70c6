// Table-shaped results for pandas: dicts of equal-length columns (numpy arrays for numbers,
// lists of str for text), so `pandas.DataFrame(columns)` needs no Python loop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "sched/timeline.h"

namespace pipeworks::python {

// A numpy array holding a copy of `values`.
template <class T>
pybind11::array_t<T> to_array(const std::vector<T>& values) {
  pybind11::array_t<T> out(static_cast<pybind11::ssize_t>(values.size()));
  T* data = out.mutable_data();
  for (std::size_t i = 0; i < values.size(); ++i) data[i] = values[i];
  return out;
}

// Spans of a timeline: device, lane, action, stage, kind, microbatch, start_ns, end_ns,
// duration_ns -- one entry per span, in the timeline's order.
pybind11::dict span_columns(const sched::Timeline& timeline);
// The same spans as a list of dicts (one record per span).
pybind11::list span_records(const sched::Timeline& timeline);
// Memory samples: device, time_ns, bytes.
pybind11::dict memory_columns(const sched::Timeline& timeline);

}  // namespace pipeworks::python
