// Unit-time list execution of a schedule (see unit_timing.h).
#include "sched/unit_timing.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/dependencies.h"

namespace pipeworks::sched {

Result<UnitTiming> unit_timing(const Schedule& schedule) {
  auto index = ActionIndex::build(schedule);
  if (!index) return index.error();
  constexpr std::int64_t kUnknown = std::numeric_limits<std::int64_t>::min();
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  UnitTiming timing;
  std::vector<std::vector<std::int64_t>> finish(num_devices);
  timing.start.resize(num_devices);
  for (std::size_t d = 0; d < num_devices; ++d) {
    const Program& program = schedule.programs[d];
    for (const Action& a : program) {
      if (!index->in_range(a)) {
        return Error{fmt::format("action {} on device {} is out of range ({} stages, {} micro-batches)",
                                 to_string(a), d, schedule.num_stages, schedule.num_microbatches)};
      }
    }
    finish[d].assign(program.size(), kUnknown);
    timing.start[d].assign(program.size(), 0);
  }
  // Finish step of an action that the schedule contains; kUnknown while it has not run.
  auto finish_of = [&](const Action& a) -> std::int64_t {
    auto loc = index->find(a);
    if (!loc) return -1;  // absent dependencies are treated as satisfied from the start
    return finish[static_cast<std::size_t>(loc->device)][static_cast<std::size_t>(loc->position)];
  };

  std::vector<std::size_t> next(num_devices, 0);
  std::vector<std::int64_t> device_free(num_devices, 0);
  std::size_t remaining = schedule.num_actions();
  while (remaining > 0) {
    bool progressed = false;
    for (std::size_t d = 0; d < num_devices; ++d) {
      const Program& program = schedule.programs[d];
      while (next[d] < program.size()) {
        const Action& a = program[next[d]];
        std::int64_t ready = device_free[d];
        bool blocked = false;
        for (const Action& dep : data_dependencies(a, *index, schedule.num_stages)) {
          const std::int64_t f = finish_of(dep);
          if (f == kUnknown) {
            blocked = true;
            break;
          }
          ready = std::max(ready, f);
        }
        if (blocked) break;
        const std::int64_t duration = is_compute(a.kind) ? 1 : 0;
        timing.start[d][next[d]] = ready;
        finish[d][next[d]] = ready + duration;
        device_free[d] = ready + duration;
        timing.num_steps = std::max(timing.num_steps, ready + duration);
        ++next[d];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) {
      std::string blocked;
      for (std::size_t d = 0; d < num_devices; ++d) {
        if (next[d] < schedule.programs[d].size()) {
          blocked += fmt::format("{}device {} waits at position {} ({})", blocked.empty() ? "" : "; ", d, next[d],
                                 to_string(schedule.programs[d][next[d]]));
        }
      }
      return Error{fmt::format("schedule cannot progress: {}", blocked)};
    }
  }
  return timing;
}

}  // namespace pipeworks::sched
