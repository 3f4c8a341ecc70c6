// Calls that release the GIL work on copies. pybind11 hands a bound function references to the
// C++ objects inside the Python arguments; while the GIL is released another Python thread may
// change those objects (assign a Schedule's programs, a CostModel's stages, a Timeline's spans),
// freeing what the call is reading. So a call copies its objects while it holds the GIL and
// releases it only for the work on the copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "python/convert.h"
#include "sched/timeline.h"

namespace pipeworks::python {

// fn(copies...) with the GIL released; the arguments are copied (by value) before, GIL held.
template <class F, class... Copies>
auto without_gil(const F& fn, Copies... copies) {
  const pybind11::gil_scoped_release release;
  return fn(copies...);
}

// Copies of the Timelines a Python list refers to (viz takes pointers); None in it is an error.
inline std::vector<sched::Timeline> timeline_copies(const std::vector<const sched::Timeline*>& timelines) {
  std::vector<sched::Timeline> out;
  out.reserve(timelines.size());
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    if (timelines[i] == nullptr) throw Error("timelines[" + std::to_string(i) + "] is None, not a Timeline");
    out.push_back(*timelines[i]);
  }
  return out;
}

inline std::vector<const sched::Timeline*> pointers_to(const std::vector<sched::Timeline>& timelines) {
  std::vector<const sched::Timeline*> out;
  out.reserve(timelines.size());
  for (const sched::Timeline& t : timelines) out.push_back(&t);
  return out;
}

}  // namespace pipeworks::python
