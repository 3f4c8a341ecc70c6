// What a placement (stage -> device) must be, stated once: every user of a placement -- the
// generators' resolve_placement, validate, lower_comm, the simulator's op table, the executor's
// checks -- asks here and words its error the same way.
//
//   placement [0, 1, 1, 0] over 2 device programs: fine (several stages may share a device)
//   placement [0, 1]       for 3 stages:            "placement names 2 stages but the schedule has 3"
//   placement [0, 5]       over 2 device programs:  "stage 1 is placed on device 5, outside 0..1"
//   placement [0, 2]       over 3 device programs:  "placement leaves device 1 without a stage (devices must be 0..2)"
#pragma once

#include <string>
#include <vector>

#include "sched/result.h"
#include "sched/schedule.h"

namespace pipeworks::sched {

struct PlacementProblem {
  enum class Rule {
    kLength,      // not one device per stage (reported alone: nothing else is checked)
    kOffDevices,  // a stage on a device outside 0..num_devices-1
    kIdleDevice,  // a device among 0..num_devices-1 that hosts no stage
  };
  Rule rule = Rule::kLength;
  int stage = -1;   // kOffDevices: the stage
  int device = -1;  // kOffDevices: where it is placed; kIdleDevice: the idle device
  std::string message;
};

// Every problem of `placement` as the placement of `num_stages` stages onto the device programs
// 0..num_devices-1, in stage order, then device order.
std::vector<PlacementProblem> placement_problems(const std::vector<int>& placement, int num_stages,
                                                 int num_devices);

// The schedule's placement names one of its device programs per stage: the first kLength or
// kOffDevices problem as an error. A device program that hosts no stage is accepted here (it
// runs nothing); validate reports it.
Status check_placement(const Schedule& schedule);

}  // namespace pipeworks::sched
