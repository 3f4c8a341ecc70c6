// Properties of a single diagnostic (diagnostic_checks.h).
#include "tests/fuzz/diagnostic_checks.h"

#include <fmt/format.h>

#include "tests/fuzz/fuzz_check.h"

namespace pipeworks::fuzz {
namespace {

bool inside(const sched::Schedule& schedule, int device, int position) {
  return device >= 0 && device < schedule.num_devices() && position >= 0 &&
         static_cast<std::size_t>(position) < schedule.programs[static_cast<std::size_t>(device)].size();
}

}  // namespace

void check_diagnostic(const sched::Schedule& schedule, const sched::Diagnostic& d) {
  const auto describe = [&] {
    return fmt::format("[{}] d{}:{} stage {}: {}", sched::diagnostic_kind_name(d.kind), d.device, d.position,
                       d.stage, d.message);
  };
  require(!d.message.empty(), "a diagnostic has a message", describe);
  if (d.device >= 0 || d.position >= 0) {
    require(inside(schedule, d.device, d.position) || (d.position < 0 && d.device < schedule.num_devices()),
            "a diagnostic's cell lies inside the programs", describe);
  }
  for (const sched::Location& at : d.related) {
    require(inside(schedule, at.device, at.position), "a diagnostic's related cells lie inside the programs",
            describe);
  }
  require(!sched::render(schedule, d).empty(), "a diagnostic renders", describe);
}

}  // namespace pipeworks::fuzz
