// The simulator's compiled form of a (Schedule, CostModel) pair: flat per-op arrays (structure of
// arrays) with resolved dependencies, transfer peer and link, duration and memory change, so the
// event loop touches no maps and allocates nothing per action. Also where every structural error
// of the input is found (before any time is simulated).
#pragma once

#include <cstdint>
#include <vector>

#include "sched/schedule.h"
#include "sim/cost_model.h"
#include "sim/memory_model.h"

namespace pipeworks::sim {

// Op ids are dense: device 0's program first, then device 1's, ... Every per-op array has one
// entry per op.
struct OpTable {
  std::vector<sched::ActionKind> kind;
  // Two data dependencies per op, flat: dep[2i], dep[2i+1] (op ids; -1 none, the first -1 ends
  // the list). Compute: as sched::data_dependencies. SEND: its producer. RECV: none.
  std::vector<std::int32_t> dep;
  std::vector<std::int32_t> peer;    // SEND <-> RECV partner op id; -1 for compute
  std::vector<std::int32_t> link;    // link index for SEND/RECV; -1 for compute
  std::vector<std::int32_t> device;  // the device whose program holds the op
  std::vector<Nanoseconds> duration_ns;  // compute: stage cost + per-action overhead; SEND/RECV: the transfer
  std::vector<Nanoseconds> resume_ns;    // compute: added when it starts after its device idled; else 0
  std::vector<Bytes> memory_delta_bytes;  // activation change on the op's device when it ends

  std::vector<std::int32_t> device_begin;   // ops of device d: [device_begin[d], device_begin[d+1])
  std::vector<StaticMemory> static_memory;  // per device
  // Per link of the cost model: 1 when SENDs of more than one device use it (their transfers
  // must be ordered in global time); 0 when one device's SENDs are its only traffic (FIFO in
  // that device's program order, resolved without the event queue).
  std::vector<std::uint8_t> link_shared;
  std::int64_t num_transfers = 0;

  std::size_t size() const { return kind.size(); }
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
