// Stages per device of a Timeline, and their short names (see device_stages.h).
#include "viz/device_stages.h"

#include <algorithm>

#include <fmt/format.h>

namespace pipeworks::viz {

int DeviceStages::local_index(int device, int stage) const {
  if (device < 0 || device >= static_cast<int>(stages_of_device.size())) return 0;
  const std::vector<int>& stages = stages_of_device[static_cast<std::size_t>(device)];
  const auto it = std::lower_bound(stages.begin(), stages.end(), stage);
  return it != stages.end() && *it == stage ? static_cast<int>(it - stages.begin()) : 0;
}

bool DeviceStages::any_shared() const {
  return std::any_of(stages_of_device.begin(), stages_of_device.end(),
                     [](const std::vector<int>& stages) { return stages.size() > 1; });
}

DeviceStages device_stages(const sched::Timeline& timeline, int rows) {
  DeviceStages out;
  out.stages_of_device.resize(static_cast<std::size_t>(std::max(rows, 0)));
  for (const sched::Span& s : timeline.spans) {
    if (s.device < 0 || s.device >= rows || !sched::is_compute(s.action.kind)) continue;
    out.stages_of_device[static_cast<std::size_t>(s.device)].push_back(s.action.stage);
  }
  for (std::vector<int>& stages : out.stages_of_device) {
    std::sort(stages.begin(), stages.end());
    stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
  }
  return out;
}

std::string stage_list_text(const std::vector<int>& stages) {
  std::string text;
  for (std::size_t i = 0; i < stages.size();) {
    std::size_t j = i;
    while (j + 1 < stages.size() && stages[j + 1] == stages[j] + 1) ++j;
    const std::string run = j - i >= 2 ? fmt::format("{}-{}", stages[i], stages[j]) : std::to_string(stages[i]);
    text += (text.empty() ? "s" : ",") + run;
    if (j - i == 1) text += fmt::format(",{}", stages[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace pipeworks::viz
