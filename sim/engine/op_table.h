// The simulator's compiled form of a (Schedule, CostModel) pair: one 12-byte record per op with
// its resolved dependencies or transfer partner, and a small table of op classes holding what
// every op of one (stage, kind, variant) shares (kind, duration, resume cost, memory change,
// device, link), so the event loop touches no maps, allocates nothing per action and reads a
// fifth of a cache line per op plus a table that stays in cache. Also where every structural error of the input
// is found (before any time is simulated).
#pragma once

#include <cstdint>
#include <vector>

#include "sched/schedule.h"
#include "sim/engine/cost_model.h"
#include "sim/engine/memory_model.h"
#include "sim/engine/op_costs.h"  // transfer_ns

namespace pipeworks::sim {

// What the ops of one class share. A class is a (stage, kind) and, for compute ops, whether the
// op is its stage's first of the kind with a first-of-step cost, whether its micro-batch is
// re-materialized and whether its backward is split (memory_model.h).
struct OpClass {
  // compute: stage cost + per-action overhead; SEND/RECV: the transfer; UNSHARD, REDUCE_GRAD:
  // the collective (StageCost::unshard_ns, reduce_grad_ns); RESHARD: 0
  Nanoseconds duration_ns = 0;
  // compute: added when it starts after its device idled; SEND: its link's send overhead (the
  // sender's stream held that long before the transfer is ready); REDUCE_GRAD: how long it holds
  // `link` from its start (StageCost::reduce_grad_link_ns); else 0
  Nanoseconds resume_ns = 0;
  // Activation change on the op's device when it ends; UNSHARD: the gathered parameters, held
  // from its start (RESHARD frees them: no delta of its own)
  Bytes memory_delta_bytes = 0;
  std::int32_t device = 0;       // the device whose program holds the ops
  std::int32_t stage = 0;        // compute and stage-level ops: their stage
  std::int32_t link = -1;        // SEND/RECV: index of the cost model's link; REDUCE_GRAD: the one
                                 // its collective shares with the pipeline (-1 none); compute: -1
  // SEND/RECV: 1 when SENDs of more than one device use the link (its transfers are ordered in
  // global time), 0 when one device's SENDs are its only traffic (FIFO in that device's program
  // order, resolved without the event queue).
  std::uint8_t link_shared = 0;
  sched::ActionKind kind = sched::ActionKind::kForward;  // every op of a class has its kind
};

// One op; its kind is its class's. Compute: `dep` and `other` its data dependencies (-1 none; a
// -1 `dep` means none at all), as sched::data_dependencies. SEND: `dep` its producer, `other` its
// RECV. RECV: `dep` -1 (it is paired with its SEND instead), `other` its SEND. REDUCE_GRAD: `dep`
// the last compute op of its stage before it in the program (whose gradients it reduces; -1
// none), `other` -1. UNSHARD, RESHARD: -1, -1.
struct Op {
  std::int32_t dep = -1;
  std::int32_t other = -1;
  std::int32_t op_class = 0;  // index into OpTable::classes
};
static_assert(sizeof(Op) == 12, "12 bytes: the engine is bound by the bytes it streams per op");

// Op ids are dense: device 0's program first, then device 1's, ...
struct OpTable {
  std::vector<Op> ops;
  std::vector<OpClass> classes;
  std::vector<std::int32_t> device_begin;   // ops of device d: [device_begin[d], device_begin[d+1])
  std::vector<StaticMemory> static_memory;  // per device
  std::vector<std::uint8_t> link_shared;    // per link of the cost model, as OpClass::link_shared
  std::int64_t num_transfers = 0;
  std::int64_t num_stage_level = 0;  // UNSHARD, RESHARD and REDUCE_GRAD ops
  bool has_unshard = false;          // some op is an UNSHARD: its stage's computes wait for it
  bool overlap_grad_reduce = true;   // CostModel::overlap_grad_reduce
  std::vector<std::int32_t> reduce_grad_buckets;  // per stage: StageCost::reduce_grad_buckets
  // CostModel::compute_slots, when some group has more devices than slots (else 0: no limit);
  // then each device's group (its contention group, renumbered from 0).
  std::int32_t compute_slots = 0;
  std::vector<std::int32_t> slot_group;
  std::int32_t slot_groups = 0;
  Nanoseconds compute_slice_ns = 0;  // CostModel::compute_slice_ns
  double idle_slowdown = 1;          // CostModel::idle_slowdown
  Nanoseconds idle_slowdown_after_ns = 0;

  std::size_t size() const { return ops.size(); }
  const OpClass& class_of(std::size_t op) const { return classes[static_cast<std::size_t>(ops[op].op_class)]; }
  std::int32_t device(std::size_t op) const { return class_of(op).device; }
  sched::ActionKind kind(std::size_t op) const { return class_of(op).kind; }
  // The j-th data dependency (j = 0, 1) of a compute op or SEND; -1 none.
  std::int32_t dependency(std::size_t op, int j) const;
  // The partner of a SEND/RECV; -1 for compute ops.
  std::int32_t peer(std::size_t op) const;
  // Per class: how many ops it has.
  std::vector<std::int64_t> ops_per_class() const;
};

// Checks the pair (the cost model with check_cost_model, then: stage counts agree, devices exist
// in the cost model, every action is in range, occurs once (stage-level actions, no-ops here, may
// repeat; where they stand is validate's rule) and runs on its stage's device, every dependency
// is present, every SEND has its RECV on another device with a link between them, the sum of all
// durations fits in int64) and compiles it.
sched::Result<OpTable> build_op_table(const sched::Schedule& schedule, const CostModel& model);

}  // namespace pipeworks::sim
