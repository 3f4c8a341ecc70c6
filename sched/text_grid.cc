// Renders the unit-time step x device grid of a schedule.
#include "sched/text_grid.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/unit_timing.h"

namespace pipeworks::sched {

Result<std::string> render_grid(const Schedule& schedule) {
  auto timing = unit_timing(schedule);
  if (!timing) return timing.error();
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  std::vector<int> stages_on(num_devices, 0);
  for (int device : schedule.placement) {
    if (device >= 0 && static_cast<std::size_t>(device) < num_devices) ++stages_on[static_cast<std::size_t>(device)];
  }
  const auto steps = static_cast<std::size_t>(timing->num_steps);
  std::vector<std::vector<std::string>> cells(num_devices, std::vector<std::string>(steps, "."));
  std::size_t width = std::max<std::size_t>(1, fmt::formatted_size("{}", steps == 0 ? 0 : steps - 1));
  for (std::size_t d = 0; d < num_devices; ++d) {
    const Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      const Action& a = program[p];
      if (!is_compute(a.kind)) continue;
      std::string label = stages_on[d] > 1 ? to_string(a) : fmt::format("{}{}", kind_name(a.kind), a.microbatch);
      width = std::max(width, label.size());
      cells[d][static_cast<std::size_t>(timing->start[d][p])] = std::move(label);
    }
  }
  const std::size_t head = fmt::formatted_size("d{}:", num_devices == 0 ? 0 : num_devices - 1);
  std::string out = fmt::format("{:<{}}", "t:", head);
  for (std::size_t t = 0; t < steps; ++t) out += fmt::format(" {:>{}}", t, width);
  out += '\n';
  for (std::size_t d = 0; d < num_devices; ++d) {
    out += fmt::format("{:<{}}", fmt::format("d{}:", d), head);
    for (std::size_t t = 0; t < steps; ++t) out += fmt::format(" {:>{}}", cells[d][t], width);
    out += '\n';
  }
  return out;
}

}  // namespace pipeworks::sched
