// Timeline spans and memory samples as columns and records for pandas and matplotlib.
#include "python/columns.h"

#include <string>

#include "sched/action.h"

namespace py = pybind11;

namespace pipeworks::python {

py::dict span_columns(const sched::Timeline& timeline) {
  const std::size_t n = timeline.spans.size();
  std::vector<int> device(n), stage(n), microbatch(n);
  std::vector<std::int64_t> start(n), end(n), duration(n);
  py::list lane(n), action(n), kind(n);
  for (std::size_t i = 0; i < n; ++i) {
    const sched::Span& s = timeline.spans[i];
    device[i] = s.device;
    stage[i] = s.action.stage;
    microbatch[i] = s.action.microbatch;
    start[i] = s.start_ns;
    end[i] = s.end_ns;
    duration[i] = s.duration_ns();
    lane[i] = py::str(std::string(sched::lane_name(s.lane)));
    action[i] = py::str(sched::to_string(s.action));
    kind[i] = py::str(std::string(sched::kind_name(s.action.kind)));
  }
  py::dict out;
  out["device"] = to_array(device);
  out["lane"] = lane;
  out["action"] = action;
  out["stage"] = to_array(stage);
  out["kind"] = kind;
  out["microbatch"] = to_array(microbatch);
  out["start_ns"] = to_array(start);
  out["end_ns"] = to_array(end);
  out["duration_ns"] = to_array(duration);
  return out;
}

py::list span_records(const sched::Timeline& timeline) {
  py::list out;
  for (const sched::Span& s : timeline.spans) {
    py::dict r;
    r["device"] = s.device;
    r["lane"] = std::string(sched::lane_name(s.lane));
    r["action"] = sched::to_string(s.action);
    r["stage"] = s.action.stage;
    r["kind"] = std::string(sched::kind_name(s.action.kind));
    r["microbatch"] = s.action.microbatch;
    r["start_ns"] = s.start_ns;
    r["end_ns"] = s.end_ns;
    r["duration_ns"] = s.duration_ns();
    out.append(r);
  }
  return out;
}

py::dict memory_columns(const sched::Timeline& timeline) {
  const std::size_t n = timeline.memory.size();
  std::vector<int> device(n);
  std::vector<std::int64_t> time(n), bytes(n);
  for (std::size_t i = 0; i < n; ++i) {
    device[i] = timeline.memory[i].device;
    time[i] = timeline.memory[i].time_ns;
    bytes[i] = timeline.memory[i].bytes;
  }
  py::dict out;
  out["device"] = to_array(device);
  out["time_ns"] = to_array(time);
  out["bytes"] = to_array(bytes);
  return out;
}

}  // namespace pipeworks::python
