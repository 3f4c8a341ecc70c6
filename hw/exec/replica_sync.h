// What data parallelism adds to a rank's executor: its stages' gradients reduced over their
// replicas and one optimizer step that leaves every replica with the same parameters. The
// executor calls it at each REDUCE_GRAD of the program and, in the step's second phase, for each
// of its stages (hw/dist/c10d_replica_sync.h reduces over c10d; an executor without one steps its
// own optimizers):
//
//   program   ... B(s,M-1) | REDUCE_GRAD(s): post the reduction | F/B of other stages ...
//   collective              [=========== reduce stage s's gradients ===========]
//   step phase                                               step(s): wait | optimizer | gather
//
// Every replica scales its loss by 1 / (M x replicas()), so the reduction's sum is the mean
// gradient over the whole mini-batch (DDP's gradient pre-division) and each micro-batch's
// gradient is the one the non-pipelined reference computes for it.
#pragma once

#include <chrono>

#include "sched/result.h"

namespace pipeworks::hw {

class ReplicaSync {
 public:
  virtual ~ReplicaSync() = default;
  // How many replicas the gradients are reduced over.
  virtual int replicas() const = 0;
  // REDUCE_GRAD(stage): starts reducing the stage's gradients; returns once it is posted.
  virtual sched::Status reduce_grad(int stage) = 0;
  // After the step's last backward: waits for the stage's reduction (starting it first when the
  // program had no REDUCE_GRAD for it), steps its optimizer and leaves the same parameters on
  // every replica. Returns when the reduction completed (host time), for its span.
  virtual sched::Result<std::chrono::steady_clock::time_point> step(int stage) = 0;
};

}  // namespace pipeworks::hw
