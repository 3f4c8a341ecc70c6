// Why a schedule cannot progress, in words: each device's blocked op and what it waits for (or,
// when every program ran, the transfer that never found its partner). The engine's error text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/schedule.h"
#include "sim/engine/op_table.h"

namespace pipeworks::sim {

// Where the engine stopped: per device its cursor (op id) and the op it waits for (-1 none), and
// per op whether it ended.
struct StuckState {
  const std::vector<std::int32_t>& cursor;
  const std::vector<std::int32_t>& waiting_on;
  std::vector<bool> ended;
};

// "device 0 blocked at position 3 (1F0) waits for its partner 0SEND_F0 on device 1; ..."
std::string stuck_message(const StuckState& state, const OpTable& table, const sched::Schedule& schedule);

}  // namespace pipeworks::sim
