// Workers that share a CPU node's cores: at most `slots` of a group's devices compute at once,
// the others wait for a slot (the simulator serialises them rather than slowing them, as an OS
// does with compute actions shorter than its time slice). A device that takes a slot holds it
// for its slice: while its next action is ready when its last one ends, it keeps the slot even
// when others wait, until the slice is over; then, or when it must wait for data, the slot goes
// to the device that has waited longest. Two devices, one slot, three actions of 10 each, d1's
// first ready at 5:
//
//   slice 0:    d0 |A0|  |A1|  |A2|         the slot changes hands at every action's end
//               d1    |B0|  |B1|  |B2|
//   slice 25:   d0 |A0|A1|A2|               d0 keeps it from 0 until the first end after 25;
//               d1          |B0|B1|B2|      d1 then holds it from 30
//
// With a slice above 0, a slot's holder that may keep it after an action's end (its next action
// is ready without waiting for data, and its slice lasts or nobody waits) keeps it idle until
// that action is ready. The engine calls claim() when an action is ready, release() at each action's end (after
// the claims of that time), and hands a slot either returns to next_waiter().
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "sched/timeline.h"

namespace pipeworks::sim {

class CoreSlots {
 public:
  CoreSlots() = default;
  // `groups` groups of `slots` slots each, all free; devices 0 .. devices-1.
  CoreSlots(std::size_t groups, int slots, std::size_t devices, sched::Nanoseconds slice_ns);

  struct Claim {
    std::int32_t start_on = -1;  // the slot the action starts on at once; -1: it waits
    std::int32_t yielded = -1;   // a slot its device gave up (its slice is over), to hand over
    friend bool operator==(const Claim&, const Claim&) = default;
  };
  // Action `op` of `device` (of `group`) is ready at `ready`: it starts on the slot its device
  // holds (if its slice lasts or nobody waits) or on a free one, else it joins the waiters.
  Claim claim(std::size_t group, std::int32_t device, std::int32_t op, sched::Nanoseconds ready);
  // Action `op` of `device` took `slot` at `start` (from claim or next_waiter).
  void occupy(std::int32_t slot, std::int32_t device, std::int32_t op, sched::Nanoseconds start);
  // Action `op` of `device` ended at `at`; `continuing`: its device's next action is ready then
  // without waiting for data. Returns the slot to hand over, or -1 (kept, or a later action of
  // the device already runs on it).
  std::int32_t release(std::int32_t device, std::int32_t op, sched::Nanoseconds at, bool continuing);
  // The longest waiter of the slot's group, removed from the waiters, to occupy it; -1: none
  // waits and the slot is free.
  std::int32_t next_waiter(std::int32_t slot);

 private:
  struct Slot {
    std::int32_t holder = -1;  // device; -1 free
    std::int32_t op = -1;      // the action on it; -1 none (free, or kept by its holder)
    sched::Nanoseconds taken_ns = 0;  // when its holder took it: its slice runs from then
  };
  bool keeps(const Slot& slot, sched::Nanoseconds at, std::size_t group) const;
  void vacate(std::int32_t slot);

  std::size_t per_group_ = 0;
  sched::Nanoseconds slice_ns_ = 0;
  std::vector<Slot> slots_;                      // per group, its slots
  std::vector<std::int32_t> held_;               // per device: the slot it holds, -1 none
  std::vector<std::deque<std::int32_t>> waiting_;  // per group: waiting actions, longest first
};

}  // namespace pipeworks::sim
