// Compute slots with a time slice (see core_slots.h).
#include "sim/engine/core_slots.h"

namespace pipeworks::sim {

CoreSlots::CoreSlots(std::size_t groups, int slots, std::size_t devices, sched::Nanoseconds slice_ns)
    : per_group_(static_cast<std::size_t>(slots)),
      slice_ns_(slice_ns),
      slots_(groups * static_cast<std::size_t>(slots)),
      held_(devices, -1),
      waiting_(groups) {}

// The holder goes on while its slice lasts, or while nobody waits for the slot.
bool CoreSlots::keeps(const Slot& slot, sched::Nanoseconds at, std::size_t group) const {
  return waiting_[group].empty() || at - slot.taken_ns < slice_ns_;
}

CoreSlots::Claim CoreSlots::claim(std::size_t group, std::int32_t device, std::int32_t op, sched::Nanoseconds ready) {
  const std::int32_t held = held_[static_cast<std::size_t>(device)];
  if (held >= 0) {
    if (keeps(slots_[static_cast<std::size_t>(held)], ready, group)) return {held, -1};
    waiting_[group].push_back(op);
    vacate(held);
    return {-1, held};
  }
  for (std::size_t s = group * per_group_; s < (group + 1) * per_group_; ++s) {
    if (slots_[s].holder < 0) return {static_cast<std::int32_t>(s), -1};
  }
  waiting_[group].push_back(op);
  return {};
}

void CoreSlots::occupy(std::int32_t slot, std::int32_t device, std::int32_t op, sched::Nanoseconds start) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  if (s.holder != device) {
    if (s.holder >= 0) held_[static_cast<std::size_t>(s.holder)] = -1;
    s.holder = device;
    s.taken_ns = start;
    held_[static_cast<std::size_t>(device)] = slot;
  }
  s.op = op;
}

std::int32_t CoreSlots::release(std::int32_t device, std::int32_t op, sched::Nanoseconds at, bool continuing) {
  const std::int32_t held = held_[static_cast<std::size_t>(device)];
  if (held < 0 || slots_[static_cast<std::size_t>(held)].op != op) return -1;
  Slot& s = slots_[static_cast<std::size_t>(held)];
  s.op = -1;
  if (continuing && slice_ns_ > 0 && keeps(s, at, static_cast<std::size_t>(held) / per_group_)) return -1;
  vacate(held);
  return held;
}

std::int32_t CoreSlots::next_waiter(std::int32_t slot) {
  std::deque<std::int32_t>& waiting = waiting_[static_cast<std::size_t>(slot) / per_group_];
  if (waiting.empty()) return -1;
  const std::int32_t op = waiting.front();
  waiting.pop_front();
  return op;
}

void CoreSlots::vacate(std::int32_t slot) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  if (s.holder >= 0) held_[static_cast<std::size_t>(s.holder)] = -1;
  s = Slot{};
}

}  // namespace pipeworks::sim
