// Test hook for fault trials: PIPEWORKS_TEST_DIE_AT=stage,KIND,microbatch (e.g. "1,B,2",
// "0,SEND_F,3") makes the rank that runs that action _exit(3) when it starts it -- a killed
// process, no error handling, no goodbye -- so the other ranks' timeouts and error paths are
// exercised. Compute actions die inside the stage (an identity layer, or its gradient hook for
// B); SEND/RECV die in a transport wrapper before the transfer. With data-parallel replicas only
// replica 0's rank of that device dies.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "hw/dist/distributed_env.h"
#include "hw/exec/transport.h"
#include "hw/model/stage_cell.h"

namespace pipeworks::hw {

inline constexpr int kDieAtExitCode = 3;

// Unset: nullopt. Malformed: an error naming the variable.
sched::Result<std::optional<sched::Action>> read_die_at(const EnvLookup& lookup = {});

// Appends the dying identity to the cell of `at.stage` when `at` is F, R or B.
void install_die_at(std::vector<StageCell>& cells, const sched::Action& at, int rank);

// Wraps `inner`: a send/recv of `at` exits the process instead.
std::unique_ptr<Transport> dying_transport(std::unique_ptr<Transport> inner, const sched::Action& at, int rank);

}  // namespace pipeworks::hw
