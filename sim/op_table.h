// The simulator's compiled form of a (Schedule, CostModel) pair: one flat record per action with
// its resolved dependencies, transfer peer and link, duration and memory change, so the event
// loop touches no maps and allocates nothing per action. Also where every structural error of
// the input is found (before any time is simulated).
#pragma once

#include <cstdint>
#include <vector>

#include "sched/schedule.h"
#include "sim/cost_model.h"
#include "sim/memory_model.h"

namespace pipeworks::sim {

// One action of the schedule. Op ids are dense: device 0's program first, then device 1's, ...
struct Op {
  std::int32_t dep[2] = {-1, -1};  // data dependencies (op ids; -1 none). SEND: its producer. RECV: none
  std::int32_t peer = -1;          // SEND <-> RECV partner op id; -1 for compute
  std::int32_t link = -1;          // link index for SEND/RECV; -1 for compute
  std::int32_t device = 0;
  sched::ActionKind kind = sched::ActionKind::kForward;
  Nanoseconds duration_ns = 0;  // compute: stage cost + per-action overhead; SEND/RECV: the transfer
  Bytes memory_delta_bytes = 0;  // activation change on `device` when the op ends
};

struct OpTable {
  std::vector<Op> ops;
  std::vector<std::int32_t> device_begin;  // ops of device d: [device_begin[d], device_begin[d+1])
  std::vector<StaticMemory> static_memory;  // per device
  std::int64_t num_transfers = 0;
};

// Time of one transfer of `bytes` over `link`: latency + ceil(bytes * 1e9 / bandwidth), exact for
// integral bandwidths. Fails when the result would exceed the simulator's time range.
sched::Result<Nanoseconds> transfer_ns(const Link& link, Bytes bytes);

// Checks the pair (the cost model with check_cost_model, then: stage counts agree, devices exist
// in the cost model, every action is in range, occurs once and runs on its stage's device,
// every dependency is present, every SEND has its RECV on another device with a link between
// them, the sum of all durations fits in int64) and compiles it.
sched::Result<OpTable> build_op_table(const sched::Schedule& schedule, const CostModel& model);

}  // namespace pipeworks::sim
