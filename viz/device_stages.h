// Which pipeline stages each device of a Timeline runs, read off its compute spans: the pictures
// name a device's stages in its row label and mark the spans of a device's later stages, so
// that virtual stages (interleaved, looped BFS, ZB-V, DualPipeV) are told apart on one row.
//
//   device 0 runs stages 0 and 7 (ZB-V, 8 stages on 4 devices):  stages_of_device[0] = {0, 7}
//   local index of stage 7 on device 0: 1 (drawn hatched)           row label "d0 s0,7"
#pragma once

#include <string>
#include <vector>

#include "sched/timeline.h"

namespace pipeworks::viz {

struct DeviceStages {
  std::vector<std::vector<int>> stages_of_device;  // per device row, sorted, unique
  // The stage's position among its device's stages (0 = the device's first), or 0 if unknown.
  int local_index(int device, int stage) const;
  // True when some device runs two or more stages.
  bool any_shared() const;
};

// From the compute spans of devices 0..rows-1 (spans outside them are ignored).
DeviceStages device_stages(const sched::Timeline& timeline, int rows);

// "s3" for one stage, "s0,7" for several, runs of three or more contiguous stages as "s0-3";
// empty for none.
std::string stage_list_text(const std::vector<int>& stages);

}  // namespace pipeworks::viz
